/**
 * examples/03-exceptions: a PermanentError fails at once; a TemporaryError is retried until the
 * handler succeeds; other errors are retried up to `retries`, or fail at once with
 * `errors: "permanent"`. The creation ends with 1 success and 3 failures.
 */

import assert from "node:assert/strict";
import { freshNamespace, getExample, testCluster } from "../support/cluster.ts";
import { applyObjYaml, linesWith, OBJ_NAME, runExample } from "../support/examples.ts";

Deno.test("examples/03-exceptions: 1 handler succeeds after 3 temporary errors, 3 fail for good, each as its error says", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex03");
  await using operator = await runExample("03-exceptions", namespace);
  await applyObjYaml(namespace);
  await operator.waitForLine(/Creation is processed: 1 succeeded; 3 failed\./);

  assert.equal(
    linesWith(operator, "Handler 'failsForGood' failed permanently: The spec can never be satisfied.").length,
    1,
  );
  assert.equal(linesWith(operator, "Handler 'succeedsEventually' failed temporarily: Not ready yet").length, 3);
  assert.equal(linesWith(operator, "Succeeded after 3 retries.").length, 1);
  assert.equal(linesWith(operator, "Handler 'succeedsEventually' succeeded.").length, 1);
  // Three attempts: two retried after the backoff, the third is the last allowed.
  assert.equal(
    linesWith(operator, "Handler 'givesUpAfterRetries' failed with an exception. Will retry in 1 s.").length,
    2,
  );
  assert.equal(linesWith(operator, "Handler 'givesUpAfterRetries' failed with an exception. Will stop.").length, 1);
  assert.equal(linesWith(operator, "Handler 'givesUpAfterRetries' has exceeded 3 retries.").length, 1);
  assert.equal(linesWith(operator, "Handler 'failsAtFirstError' failed with an exception. Will stop.").length, 1);

  // The failures are final: the object is not handled again, and its progress is purged.
  const body = await getExample(client, namespace, OBJ_NAME);
  const progress = Object.keys(body.metadata.annotations ?? {}).filter((key) => key.startsWith("kopf.zalando.org/"));
  assert.deepEqual(progress, ["kopf.zalando.org/last-handled-configuration"], JSON.stringify(body.metadata));
  assert.equal((await operator.stop()).code, 0, operator.output);
});
