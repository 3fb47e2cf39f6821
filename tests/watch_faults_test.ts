/**
 * Watch streams and liveness under injected faults (issue 11, defects 3–6), against the real API
 * server behind the fault proxy (tests/support/fault_proxy.ts): a storm of watch ERROR events
 * backs off and is logged at a bounded rate; liveness turns 500 during a freeze and an ERROR
 * storm and 200 after; a wrong CA is diagnosed once at error level with liveness 500. The
 * assertions count requests, log lines and status codes; the waits are bounded.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { Watcher, type WatchEvent } from "../src/api/watching.ts";
import { createSelfSignedCertificates } from "../src/kits/certificates.ts";
import { renderKubeconfig } from "../src/kits/local_cluster/kubeconfig.ts";
import { WatchingSettings } from "../src/settings/watching.ts";
import { createExample, freshNamespace, KOPFEXAMPLES, settle, testCluster } from "./support/cluster.ts";
import { freePort, getJson } from "./support/environment.ts";
import { FaultProxy } from "./support/fault_proxy.ts";
import { LivenessSampler } from "./support/liveness_sampler.ts";
import { captureLogs } from "./support/logs.ts";
import { runOperator } from "./support/operator.ts";
import { eventually } from "./support/eventually.ts";

/** The proxy in front of the shared cluster, and a kubeconfig through it. */
async function proxied(): Promise<{ proxy: FaultProxy; kubeconfig: string }> {
  const { credentials } = await testCluster();
  const proxy = await FaultProxy.start({ server: credentials.server, caCert: credentials.tls.caCerts![0] });
  return { proxy, kubeconfig: await proxy.writeKubeconfig(await bearerToken()) };
}

/**
 * A Watcher of kopfexamples in `namespace` (default settings unless given) through a fresh fault proxy, collecting its
 * events; returned once the listing is done and a watch request is open. Disposing stops the stream and
 * then the proxy.
 */
async function watchThroughProxy(
  namespace: string,
  settings: WatchingSettings = new WatchingSettings(),
): Promise<{ proxy: FaultProxy; watcher: Watcher; events: WatchEvent[] } & AsyncDisposable> {
  const { proxy, kubeconfig } = await proxied();
  const watching = new ApiClient(await loadKubeconfig({ path: kubeconfig }));
  const controller = new AbortController();
  const watcher = new Watcher(watching, KOPFEXAMPLES, {
    namespace,
    settings,
    signal: controller.signal,
  });
  const events: WatchEvent[] = [];
  const done = (async () => {
    for await (const event of watcher) events.push(event);
  })();
  const stop = async () => {
    controller.abort();
    await done;
    watching.close();
    await proxy[Symbol.asyncDispose]();
  };
  try {
    await eventually("the listing", () => events.some((event) => event.type === "LISTED") || undefined);
    await eventually("an open watch request", () => proxy.count({ watch: true, status: 200 }) > 0 || undefined);
  } catch (error) {
    await stop();
    throw error;
  }
  return { proxy, watcher, events, [Symbol.asyncDispose]: stop };
}

/** Waits up to `seconds` for the stream's ADDED event of the object `name`. */
async function waitForAdded(events: WatchEvent[], name: string, what: string, seconds: number): Promise<void> {
  await eventually(
    what,
    () => events.some((event) => event.type === "ADDED" && event.object.metadata.name === name) || undefined,
    { seconds: seconds },
  );
}

async function bearerToken(): Promise<string> {
  const { credentials } = await testCluster();
  return (await credentials.authorization())!.replace(/^Bearer /, "");
}

Deno.test("a storm of watch ERROR events backs off and is logged at a bounded rate, then the stream recovers (issue 11.3)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "errstorm");
  const lines = await captureLogs("full");
  await using stream = await watchThroughProxy(namespace);
  const { proxy, watcher, events } = stream;
  proxy.set({ kind: "watchErrors" });
  const from = Date.now();
  await settle(20);
  const to = Date.now();
  const reconnects = proxy.count({ watch: true, from, to });
  const warnings = lines.filter((line) => /\[WARNING \]/.test(line) && /The stream of kopfexamples/.test(line)).length;
  // Without a growing backoff this is 100–200 (a reconnect every 0.1–0.2 s), with a WARNING each.
  assert.ok(reconnects >= 3, `it keeps trying: ${reconnects}`);
  assert.ok(reconnects <= 25, `reconnects in 20 s of ERROR events: ${reconnects}`);
  assert.ok(warnings >= 1 && warnings <= 2, `warnings in 20 s: ${warnings}\n${lines.join("\n")}`);
  assert.ok(watcher.health.failures >= 3, `a run of failures: ${watcher.health.failures}`);

  proxy.set({ kind: "forward" });
  await createExample(client, namespace, "after-storm");
  await waitForAdded(events, "after-storm", "the object created after the storm", 30);
  assert.equal(watcher.health.failures, 0, "the run of failures ends with an event");
});

