/**
 * examples/14-daemons: the accompanying daemon fails 3 times (the status says so), then pings;
 * the watchdog (for annotated objects) pings at once; deleting the object stops both, the
 * watchdog saying why, and the object goes.
 */

import assert from "node:assert/strict";
import { deleteExample, exampleGone, freshNamespace, testCluster, waitForStatus } from "../support/cluster.ts";
import { applyObjYaml, linesWith, OBJ_NAME, runExample } from "../support/examples.ts";

Deno.test("examples/14-daemons: retried then pinging daemon, watchdog; both stop when the object is deleted", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex14");
  await using operator = await runExample("14-daemons", namespace);
  await applyObjYaml(namespace); // annotated with someannotation=somevalue, spec.field=value
  await operator.waitForLine(/=> Ping from a watchdog: field="value"/);
  await operator.waitForLine(/=> Ping from a daemon: field="value", retry=3/);
  // The patch of each failed attempt is applied when the attempt ends: the last one tells.
  assert.equal(await waitForStatus(namespace, OBJ_NAME, "message"), "Failed 3 times.");
  assert.equal(
    linesWith(operator, "Daemon 'accompany' failed temporarily: Simulated failure.").length,
    3,
    operator.output,
  );

  await deleteExample(client, namespace, OBJ_NAME);
  await operator.waitForLine(/=> The watchdog is stopped: resourceDeleted/);
  await exampleGone(client, namespace, OBJ_NAME);
  assert.equal((await operator.stop()).code, 0, operator.output);
});
