/**
 * examples/11-filtering-handlers: for examples/obj.yaml, exactly the handlers whose filters match
 * run (by labels, annotations, value callbacks, `when`, field values and presence); an update runs
 * the handler of its field's transition; the daemon runs while its field has its value.
 */

import assert from "node:assert/strict";
import { freshNamespace, patchExample, testCluster } from "../support/cluster.ts";
import { applyObjYaml, linesWith, runExample } from "../support/examples.ts";

const EXPECTED_AT_CREATION = [
  "labelMatching",
  "labelPresent",
  "labelAbsent",
  "labelCallbackMatching",
  "annotationMatching",
  "annotationPresent",
  "annotationAbsent",
  "whenSatisfied",
  "fieldValueSatisfied/spec.field",
  "fieldPresenceSatisfied/spec.field",
];

/** The ids of the handlers that succeeded, in order. */
function succeeded(lines: string[]): string[] {
  return lines.map((line) => line.match(/Handler '([^']+)' succeeded\.$/)?.[1])
    .filter((id): id is string => id !== undefined);
}

Deno.test("examples/11-filtering-handlers: only the matching handlers run; the field's transition; the field daemon", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex11");
  await using operator = await runExample("11-filtering-handlers", namespace);
  const obj = await applyObjYaml(namespace);
  await operator.waitForLine(
    new RegExp(`Creation is processed: ${EXPECTED_AT_CREATION.length} succeeded; 0 failed\\.`),
  );
  assert.deepEqual(succeeded(operator.lines), EXPECTED_AT_CREATION);
  assert.equal(linesWith(operator, "(it should not").length, 0, operator.output);
  await operator.waitForLine(/Field daemon is satisfied\./);

  await patchExample(client, namespace, obj.metadata.name!, { spec: { field: "changed" } });
  await operator.waitForLine(/Updating is processed: 1 succeeded; 0 failed\./);
  assert.deepEqual(succeeded(operator.lines).slice(EXPECTED_AT_CREATION.length), ["fieldChangeSatisfied/spec.field"]);
  // The field no longer has the daemon's value: the daemon is stopped.
  await operator.waitForLine(/Field daemon has stopped\./);
  assert.equal((await operator.stop()).code, 0, operator.output);
});