Deno.test("after each of three 20-s outages (503 to everything) the stream resumes within 12 s (issue 11.5)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "outages");
  await using stream = await watchThroughProxy(namespace);
  const { proxy, events } = stream;
  const resumed: string[] = [];
  for (const round of [1, 2, 3]) {
    proxy.set({ kind: "fail" });
    await settle(20);
    proxy.set({ kind: "forward" });
    const name = `after-outage-${round}`;
    await createExample(client, namespace, name);
    // A pause that grew to 12.8–25.6 s during the outage would sleep past this bound; half the outage does not.
    await waitForAdded(events, name, `the object created after outage ${round}`, 12);
    resumed.push(name);
    await settle(15);
  }
  assert.deepEqual(resumed, ["after-outage-1", "after-outage-2", "after-outage-3"]);
  assert.ok(proxy.count({ watch: true, status: 503 }) >= 3, "the outages were met by watch requests");
});

Deno.test("429 with Retry-After is honoured and 403 backs off like any failure, then the stream recovers (issue 11.3)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "throttle");
  await using stream = await watchThroughProxy(namespace);
  const { proxy, watcher, events } = stream;
  proxy.set({ kind: "throttle", retryAfter: 5 });
  let from = Date.now();
  await settle(15);
  const throttled = proxy.count({ watch: true, from, to: Date.now() });
  // Retry-After: 5 leaves room for 3 or 4 attempts in 15 s; the Status' details alone would say 1 s.
  assert.ok(throttled >= 2 && throttled <= 4, `watch requests in 15 s of 429 with Retry-After 5: ${throttled}`);

  proxy.set({ kind: "forbid" });
  from = Date.now();
  await settle(15);
  const forbidden = proxy.count({ watch: true, from, to: Date.now() });
  assert.ok(forbidden >= 1 && forbidden <= 6, `watch requests in 15 s of 403: ${forbidden}`);
  assert.match(String(watcher.health.lastError), /403/);

  proxy.set({ kind: "forward" });
  await createExample(client, namespace, "after-throttling");
  await waitForAdded(events, "after-throttling", "the object created after the faults", 30);
});

Deno.test("with serverTimeout, a frozen watch request is resumed once the server should have ended it, not after inactivityTimeout", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "frozen");
  const settings = new WatchingSettings();
  settings.serverTimeout = 3;
  settings.inactivityTimeout = 300;
  await using stream = await watchThroughProxy(namespace, settings);
  const { proxy, watcher, events } = stream;
  // The open request gets no more bytes, also after the freeze: only the client can end it.
  proxy.set({ kind: "freeze" });
  await settle(2);
  proxy.set({ kind: "forward" });
  await createExample(client, namespace, "after-freeze");
  // The bound is serverTimeout + 10 s; with inactivityTimeout alone the object comes after 300 s.
  await waitForAdded(events, "after-freeze", "the object created after the freeze", 60);
  assert.equal(watcher.health.stalls, 1, "one stall");
});

Deno.test("liveness answers 500 during a freeze and an ERROR storm, naming the stream and why, and 200 after each (issue 11.4)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "liveflow");
  const { proxy, kubeconfig } = await proxied();
  await using _proxy = proxy;
  const registry = new kopf.Registry();
  kopf.on.event("kopfexamples", { registry }, function seen() {});
  const settings = new kopf.Settings();
  // A quiet stream's signs of life: the server ends each watch after 2 s, well within the 6 s bound.
  settings.watching.serverTimeout = 2;
  settings.watching.unhealthyAfter = 6;
  settings.watching.inactivityTimeout = 20; // stall detection alone would notice a freeze only after 20 s
  settings.watching.connectTimeout = 3;
  settings.watching.reconnectBackoffMax = 2;
  const operator = await runOperator(registry, namespace, {
    credentials: await loadKubeconfig({ path: kubeconfig }),
    settings,
    liveness: "http://127.0.0.1:0/healthz",
  });
  const name = `kopfexamples.v1.kopf.dev in ${namespace}`;
  await using sampler = new LivenessSampler(operator.running.liveness!);
  try {
    await settle(8);
    assert.ok(sampler.samples.every((answer) => answer.status === 200), "a quiet stream stays healthy");

    for (const fault of [{ kind: "freeze" }, { kind: "watchErrors" }] as const) {
      const from = Date.now();
      proxy.set(fault);
      await settle(16);
      const during = sampler.samples.filter((answer) => answer.at >= from);
      const red = during.filter((answer) => answer.status === 500);
      // Without the silence and failure checks the endpoint stays 200 through both faults.
      assert.ok(red.length >= 3, `${fault.kind}: 500s in 16 s: ${red.length} of ${during.length}`);
      const body = JSON.parse(red.at(-1)!.body!) as { error: string; streams: Record<string, { reason: string }> };
      assert.deepEqual(Object.keys(body.streams), [name], JSON.stringify(body));
      assert.match(body.error, new RegExp(`${namespace}: (failing|silent) for \\d+ s`));
      proxy.set({ kind: "forward" });
      const back = Date.now();
      await eventually(
        `${fault.kind}: liveness 200 again`,
        async () => (await getJson(operator.running.liveness!)).status === 200 || undefined,
        { seconds: 40 },
      );
      await settle(4);
      const after = sampler.samples.filter((answer) => answer.at >= back + 1000);
      assert.equal(after.at(-1)?.status, 200, `${fault.kind}: stays green after the recovery`);
    }
  } finally {
    await operator.stop();
  }
});

