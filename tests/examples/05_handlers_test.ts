/**
 * examples/05-handlers: creation handlers in their order; an update of spec.field calls the update
 * and the field handler; after a restart the resuming handlers run (and not the creation ones);
 * a deletion calls the deletion handlers in their order.
 */

import assert from "node:assert/strict";
import { deleteExample, exampleGone, freshNamespace, patchExample, testCluster } from "../support/cluster.ts";
import { applyObjYaml, linesWith, OBJ_NAME, runExample } from "../support/examples.ts";

/** The lines with the example's own markers (RESUMED, CREATED, UPDATED, DELETED, FIELD CHANGED), in order. */
function markers(lines: string[]): string[] {
  return lines.map((line) => line.match(/\] ((?:RESUMED|CREATED|UPDATED|DELETED|FIELD CHANGED).*)$/)?.[1])
    .filter((marker): marker is string => marker !== undefined);
}

Deno.test("examples/05-handlers: create, update of a field, resume after a restart, delete — each kind in its order", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex05");
  await applyObjYaml(namespace);

  const first = await runExample("05-handlers", namespace);
  try {
    // The field handler counts the field's appearance at creation as a change too.
    await first.waitForLine(/Creation is processed: 3 succeeded; 0 failed\./);
    await patchExample(client, namespace, OBJ_NAME, { spec: { field: "changed" } });
    await first.waitForLine(/Updating is processed: 2 succeeded; 0 failed\./);
    assert.equal((await first.stop()).code, 0, first.output);
  } finally {
    await first.stop("SIGKILL");
  }
  assert.deepEqual(markers(first.lines), [
    "CREATED 1st",
    "CREATED 2nd",
    'FIELD CHANGED: null -> "value"',
    'UPDATED: [["change",["spec","field"],"value","changed"]]',
    'FIELD CHANGED: "value" -> "changed"',
  ]);

  await using second = await runExample("05-handlers", namespace);
  await second.waitForLine(/Resuming is processed: 2 succeeded; 0 failed\./);
  await deleteExample(client, namespace, OBJ_NAME);
  await second.waitForLine(/Deletion is processed: 2 succeeded; 0 failed\./);
  await exampleGone(client, namespace, OBJ_NAME);
  assert.deepEqual(markers(second.lines), ["RESUMED 1st", "RESUMED 2nd", "DELETED 1st", "DELETED 2nd"]);
  assert.equal(linesWith(second, "CREATED").length, 0, second.output);
  assert.equal((await second.stop()).code, 0, second.output);
});
