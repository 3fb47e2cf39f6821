/**
 * examples/04-events: one creation handler posts four Events for its object — of a custom type,
 * Normal, Warning, and an Error for a caught error — all involving the object.
 */

import assert from "node:assert/strict";
import { EVENTS } from "../../src/api/events.ts";
import { resourcePath } from "../../src/api/paths.ts";
import type { KubernetesList, KubernetesObject } from "../../src/model/body.ts";
import { freshNamespace, testCluster } from "../support/cluster.ts";
import { eventually } from "../support/eventually.ts";
import { applyObjYaml, OBJ_NAME, runExample } from "../support/examples.ts";

Deno.test("examples/04-events: the object gets its four Events: SomeType, Normal, Warning, and Error for the caught error", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex04");
  await using operator = await runExample("04-events", namespace);
  const obj = await applyObjYaml(namespace);
  await operator.waitForLine(/Handler 'createFn' succeeded\./);

  const events = await eventually("the four events", async () => {
    const list = await client.request<KubernetesList>({ path: resourcePath(EVENTS, { namespace }) });
    return list.items.length >= 4 ? list.items : undefined;
  });
  const seen = events.map((event: KubernetesObject) => [event.type, event.reason, event.message]).sort();
  assert.deepEqual(seen, [
    ["Error", "Failed", "Resizing failed: The size is out of range."],
    ["Normal", "Noticed", "An informational message"],
    ["SomeType", "SomeReason", "Some message"],
    ["Warning", "Suspicious", "A warning message"],
  ]);
  for (const event of events) {
    const involved = event.involvedObject as Record<string, unknown>;
    assert.deepEqual([involved.kind, involved.name, involved.uid], ["KopfExample", OBJ_NAME, obj.metadata.uid]);
  }
  assert.equal((await operator.stop()).code, 0, operator.output);
});