Deno.test("liveness answers 500 when every watch request is held open for longer than backoffResetAfter and then ends in an ERROR event, and 200 after (issue 19)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "held-errors");
  const { proxy, kubeconfig } = await proxied();
  await using _proxy = proxy;
  const registry = new kopf.Registry();
  kopf.on.event("kopfexamples", { registry }, function seen() {});
  const settings = new kopf.Settings();
  settings.watching.serverTimeout = 3; // a quiet stream's signs of life: the server ends each watch after 3 s
  settings.watching.unhealthyAfter = 10;
  const operator = await runOperator(registry, namespace, {
    credentials: await loadKubeconfig({ path: kubeconfig }),
    settings,
    liveness: "http://127.0.0.1:0/healthz",
  });
  const url = operator.running.liveness!;
  try {
    await settle(4);
    assert.equal((await getJson(url)).status, 200, "a quiet stream is healthy");
    // Each watch request is answered, held for 6 s (longer than backoffResetAfter, 5 s), then ends in an ERROR.
    const from = Date.now();
    proxy.set({ kind: "watchErrors", after: 6 });
    const answer = await eventually("a 500 from the liveness endpoint", async () => {
      const answer = await getJson(url);
      return answer.status === 500 ? answer : undefined;
    }, { seconds: 60 });
    assert.ok(proxy.count({ watch: true, from }) >= 2, "the stream went on reconnecting");
    const streams = answer.body.streams as Record<string, { reason: string; lastError: string }>;
    const name = `kopfexamples.v1.kopf.dev in ${namespace}`;
    assert.deepEqual(Object.keys(streams), [name], JSON.stringify(answer.body));
    assert.equal(streams[name].reason, "failing");
    assert.match(streams[name].lastError, /error in the stream: 500/);

    proxy.set({ kind: "forward" });
    await eventually("liveness 200 again", async () => (await getJson(url)).status === 200 || undefined, {
      seconds: 60,
    });
  } finally {
    await operator.stop();
  }
});

Deno.test("a kubeconfig with the wrong CA: one ERROR saying what is wrong and what to do, liveness 500, no flood (issue 11.6)", async () => {
  const { credentials } = await testCluster();
  const { ca } = await createSelfSignedCertificates(["127.0.0.1"], { caName: "not-the-cluster-ca" });
  const path = await Deno.makeTempFile({ suffix: ".kubeconfig" });
  await Deno.writeTextFile(
    path,
    renderKubeconfig({ server: credentials.server, caCert: ca, token: await bearerToken() }),
  );
  const lines = await captureLogs("full");
  const registry = new kopf.Registry();
  kopf.on.event("kopfexamples", { registry }, function seen() {});
  const settings = new kopf.Settings();
  settings.networking.errorBackoffs = Array(12).fill(1); // 12 s of retries, one a second
  const controller = new AbortController();
  const liveness = `http://127.0.0.1:${freePort()}/healthz`;
  const running = kopf.operator({
    registry,
    credentials: await loadKubeconfig({ path }),
    namespaces: ["default"],
    standalone: true,
    settings,
    liveness,
    signal: controller.signal,
  }).catch((error: unknown) => error);
  try {
    const answer = await eventually("a 500 from the liveness endpoint", async () => {
      try {
        const answer = await getJson(liveness);
        return answer.status === 500 ? answer : undefined;
      } catch {
        return undefined; // not listening yet
      }
    }, { seconds: 20 });
    assert.match(answer.body.error as string, /not signed by the CA/);
    await settle(8);
    const errors = lines.filter((line) =>
      /\[ERROR {3}\]/.test(line) && /not signed by the CA that .* trusts/.test(line)
    );
    assert.ok(errors.length >= 1, lines.join("\n"));
    assert.match(errors[0], /certificate-authority-data/, "says what to do");
    const retries = lines.filter((line) =>
      /UnknownIssuer|not signed by the CA/.test(line) && /\[(WARNING |ERROR {3})\]/.test(line)
    );
    // Without the diagnosis: a WARNING per retry of each discovery request (2 a second here).
    assert.ok(retries.length <= 3, `lines about the certificate in ~10 s: ${retries.length}\n${retries.join("\n")}`);
  } finally {
    controller.abort();
    await running;
  }
});
