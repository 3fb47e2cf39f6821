import assert from "node:assert/strict";
import { configureLogging } from "../logging/configure.ts";
import type { Lease } from "../model/lease.ts";
import { LeaderElectionSettings } from "../settings/leader_election.ts";
import { WatchingSettings } from "../settings/watching.ts";
import { FakeApi, json } from "../../tests/support/fake_api.ts";
import { eventually } from "../../tests/support/eventually.ts";
import { LeaderElector } from "./leader_election.ts";

const LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/ns/leases/kopf";
const COLLECTION = "/apis/coordination.k8s.io/v1/namespaces/ns/leases";

function settings(overrides: Partial<LeaderElectionSettings> = {}): LeaderElectionSettings {
  return Object.assign(new LeaderElectionSettings(), {
    enabled: true,
    leaseNamespace: "ns",
    leaseDuration: 1,
    renewDeadline: 0.5,
    retryPeriod: 0.1,
  }, overrides);
}

function watching(): WatchingSettings {
  return Object.assign(new WatchingSettings(), { reconnectBackoff: 0.05, reconnectBackoffMax: 0.2 });
}

function forbidden(): Response {
  return json(
    { kind: "Status", status: "Failure", reason: "Forbidden", code: 403, message: "leases is forbidden" },
    403,
  );
}

Deno.test("durations that make no sense are refused with the setting to fix", () => {
  const api = { client: undefined as never };
  assert.throws(
    () =>
      LeaderElector.start({
        client: api.client,
        settings: settings({ renewDeadline: 1, leaseDuration: 1 }),
        watching: watching(),
        identity: "me",
        onChange: () => {},
      }),
    /needs leaseDuration > renewDeadline > retryPeriod > 0 \(seconds\), but they are 1 > 1 > 0.1:/,
  );
  assert.throws(
    () =>
      LeaderElector.start({
        client: api.client,
        settings: settings({ retryPeriod: 0 }),
        watching: watching(),
        identity: "me",
        onChange: () => {},
      }),
    /but they are 1 > 0.5 > 0: e\.g\. 15, 10 and 2/,
  );
});

Deno.test("without a namespace, the Lease is in the pod's namespace, else in default", async () => {
  await using api = new FakeApi(() => forbidden());
  const controller = new AbortController();
  controller.abort();
  const elector = LeaderElector.start({
    client: api.client,
    settings: settings({ leaseNamespace: null, leaseName: "my-operator" }),
    watching: watching(),
    identity: "me",
    onChange: () => {},
    signal: controller.signal,
  });
  let expected = "default";
  try {
    expected = Deno.readTextFileSync("/var/run/secrets/kubernetes.io/serviceaccount/namespace").trim() || "default";
  } catch {
    // Not in a pod: the fallback.
  }
  assert.equal(elector.lease, `${expected}/my-operator`);
  await elector.close();
  assert.equal(api.requests.length, 0, "an elector started with an aborted signal sent requests");
});

Deno.test("403: one error log naming the missing RBAC rule, retries every retryPeriod, no leadership", async () => {
  const lines: string[] = [];
  await configureLogging({ format: "full", level: "debug", write: (line) => lines.push(line) });
  await using api = new FakeApi(() => forbidden());
  const changes: boolean[] = [];
  const elector = LeaderElector.start({
    client: api.client,
    settings: settings(),
    watching: watching(),
    identity: "me",
    onChange: (leading) => changes.push(leading),
  });
  try {
    const gets = () => api.requests.filter((url) => url.pathname === LEASE_PATH).length;
    await eventually("several reads of the Lease", () => gets() >= 4);
    assert.equal(elector.leading, false);
    assert.deepEqual(changes, []);
    const rbac = lines.filter((line) => line.includes("RBAC forbids"));
    assert.equal(rbac.length, 1, `expected one RBAC error, got:\n${rbac.join("\n")}`);
    assert.match(rbac[0], /get, list, watch, create, update on leases\.coordination\.k8s\.io in the namespace ns/);
    assert.match(rbac[0], /\[ERROR/);
  } finally {
    await elector.close();
    await configureLogging({ level: "warning", write: () => {} });
  }
});

/**
 * A Lease held by "other" that the watch cannot deliver (LIST fails with 500), readable by GET,
 * and replaceable with its resourceVersion.
 */
class BrokenWatchLeases {
  lease: Lease = {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: "kopf", namespace: "ns", resourceVersion: "10" },
    spec: { holderIdentity: "other", leaseDurationSeconds: 1, leaseTransitions: 3 },
  };
  readonly puts: Lease[] = [];

  async handle(request: Request, url: URL): Promise<Response> {
    if (url.pathname === COLLECTION) {
      return json({ kind: "Status", code: 500, message: "the watch cache is broken" }, 500);
    }
    if (url.pathname !== LEASE_PATH) return json({ kind: "Status", code: 404 }, 404);
    if (request.method === "GET") return json(this.lease);
    if (request.method === "PUT") {
      const body = await request.json() as Lease;
      this.puts.push(body);
      if (body.metadata.resourceVersion !== this.lease.metadata.resourceVersion) {
        return json({ kind: "Status", code: 409, reason: "Conflict" }, 409);
      }
      const version = String(Number(this.lease.metadata.resourceVersion) + 1);
      this.lease = { ...body, metadata: { ...body.metadata, resourceVersion: version } };
      return json(this.lease);
    }
    return json({ kind: "Status", code: 405 }, 405);
  }
}

