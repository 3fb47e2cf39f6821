/**
 * `kopf freeze` and `kopf resume` against the shared cluster: the peer record they write and
 * remove on a ClusterKopfPeering (-A) and on KopfPeerings (-n), its fields and identity, other
 * peers' records left alone, and a missing peering object explained in one line.
 */

import assert from "node:assert/strict";
import { ApiNotFoundError } from "../src/api/errors.ts";
import { resourcePath } from "../src/api/paths.ts";
import { parseLastseen } from "../src/model/peering.ts";
import { NAMESPACED_PEERING_RESOURCE } from "../src/engines/peering_records.ts";
import { freshNamespace, testCluster } from "./support/cluster.ts";
import { type KopfResult, meaningful, runKopf } from "./support/kopf_process.ts";
import { applyPeeringCrds, createPeering, deletePeering, peeringStatus } from "./support/peering.ts";

const HOST = Deno.hostname();

/** Runs `kopf <args>` to completion as user `tester` without POD_ID (unless `env` says otherwise). */
async function kopf(args: string[], env: Record<string, string> = {}): Promise<KopfResult> {
  const { kubeconfig } = await testCluster();
  return await runKopf(args, { KUBECONFIG: kubeconfig, USER: "tester", POD_ID: "", ...env });
}

/**
 * The error of a failed command: the last line, the only one starting with `kopf:`; the lines
 * before it are the log (e.g. "Initial authentication has finished.").
 */
function errorLine(stderr: string): string {
  const lines = meaningful(stderr);
  assert.equal(lines.filter((line) => line.startsWith("kopf:")).length, 1, stderr);
  assert.ok(lines.slice(0, -1).every((line) => /^\[[\d-]+ [\d:,]+\] kopf\./.test(line)), stderr);
  return lines.at(-1)!;
}

/** Asserts a freeze record: the fields Kopf writes, lastseen in ISO UTC between the two moments. */
function assertRecord(value: unknown, priority: number, lifetime: number, after: Date, before: Date): void {
  const record = value as { priority: unknown; lifetime: unknown; lastseen: unknown };
  assert.deepEqual(Object.keys(record).sort(), ["lastseen", "lifetime", "priority"]);
  assert.equal(record.priority, priority);
  assert.equal(record.lifetime, lifetime);
  assert.match(String(record.lastseen), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/);
  const lastseen = parseLastseen(record.lastseen)!;
  // Ordering facts, not timings: written after the command started and before it ended.
  assert.ok(lastseen.getTime() >= after.getTime() - 1 && lastseen.getTime() <= before.getTime(), String(lastseen));
}

