/**
 * Peering end to end: `kopf run` processes against the shared cluster with the peering CRDs of
 * peering.yaml — keep-alive records, auto-detection, mandatory peering, priorities and `--dev`,
 * operators of the same priority pausing together, `kopf freeze`/`kopf resume` pausing a running
 * operator (its daemons stop, objects created meanwhile are handled after), separate peering
 * names, standalone operators, and the `settings.peering` group.
 *
 * Every test uses its own namespace or peering name, and removes the cluster-wide peering
 * objects it creates.
 */

import assert from "node:assert/strict";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { formatLastseen } from "../src/model/peering.ts";
import {
  createExample,
  freshNamespace,
  getExample,
  KOPFEXAMPLES,
  testCluster,
  waitForStatus,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { KopfProcess, runKopf } from "./support/kopf_process.ts";
import {
  applyPeeringCrds,
  createPeering,
  deletePeering,
  deletePeeringCrds,
  freshPeeringName,
  peeringStatus,
} from "./support/peering.ts";

const HANDLERS = "tests/fixtures/replicas/handlers.ts";

/** Starts `kopf run --verbose <args…> handlers.ts` with a fixed identity (POD_ID). */
function operator(identity: string, args: string[], env: Record<string, string> = {}): Promise<KopfProcess> {
  return KopfProcess.command(["run", "--verbose", ...args, HANDLERS], { POD_ID: identity, ...env });
}

/** Runs `kopf freeze …` or `kopf resume …` to completion; fails the test unless it exits 0. */
async function kopfCommand(args: string[]): Promise<void> {
  const { kubeconfig } = await testCluster();
  const result = await runKopf(args, { KUBECONFIG: kubeconfig, POD_ID: "freezer" });
  assert.equal(result.code, 0, result.stderr);
}

/** Whether a process has logged the success of the creation handler for the object. */
function handledBy(process: KopfProcess, name: string): boolean {
  return process.lines.some((line) => isSuccess(line, name));
}

function isSuccess(line: string, name: string): boolean {
  return line.includes(`/${name}] Handler 'createFn' succeeded.`);
}

/**
 * Waits until the process has handled the object, and asserts that it did so once and only after
 * it resumed: nothing was handled while it was paused (its log lines are in the order they came).
 */
async function assertHandledAfterResuming(process: KopfProcess, name: string): Promise<void> {
  await eventually(`the success line of ${name}`, () => handledBy(process, name));
  const resumed = process.lines.findIndex((line) => line.includes("Resuming operations"));
  const handled = process.lines.flatMap((line, index) => isSuccess(line, name) ? [index] : []);
  assert.equal(handled.length, 1, process.output);
  assert.ok(resumed >= 0 && handled[0] > resumed, `handled before resuming:\n${process.output}`);
}

/** Asserts that no operator has touched the object: no status, no finalizer, no Kopf annotation. */
async function assertUntouched(namespace: string, name: string): Promise<void> {
  const { client } = await testCluster();
  const body = await getExample(client, namespace, name);
  assert.equal(body.status, undefined, JSON.stringify(body));
  assert.equal(body.metadata.finalizers, undefined, JSON.stringify(body));
  const annotations = Object.keys(body.metadata.annotations ?? {});
  assert.ok(!annotations.some((key) => key.startsWith("kopf.zalando.org/")), JSON.stringify(body));
}

/** Creates a kopfexample with the label that the fixture's cluster-wide handlers select. */
async function createLabelled(namespace: string, name: string, label: string): Promise<void> {
  const { client } = await testCluster();
  await client.request<KubernetesObject>({
    method: "POST",
    path: resourcePath(KOPFEXAMPLES, { namespace }),
    body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name, labels: { test: label } }, spec: {} },
  });
}

/** A peer record of another operator, alive for a minute from now. */
function liveRecord(priority: number): Record<string, unknown> {
  return { priority, lifetime: 60, lastseen: formatLastseen(new Date()) };
}

Deno.test("without the peering CRDs a non-standalone operator runs normally and sends no keep-alives", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-nocrd");
  await deletePeeringCrds();
  try {
    await using kopf = await operator("op-nocrd", ["--debug", "-n", namespace]);
    await createExample(client, namespace, "nocrd-1");
    await waitForStatus(namespace, "nocrd-1", "createFn");
    await kopf.stop();
    assert.ok(!kopf.lines.some((line) => /Keep-alive|Pausing/.test(line)), kopf.output);
  } finally {
    await applyPeeringCrds();
  }
});

