/**
 * Memos against a real API server: the per-object memo shared by all handlers of an object and
 * kept between its events however far apart, a fresh one for a re-created object, and the
 * operator memo copied shallowly into each object's memo.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import {
  createExample,
  deleteExample,
  freshNamespace,
  getExample,
  patchExample,
  testCluster,
  waitForStatus,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";

type Status = Record<string, unknown>;

function sleep(seconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}

Deno.test("the per-object memo is shared by an object's handlers and survives idle gaps between events", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "memo");
  const registry = new kopf.Registry();
  const counts: string[] = [];
  kopf.on.event("kopfexamples", { registry }, function countFn({ name, type, memo }) {
    if (type === "DELETED") return;
    memo.counter = ((memo.counter as number | undefined) ?? 0) + 1;
    counts.push(`${name} ${memo.counter}`);
  });
  kopf.on.update("kopfexamples", { registry, field: "spec.step" }, function stepFn({ memo }) {
    return { counter: memo.counter };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "m", { step: 0 });
    await eventually("the first event", () => counts.includes("m 1") || undefined);
    let last = 1;
    for (let step = 1; step <= 3; step++) {
      // Longer than Kopf's worker idle timeout (5 s): whatever per-object worker there was has exited.
      await sleep(6);
      await patchExample(client, namespace, "m", { spec: { step } });
      const counter = await waitForStatus(namespace, "m", "stepFn/spec.step", (value) => {
        return typeof (value as Status | undefined)?.counter === "number" &&
          ((value as Status).counter as number) > last;
      });
      last = (counter as { counter: number }).counter;
    }
    const own = counts.filter((entry) => entry.startsWith("m ")).map((entry) => Number(entry.split(" ")[1]));
    assert.deepEqual(own, own.map((_, index) => index + 1), `the counter only grows: ${own}`);
    assert.ok(own.length >= 4, `at least one event per change: ${own}`);

    // Another object has its own memo; a re-created object (a new uid) gets a fresh one.
    await createExample(client, namespace, "n");
    await eventually("the other object's first event", () => counts.includes("n 1") || undefined);
    await deleteExample(client, namespace, "m");
    await eventually("m to be gone", async () => {
      try {
        await getExample(client, namespace, "m");
        return undefined;
      } catch {
        return true;
      }
    });
    const before = counts.length;
    await createExample(client, namespace, "m");
    const first = await eventually("the re-created object's first event", () => {
      return counts.slice(before).find((entry) => entry.startsWith("m "));
    });
    assert.equal(first, "m 1", "a new object, a new memo");
  } finally {
    await operator.stop();
  }
});

Deno.test("each object's memo is a shallow copy of the operator memo, taken when it is first seen", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "opmemo");
  const registry = new kopf.Registry();
  const shared = { n: 0 };
  const operatorMemo: kopf.AnyMemo = { shared, flag: 1 };
  kopf.on.create("kopfexamples", { registry }, function createFn({ memo }) {
    const seenFlag = memo.flag;
    const seenLate = memo.late ?? "none";
    memo.flag = 2; // top-level changes stay in this object's memo
    const counter = memo.shared as { n: number };
    counter.n++; // shared mutable values are shared
    return { flag: seenFlag, late: seenLate, n: counter.n, same: memo.shared === shared, own: memo !== operatorMemo };
  });
  kopf.on.update("kopfexamples", { registry }, function updateFn({ memo }) {
    return { flag: memo.flag, late: memo.late ?? "none" };
  });
  const operator = await runOperator(registry, namespace, { memo: operatorMemo });
  try {
    await createExample(client, namespace, "a");
    assert.deepEqual(await waitForStatus(namespace, "a", "createFn"), {
      flag: 1,
      late: "none",
      n: 1,
      same: true,
      own: true,
    });
    operatorMemo.late = "added later";
    await createExample(client, namespace, "b");
    assert.deepEqual(await waitForStatus(namespace, "b", "createFn"), {
      flag: 1,
      late: "added later",
      n: 2,
      same: true,
      own: true,
    });
    assert.equal(operatorMemo.flag, 1, "the operator memo's top level is not changed by objects");
    assert.equal(shared.n, 2);

    await patchExample(client, namespace, "a", { spec: { x: 1 } });
    assert.deepEqual(
      await waitForStatus(namespace, "a", "updateFn"),
      { flag: 2, late: "none" },
      "a's memo is its own, and later top-level additions to the operator memo do not reach it",
    );
  } finally {
    await operator.stop();
  }
});
