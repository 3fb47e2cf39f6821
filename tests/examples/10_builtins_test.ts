/**
 * examples/10-builtins: a daemon per pod labels it `expired=true` after its lifetime (here 1 s by
 * its annotation); a pod deleted before that only has its expiry cancelled; an expired pod gets no
 * new daemon.
 */

import assert from "node:assert/strict";
import { freshNamespace, testCluster } from "../support/cluster.ts";
import { eventually } from "../support/eventually.ts";
import { linesWith, runExample } from "../support/examples.ts";
import { createPod, deletePod, getPod } from "../support/pods.ts";

Deno.test("examples/10-builtins: a pod is labelled expired after its lifetime; a deleted one has its expiry cancelled", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex10");
  await using operator = await runExample("10-builtins", namespace);
  await createPod(namespace, "short-lived", { annotations: { "example.kopf.dev/lifetime": "1" } });
  await createPod(namespace, "long-lived", { annotations: { "example.kopf.dev/lifetime": "600" } });

  const labels = await eventually("the short-lived pod's label", async () => {
    const pod = await getPod(namespace, "short-lived");
    return pod.metadata.labels?.expired ? pod.metadata.labels : undefined;
  });
  assert.deepEqual(labels, { expired: "true" });
  await operator.waitForLine(/\/short-lived\] === The pod has expired\./);

  await operator.waitForLine(/\/long-lived\] === The pod expires in 600 s\./);
  await deletePod(namespace, "long-lived");
  await operator.waitForLine(/\/long-lived\] === The pod's expiry is cancelled/);
  assert.equal((await getPod(namespace, "short-lived")).metadata.labels?.expired, "true");
  assert.equal(linesWith(operator, "/short-lived] === The pod expires in").length, 1, operator.output);
  assert.equal((await operator.stop()).code, 0, operator.output);
});