Deno.test("with the CRDs but no peering object, the operator runs normally; its keep-alive finds nothing", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-noobj");
  await applyPeeringCrds();
  await using kopf = await operator("op-noobj", ["-n", namespace]);
  await kopf.waitForLine(new RegExp(`Keep-alive in 'default' in '${namespace}': not found\\.`));
  await createExample(client, namespace, "noobj-1");
  await waitForStatus(namespace, "noobj-1", "createFn");
});

Deno.test("kopf run -A writes its record {priority 0, lifetime 60, lastseen} on the ClusterKopfPeering 'default' and removes it on SIGTERM", async () => {
  await createPeering(null, { name: "default" });
  try {
    const label = freshPeeringName("label");
    await using kopf = await operator("op-default", ["-A"], { KOPF_TEST_LABEL: label });
    const record = await eventually(
      "the operator's record",
      async () => (await peeringStatus(null, "default"))["op-default"],
    );
    const { priority, lifetime, lastseen } = record as Record<string, unknown>;
    assert.equal(priority, 0);
    assert.equal(lifetime, 60);
    assert.match(String(lastseen), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/);
    await kopf.waitForLine(/Keep-alive in 'default' cluster-wide: ok\./);
    const status = await kopf.stop();
    assert.equal(status.code, 0, kopf.output);
    assert.equal((await peeringStatus(null, "default"))["op-default"], undefined);
  } finally {
    await deletePeering(null, "default");
  }
});

Deno.test("--peering NAME without the object: nothing is handled until it is created", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-mandatory");
  const name = freshPeeringName();
  await applyPeeringCrds();
  await using kopf = await operator("op-mandatory", ["-n", namespace, "-P", name]);
  await kopf.waitForLine(new RegExp(`KopfPeering "${name}" in namespace "${namespace}" does not exist`));
  await createExample(client, namespace, "mandatory-1");
  await assertUntouched(namespace, "mandatory-1");
  await createPeering(namespace, { name });
  await waitForStatus(namespace, "mandatory-1", "createFn");
  await assertHandledAfterResuming(kopf, "mandatory-1");
  assert.ok((await peeringStatus(namespace, name))["op-mandatory"], "a keep-alive record once the object exists");
});

Deno.test("without POD_ID the record is keyed by the identity the operator makes: <user>@<host>/<time>/<3 characters>", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-madeid");
  const name = freshPeeringName();
  await applyPeeringCrds();
  await createPeering(namespace, { name });
  await using _kopf = await KopfProcess.command(["run", "-n", namespace, "-P", name, HANDLERS], {
    POD_ID: "",
    USER: "tester",
  });
  const keys = await eventually("the operator's keep-alive record", async () => {
    const found = Object.keys(await peeringStatus(namespace, name));
    return found.length ? found : undefined;
  });
  assert.equal(keys.length, 1, JSON.stringify(keys));
  assert.match(keys[0], /^tester@[^/]+\/\d{14}\/[a-z0-9]{3}$/);
});

Deno.test("settings.peering.mandatory at startup: paused while the peering object is missing", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-mandset");
  await applyPeeringCrds();
  await using kopf = await operator("op-mandset", ["-n", namespace], { KOPF_TEST_PEERING_MANDATORY: "1" });
  await kopf.waitForLine(new RegExp(`KopfPeering "default" in namespace "${namespace}" does not exist`));
  await createExample(client, namespace, "mandset-1");
  await assertUntouched(namespace, "mandset-1");
  await createPeering(namespace, { name: "default" });
  await waitForStatus(namespace, "mandset-1", "createFn");
  await assertHandledAfterResuming(kopf, "mandset-1");
});

Deno.test("priorities: only the --dev operator handles objects; when it stops, the priority-0 one resumes", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-prio");
  const name = await createPeering(namespace);
  await using low = await operator("op-low", ["-n", namespace, "-P", name, "-p", "0"]);
  await using dev = await operator("op-dev", ["-n", namespace, "-P", name, "--dev"]);
  await low.waitForLine(/Pausing operations in favour of \[.*op-dev.*\]/);
  const record = await eventually(
    "the dev operator's record",
    async () => (await peeringStatus(namespace, name))["op-dev"],
  );
  assert.equal((record as { priority: number }).priority, 666);
  await createExample(client, namespace, "prio-1");
  await waitForStatus(namespace, "prio-1", "createFn");
  await eventually("the dev operator's success line", () => handledBy(dev, "prio-1") || undefined);
  assert.ok(!handledBy(low, "prio-1"), low.output);
  assert.equal((await dev.stop()).code, 0, dev.output);
  await low.waitForLine(/Resuming operations/);
  await createExample(client, namespace, "prio-2");
  await waitForStatus(namespace, "prio-2", "createFn");
  // The operator writes its log in batches (within 50 ms): the line may follow the status by a moment.
  await eventually("the low operator's success line", () => handledBy(low, "prio-2") || undefined);
});

