/**
 * examples/99-all-at-once as its README describes it, through `kopf run` on the shared cluster:
 * startup (with retries), creation handlers with a child, events, a retried error and sub-handlers,
 * the Pod child seen by the event handler, the index and the timer, update and field handlers,
 * cleanup on a stop, resume after a restart (creation not repeated), deletion stopping the daemon.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import type { CoreV1Event, V1ConfigMap } from "@kopf/kopf/types";
import type { KopfExample } from "../../examples/types.ts";
import { freshNamespace, testCluster } from "../support/cluster.ts";
import { eventually } from "../support/eventually.ts";
import { KopfProcess } from "../support/kopf_process.ts";

const EXAMPLE = ["examples/99-all-at-once/example.ts"];

Deno.test("examples/99-all-at-once: every kind of handler, once each, across a restart", async () => {
  const { client, kubeconfig } = await testCluster();
  using api = await kopf.connect({ kubeconfig });
  const namespace = await freshNamespace(client, "example-99");
  const name = "kopf-example-1";
  const status = async (): Promise<Record<string, unknown>> =>
    (await api.get<KopfExample>("kopfexamples", name, { namespace }))?.status ?? {};

  // The first run: startup, creation, changes, cleanup.
  const first = await KopfProcess.start(namespace, EXAMPLE);
  try {
    await first.waitForLine(/Starting retried\.\.\./);
    await api.create<KopfExample>({
      apiVersion: "kopf.dev/v1",
      kind: "KopfExample",
      metadata: { name, namespace },
      spec: { duration: "1m", field: "value", items: ["item1", "item2"], lst: ["a"] },
    });
    const done = await eventually("the results of the creation handlers and the timer", async () => {
      const current = await status();
      const count = (current.countPods as { pods?: number } | undefined)?.pods;
      return current.create1 && current.create2 && count === 1 ? current : undefined;
    });
    assert.equal((done.create1 as Record<string, unknown>).job1Status, 100);
    assert.deepEqual(done.create2, { job2Status: 100 });
    assert.deepEqual(done["createItems/item1"], { item: "item1" });
    assert.deepEqual(done["createItems/item2"], { item: "item2" });
    await first.waitForLine(/Handler 'create2' failed with an exception|Whoops!/);
    await first.waitForLine(/This pod is special for us: kopf-example-1-[a-z0-9]{5}/);
    await first.waitForLine(/Monitoring has started\./);

    const childName = (done.create1 as { child: string }).child;
    const child = await api.get<V1ConfigMap>("configmaps", childName, { namespace });
    assert.equal(child?.metadata?.ownerReferences?.[0]?.name, name, "the ConfigMap is adopted");
    const events = await eventually("the three events", async () => {
      const { items } = await api.list<CoreV1Event>("events", { namespace });
      const seen = items.map((e) => `${e.involvedObject.kind}/${e.involvedObject.name} ${e.type} ${e.reason}`);
      const wanted = [
        `KopfExample/${name} Normal AnyReason`,
        `KopfExample/${name} Warning SomeReason`,
        `ConfigMap/${childName} Normal SomeReason`,
      ];
      return wanted.every((line) => seen.includes(line)) ? seen : undefined;
    });
    assert.ok(events.length >= 3);

    await api.patch("kopfexamples", name, { spec: { lst: ["a", "b"], field: "changed" } }, { namespace });
    await first.waitForLine(/Handling the FIELD = \["a"\] -> \["a","b"\]/);
    await first.waitForLine(/Handling the diff: .*"field".*"value","changed"/);

    first.signal("SIGTERM");
    assert.equal((await first.waitForExit()).code, 0, first.output);
    assert.match(first.output, /Cleaning up in 1s\.\.\./);
  } finally {
    await first[Symbol.asyncDispose]();
  }

  // The second run: the object is resumed, nothing created again; then it is deleted.
  await using second = await KopfProcess.start(namespace, EXAMPLE);
  await second.waitForLine(/Resumed \(resume\): the operator has found the object at its start\./);
  await second.waitForLine(/Monitoring has started\./);
  await api.delete("kopfexamples", name, { namespace });
  await second.waitForLine(/Deleted, really deleted/);
  await eventually(
    `${name} to be gone`,
    async () => (await api.get("kopfexamples", name, { namespace })) === null || undefined,
  );
  await second.waitForLine(/Monitoring has stopped \(resourceDeleted.*\) after \d+ beat\(s\)\./);
  second.signal("SIGTERM");
  assert.equal((await second.waitForExit()).code, 0, second.output);

  const succeeded = (output: string, id: string) => output.split("\n").filter((l) => l.includes(`'${id}' succeeded`));
  for (
    const id of ["startupFnSimple", "startupFnRetried", "cleanupFn", "create1", "create2", "createPod", "createItems"]
  ) {
    assert.equal(succeeded(first.output, id).length, 1, `${id} succeeded once in the first run\n${first.output}`);
  }
  assert.equal(succeeded(first.output, "update").length, 1, `update once\n${first.output}`);
  // A field handler sees the field appear at creation and change at the update.
  assert.equal(succeeded(first.output, "updateLst/spec.lst").length, 2, `updateLst twice\n${first.output}`);
  assert.match(first.output, /Handling the FIELD = null -> \["a"\]/);
  for (const id of ["create1", "create2", "createPod", "createItems"]) {
    assert.equal(succeeded(second.output, id).length, 0, `${id} is not repeated after the restart`);
  }
  assert.equal(succeeded(second.output, "resume").length, 1, `resume once\n${second.output}`);
  assert.equal(succeeded(second.output, "deleteFn").length, 1, `deleteFn once\n${second.output}`);
});
