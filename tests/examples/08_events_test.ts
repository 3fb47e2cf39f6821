/**
 * examples/08-events: event handlers see every watch event of the object; one that throws is
 * logged and ignored, and is called again for the next event.
 */

import assert from "node:assert/strict";
import { deleteExample, freshNamespace, patchExample, testCluster } from "../support/cluster.ts";
import { eventually } from "../support/eventually.ts";
import { applyObjYaml, linesWith, OBJ_NAME, runExample } from "../support/examples.ts";

Deno.test("examples/08-events: ADDED, MODIFIED and DELETED reach the handler; the failing one is ignored each time", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex08");
  await using operator = await runExample("08-events", namespace);
  await applyObjYaml(namespace);
  await operator.waitForLine(new RegExp(`Event received: (ADDED|listed) ${OBJ_NAME}$`));
  await patchExample(client, namespace, OBJ_NAME, { spec: { field: "changed" } });
  await operator.waitForLine(new RegExp(`Event received: MODIFIED ${OBJ_NAME}$`));
  await deleteExample(client, namespace, OBJ_NAME);
  await operator.waitForLine(new RegExp(`Event received: DELETED ${OBJ_NAME}$`));

  const received = linesWith(operator, "Event received:").length;
  const failed = "Handler 'eventFnWithError' failed with an exception. Will ignore.";
  await eventually("a failure per event", () => linesWith(operator, failed).length === received || undefined);
  assert.equal((await operator.stop()).code, 0, operator.output);
});