Deno.test("the same priority: both operators pause with warnings; when one stops, the other resumes", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-same");
  const name = await createPeering(namespace);
  await using first = await operator("op-first", ["-n", namespace, "-P", name]);
  await first.waitForLine(/Keep-alive in .*: ok\./);
  await using second = await operator("op-second", ["-n", namespace, "-P", name]);
  for (const kopf of [first, second]) {
    await kopf.waitForLine(/Possibly conflicting operators with the same priority/);
    await kopf.waitForLine(/Pausing all operators, including self/);
  }
  await createExample(client, namespace, "same-1");
  await assertUntouched(namespace, "same-1");
  await second.stop();
  await first.waitForLine(/Resuming operations/);
  await waitForStatus(namespace, "same-1", "createFn");
  await assertHandledAfterResuming(first, "same-1");
  assert.ok(!handledBy(second, "same-1"), second.output);
});

Deno.test("kopf freeze pauses a running operator (its daemons stop with operatorPausing); kopf resume resumes it and objects created meanwhile are handled", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-freeze");
  const name = await createPeering(namespace);
  await using kopf = await operator("op-frozen", ["-n", namespace, "-P", name]);
  await createExample(client, namespace, "freeze-1");
  await waitForStatus(namespace, "freeze-1", "createFn");
  await kopf.waitForLine(/Daemon 'watcher' has started for freeze-1\./);

  await kopfCommand(["freeze", "-n", namespace, "-P", name, "--lifetime", "600"]);
  await kopf.waitForLine(/Pausing operations in favour of \[.*freezer.*\]/);
  await kopf.waitForLine(/Daemon 'watcher' has stopped for freeze-1: operatorPausing\./);
  await createExample(client, namespace, "freeze-2");
  await assertUntouched(namespace, "freeze-2");

  await kopfCommand(["resume", "-n", namespace, "-P", name]);
  await kopf.waitForLine(/Resuming operations/);
  await waitForStatus(namespace, "freeze-2", "createFn");
  await kopf.waitForLine(/Daemon 'watcher' has started for freeze-2\./);
  await assertHandledAfterResuming(kopf, "freeze-2");
});

Deno.test("separate peering names never pause each other: both operators handle the object", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-apart");
  const a = await createPeering(namespace);
  const b = await createPeering(namespace);
  // Each keeps its own state on the objects, so that each handles every object whatever the order.
  await using first = await operator("op-a", ["-n", namespace, "-P", a], { KOPF_TEST_PREFIX: "a.kopf.test" });
  await using second = await operator("op-b", ["-n", namespace, "-P", b], { KOPF_TEST_PREFIX: "b.kopf.test" });
  await first.waitForLine(/Keep-alive in .*: ok\./);
  await second.waitForLine(/Keep-alive in .*: ok\./);
  await createExample(client, namespace, "apart-1");
  await eventually(
    "both operators' success lines",
    () => handledBy(first, "apart-1") && handledBy(second, "apart-1") || undefined,
  );
  assert.ok(![...first.lines, ...second.lines].some((line) => /Pausing/.test(line)));
});

Deno.test("--standalone: no record on the peering object, never paused by a higher priority", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-alone");
  await createPeering(namespace, { name: "default", status: { "op-high": liveRecord(1000) } });
  await using kopf = await operator("op-alone", ["-n", namespace, "--standalone"]);
  await createExample(client, namespace, "alone-1");
  await waitForStatus(namespace, "alone-1", "createFn");
  assert.deepEqual(Object.keys(await peeringStatus(namespace, "default")), ["op-high"]);
  assert.ok(!kopf.lines.some((line) => /Keep-alive|Pausing/.test(line)), kopf.output);
});