Deno.test("kopf freeze -A writes status.<user>@<host> = {priority 100, lifetime, lastseen} on the ClusterKopfPeering; resume removes it", async () => {
  const name = await createPeering(null);
  try {
    const identity = `tester@${HOST}`;
    const started = new Date();
    const frozen = await kopf(["freeze", "-A", `--peering=${name}`, "--lifetime=60"]);
    const ended = new Date();
    assert.equal(frozen.code, 0, frozen.stderr);
    const status = await peeringStatus(null, name);
    assert.deepEqual(Object.keys(status), [identity]);
    assertRecord(status[identity], 100, 60, started, ended);
    assert.match(frozen.stderr, /Freezing operations of peering/);

    const resumed = await kopf(["resume", "-A", `--peering=${name}`]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(await peeringStatus(null, name), {});
  } finally {
    await deletePeering(null, name);
  }
});

Deno.test("kopf freeze -n a -n b --dev -i ID writes the record on the KopfPeering of each namespace; resume -i ID removes them", async () => {
  const { client } = await testCluster();
  const first = await freshNamespace(client, "freeze");
  const second = await freshNamespace(client, "freeze");
  const name = await createPeering(first);
  await createPeering(second, { name });
  const started = new Date();
  const frozen = await kopf(["freeze", "-n", first, "-n", second, "--dev", "-i", "ops-1", "-P", name, "-t", "30"]);
  const ended = new Date();
  assert.equal(frozen.code, 0, frozen.stderr);
  for (const namespace of [first, second]) {
    const status = await peeringStatus(namespace, name);
    assert.deepEqual(Object.keys(status), ["ops-1"], namespace);
    assertRecord(status["ops-1"], 666, 30, started, ended);
  }
  const resumed = await kopf(["resume", "-n", first, "-n", second, "-i", "ops-1", "-P", name]);
  assert.equal(resumed.code, 0, resumed.stderr);
  for (const namespace of [first, second]) assert.deepEqual(await peeringStatus(namespace, name), {}, namespace);
});

Deno.test("kopf freeze -n PATTERN patches the KopfPeering of each existing namespace that matches", async () => {
  const { client } = await testCluster();
  const prefix = `pat${crypto.randomUUID().slice(0, 6)}`;
  const first = await freshNamespace(client, prefix);
  const second = await freshNamespace(client, prefix);
  const excluded = await freshNamespace(client, `${prefix}-x`);
  const name = await createPeering(first);
  await createPeering(second, { name });
  await createPeering(excluded, { name });
  const frozen = await kopf(["freeze", "-n", `${prefix}-*,!${prefix}-x-*`, "-i", "ops-2", "-P", name, "-t", "30"]);
  assert.equal(frozen.code, 0, frozen.stderr);
  for (const namespace of [first, second]) {
    assert.deepEqual(Object.keys(await peeringStatus(namespace, name)), ["ops-2"], namespace);
  }
  assert.deepEqual(await peeringStatus(excluded, name), {});
  const resumed = await kopf(["resume", "-n", `${prefix}-*`, "-i", "ops-2", "-P", name]);
  assert.equal(resumed.code, 0, resumed.stderr);
  for (const namespace of [first, second]) assert.deepEqual(await peeringStatus(namespace, name), {}, namespace);
});

Deno.test("kopf freeze and resume keep other peers' records; POD_ID is the identity when set", async () => {
  const other = { priority: 0, lifetime: 60, lastseen: "2024-05-01T12:00:00.000000+00:00" };
  const name = await createPeering(null, { status: { "someone@elsewhere/20240501120000/abc": other } });
  try {
    const frozen = await kopf(["freeze", "-A", "-P", name, "-t", "120", "-p", "7", "-m", "maintenance"], {
      POD_ID: "pod-xyz",
    });
    assert.equal(frozen.code, 0, frozen.stderr);
    let status = await peeringStatus(null, name);
    assert.deepEqual(Object.keys(status).sort(), ["pod-xyz", "someone@elsewhere/20240501120000/abc"]);
    assert.deepEqual(status["someone@elsewhere/20240501120000/abc"], other);
    assert.equal((status["pod-xyz"] as { priority: number }).priority, 7);
    assert.equal((status["pod-xyz"] as { lifetime: number }).lifetime, 120);

    const resumed = await kopf(["resume", "-A", "-P", name], { POD_ID: "pod-xyz" });
    assert.equal(resumed.code, 0, resumed.stderr);
    status = await peeringStatus(null, name);
    assert.deepEqual(status, { "someone@elsewhere/20240501120000/abc": other });
  } finally {
    await deletePeering(null, name);
  }
});

Deno.test("KOPF_FREEZE_* and KOPF_RESUME_* give the defaults of freeze and resume", async () => {
  const name = await createPeering(null);
  try {
    const frozen = await kopf(["freeze", "-A"], {
      KOPF_FREEZE_PEERING: name,
      KOPF_FREEZE_LIFETIME: "45",
      KOPF_FREEZE_ID: "from-env",
    });
    assert.equal(frozen.code, 0, frozen.stderr);
    const status = await peeringStatus(null, name);
    assert.deepEqual(Object.keys(status), ["from-env"]);
    assert.equal((status["from-env"] as { lifetime: number }).lifetime, 45);
    const resumed = await kopf(["resume"], {
      KOPF_RESUME_PEERING: name,
      KOPF_RESUME_ALL_NAMESPACES: "true",
      KOPF_RESUME_ID: "from-env",
    });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(await peeringStatus(null, name), {});
  } finally {
    await deletePeering(null, name);
  }
});

Deno.test("freeze and resume take the logging options: --log-format json, -q", async () => {
  const name = await createPeering(null);
  try {
    const frozen = await kopf(["freeze", "-A", "-P", name, "-t", "60", "-m", "upgrade", "--log-format", "json"]);
    assert.equal(frozen.code, 0, frozen.stderr);
    const records = meaningful(frozen.stdout).map((line) => JSON.parse(line));
    const freezing = records.find((record) => String(record.message).startsWith("Freezing operations"));
    assert.ok(freezing, frozen.stderr);
    assert.match(
      freezing.message,
      /for 60 s as 'tester@.*' with priority 100: ClusterKopfPeering ".*"\. Message: upgrade$/,
    );
    const resumed = await kopf(["resume", "-A", "-P", name, "-q"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(meaningful(resumed.stderr), []);
    assert.deepEqual(await peeringStatus(null, name), {});
  } finally {
    await deletePeering(null, name);
  }
});

Deno.test("kopf freeze on a missing ClusterKopfPeering: one line saying what to create, exit code 1", async () => {
  await applyPeeringCrds();
  const name = `missing-${crypto.randomUUID().slice(0, 8)}`;
  const { code, stderr } = await kopf(["freeze", "-A", "-P", name, "-t", "60"]);
  assert.equal(code, 1);
  const line = errorLine(stderr);
  assert.match(line, new RegExp(`^kopf: The ClusterKopfPeering "${name}" does not exist: create it`));
  assert.ok(line.includes("kubectl apply -f -"), line);
  assert.ok(line.includes(`kind: ClusterKopfPeering, metadata: {name: ${name}}`), line);
});

Deno.test("kopf resume on a missing KopfPeering: one line naming the object and namespace, exit code 1", async () => {
  await applyPeeringCrds();
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "resume");
  const { code, stderr } = await kopf(["resume", "-n", namespace, "-P", "default"]);
  assert.equal(code, 1);
  const line = errorLine(stderr);
  assert.match(line, new RegExp(`^kopf: The KopfPeering "default" in namespace "${namespace}" does not exist`));
  assert.ok(line.includes("kubectl apply -f -"), line);
});

Deno.test("a resource the server does not have answers 404 without details.name: how a missing CRD is told apart", async () => {
  const { client } = await testCluster();
  const error = await client.request({ path: "/apis/kopf.dev/v1/nosuchpeerings/default" }).catch((e) => e);
  assert.ok(error instanceof ApiNotFoundError, String(error));
  assert.equal((error.payload?.details as { name?: string } | undefined)?.name, undefined);
  const missing = await client.request({
    path: resourcePath(NAMESPACED_PEERING_RESOURCE, { namespace: "default" }) + "/no-such-object",
  })
    .catch((e) => e);
  assert.ok(missing instanceof ApiNotFoundError, String(missing));
  assert.equal((missing.payload?.details as { name?: string } | undefined)?.name, "no-such-object");
});

Deno.test("kopf freeze with a kubeconfig that does not exist: one line naming the file, exit code 1", async () => {
  const { code, stderr } = await kopf(["freeze", "-A", "-P", "default", "-t", "60"], {
    KUBECONFIG: "/nonexistent/kopf-freeze-kubeconfig",
  });
  assert.equal(code, 1);
  const lines = meaningful(stderr);
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0], /^kopf: .*kopf-freeze-kubeconfig/);
});
