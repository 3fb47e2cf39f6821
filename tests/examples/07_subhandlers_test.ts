/**
 * examples/07-subhandlers: one sub-handler per item of spec.items, each with its own id under the
 * parent's (`createFn/item1`), its own result in the status, and its own success line.
 */

import assert from "node:assert/strict";
import { freshNamespace, getExample, testCluster, waitForStatus } from "../support/cluster.ts";
import { applyObjYaml, linesWith, OBJ_NAME, runExample } from "../support/examples.ts";

Deno.test("examples/07-subhandlers: each item of spec.items is handled by its own sub-handler, once", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex07");
  await using operator = await runExample("07-subhandlers", namespace);
  await applyObjYaml(namespace); // spec.items: [item1, item2]
  await operator.waitForLine(/Creation is processed: 1 succeeded; 0 failed\./);
  await waitForStatus(namespace, OBJ_NAME, "createFn/item2");

  const status = (await getExample(client, namespace, OBJ_NAME)).status as Record<string, unknown>;
  assert.deepEqual(status["createFn/item1"], { item: "item1" });
  assert.deepEqual(status["createFn/item2"], { item: "item2" });
  for (const item of ["item1", "item2"]) {
    assert.equal(linesWith(operator, `=== Handling creation for ${item}. ===`).length, 1, operator.output);
    assert.equal(linesWith(operator, `Handler 'createFn/${item}' succeeded.`).length, 1, operator.output);
  }
  assert.equal((await operator.stop()).code, 0, operator.output);
});