Deno.test("no per-object locking: two standalone operators both run the creation handler", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-twice");
  // Each keeps its own state on the objects (with shared state, whichever records its success first leaves
  // the other nothing to do, so double handling is only likely, not certain).
  await using first = await operator("op-one", ["-n", namespace, "--standalone"], {
    KOPF_TEST_PREFIX: "one.kopf.test",
  });
  await using second = await operator("op-two", ["-n", namespace, "--standalone"], {
    KOPF_TEST_PREFIX: "two.kopf.test",
  });
  await createExample(client, namespace, "twice-1");
  await eventually(
    "both operators' success lines",
    () => handledBy(first, "twice-1") && handledBy(second, "twice-1") || undefined,
  );
});

Deno.test("dead peers are removed from the peering object and do not pause anyone", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-dead");
  const dead = { priority: 1000, lifetime: 10, lastseen: "2020-01-01T00:00:00.000000+00:00" };
  const name = await createPeering(namespace, { status: { "op-dead": dead } });
  await using kopf = await operator("op-alive", ["-n", namespace, "-P", name]);
  await eventually("the dead record to be removed", async () => {
    const status = await peeringStatus(namespace, name);
    return status["op-dead"] === undefined && status["op-alive"] !== undefined || undefined;
  });
  await createExample(client, namespace, "dead-1");
  await waitForStatus(namespace, "dead-1", "createFn");
  assert.ok(!kopf.lines.some((line) => /Pausing/.test(line)), kopf.output);
});

Deno.test("settings.peering.lifetime = 20: the record says 20 and its lastseen is refreshed", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-life");
  const name = await createPeering(namespace);
  await using _kopf = await operator("op-life", ["-n", namespace, "-P", name], { KOPF_TEST_PEERING_LIFETIME: "20" });
  const first = await eventually("the first record", async () => (await peeringStatus(namespace, name))["op-life"]) as {
    lifetime: number;
    lastseen: string;
  };
  assert.equal(first.lifetime, 20);
  // Refreshed every 10–15 s: a bound of 60 s only limits how long a broken test waits.
  await eventually("a refreshed lastseen", async () => {
    const record = (await peeringStatus(namespace, name))["op-life"] as { lastseen?: string } | undefined;
    return record?.lastseen && record.lastseen !== first.lastseen ? true : undefined;
  });
});

Deno.test("settings.peering.stealth: no keep-alive lines with --verbose while the record is still refreshed", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-stealth");
  const name = await createPeering(namespace);
  // A lifetime of 7 s: a keep-alive every second or so.
  await using kopf = await operator("op-stealth", ["-n", namespace, "-P", name], {
    KOPF_TEST_PEERING_STEALTH: "1",
    KOPF_TEST_PEERING_LIFETIME: "7",
  });
  const first = await eventually(
    "the first record",
    async () => (await peeringStatus(namespace, name))["op-stealth"],
  ) as {
    lastseen: string;
  };
  await eventually("a refreshed lastseen", async () => {
    const record = (await peeringStatus(namespace, name))["op-stealth"] as { lastseen?: string } | undefined;
    return record?.lastseen && record.lastseen !== first.lastseen ? true : undefined;
  });
  assert.ok(!kopf.lines.some((line) => /Keep-alive in/.test(line)), kopf.output);
});

Deno.test("settings.peering.clusterwide at startup: a namespaced operator keeps its record in the ClusterKopfPeering", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-cw");
  const name = await createPeering(null);
  try {
    await using _kopf = await operator("op-cw", ["-n", namespace, "-P", name], { KOPF_TEST_PEERING_CLUSTERWIDE: "1" });
    await eventually("the record on the ClusterKopfPeering", async () => (await peeringStatus(null, name))["op-cw"]);
    await createExample(client, namespace, "cw-1");
    await waitForStatus(namespace, "cw-1", "createFn");
  } finally {
    await deletePeering(null, name);
  }
});

Deno.test("a cluster-wide operator pauses for a higher priority on the ClusterKopfPeering and resumes when that record goes", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "peer-cwprio");
  const label = freshPeeringName("label");
  const name = await createPeering(null, { status: { "op-higher": liveRecord(10) } });
  try {
    await using kopf = await operator("op-cwlow", ["-A", "-P", name], { KOPF_TEST_LABEL: label });
    await kopf.waitForLine(/Pausing operations in favour of \[.*op-higher.*\]/);
    await createLabelled(namespace, "cwprio-1", label);
    await assertUntouched(namespace, "cwprio-1");
    await kopfCommand(["resume", "-A", "-P", name, "-i", "op-higher"]);
    await kopf.waitForLine(/Resuming operations/);
    await waitForStatus(namespace, "cwprio-1", "createFn");
    await assertHandledAfterResuming(kopf, "cwprio-1");
  } finally {
    await deletePeering(null, name);
  }
});