Deno.test("with the watch failing, a standby polls the Lease and takes it when it expires by its own clock", async () => {
  const server = new BrokenWatchLeases();
  await using api = new FakeApi((request, url) => server.handle(request, url));
  const changes: boolean[] = [];
  const elector = LeaderElector.start({
    client: api.client,
    settings: settings({ leaseDuration: 1.5, renewDeadline: 1 }),
    watching: watching(),
    identity: "me",
    onChange: (leading) => changes.push(leading),
  });
  try {
    await eventually("the elector to lead", () => elector.leading);
    assert.deepEqual(changes, [true]);
    const reads = api.requests.filter((url) => url.pathname === LEASE_PATH).length;
    assert.ok(reads >= 2, `the standby read the Lease ${reads} times: it did not poll`);
    const taking = server.puts[0];
    assert.equal(taking.metadata.resourceVersion, "10", "the takeover did not carry the resourceVersion seen");
    assert.equal(taking.spec?.holderIdentity, "me");
    assert.equal(taking.spec?.leaseTransitions, 4);
    assert.equal(taking.spec?.leaseDurationSeconds, 2);
    // The leader renews with the resourceVersion of its own last write.
    await eventually("a renewal", () => server.puts.length >= 3);
    assert.equal(server.puts[1].metadata.resourceVersion, "11");
    assert.equal(server.puts[1].spec?.holderIdentity, "me");
    assert.notEqual(server.puts[1].spec?.renewTime, taking.spec?.renewTime);
  } finally {
    await elector.close();
  }
  // The release: no holder, a 1-second duration.
  const release = server.puts.at(-1)!;
  assert.equal(release.spec?.holderIdentity, "");
  assert.equal(release.spec?.leaseDurationSeconds, 1);
  assert.deepEqual(changes, [true, false]);
});

Deno.test("a leader whose renewals keep failing steps down after renewDeadline and says why", async () => {
  const lines: string[] = [];
  await configureLogging({ format: "plain", level: "debug", write: (line) => lines.push(line) });
  const server = new BrokenWatchLeases();
  server.lease.spec = { holderIdentity: "" };
  let failing = false;
  await using api = new FakeApi((request, url) => {
    if (failing && request.method === "PUT") return json({ kind: "Status", code: 422, message: "no" }, 422);
    return server.handle(request, url);
  });
  const changes: boolean[] = [];
  const elector = LeaderElector.start({
    client: api.client,
    settings: settings(),
    watching: watching(),
    identity: "me",
    onChange: (leading) => changes.push(leading),
  });
  try {
    await eventually("the elector to lead", () => elector.leading);
    failing = true;
    await eventually("the elector to step down", () => changes.length >= 2);
    assert.deepEqual(changes.slice(0, 2), [true, false]);
    assert.ok(lines.some((line) => /Lost the leadership .*no renewal succeeded/.test(line)), lines.join("\n"));
  } finally {
    await elector.close();
    await configureLogging({ level: "warning", write: () => {} });
  }
});
