/**
 * Embedding (kopf-features area 28): operators run inside any Deno program, stop by their signal,
 * and several of them with their own registries share one process without seeing each other's
 * handlers.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { createExample, freshNamespace, getExample, settle, testCluster, waitFor } from "./support/cluster.ts";
import { runOperator } from "./support/operator.ts";

Deno.test("two operators with their own registries in one process each handle only their own objects (28.6)", async () => {
  const { client } = await testCluster();
  const [a, b] = [await freshNamespace(client, "emb"), await freshNamespace(client, "emb")];
  const calls: string[] = [];
  const registries = [new kopf.Registry(), new kopf.Registry()];
  for (const [index, registry] of registries.entries()) {
    const label = index === 0 ? "first" : "second";
    kopf.on.create("kopfexamples", { registry, id: "created" }, function created({ namespace, name }) {
      calls.push(`${label} ${namespace === a ? "a" : "b"}/${name}`);
      return label;
    });
  }
  const operators = [await runOperator(registries[0], a), await runOperator(registries[1], b)];
  try {
    await createExample(client, a, "x");
    await createExample(client, b, "y");
    for (const [namespace, name, label] of [[a, "x", "first"], [b, "y", "second"]]) {
      await waitFor(`${name} handled`, async () => {
        return ((await getExample(client, namespace, name)).status as Record<string, unknown> | undefined)?.created ===
            label || undefined;
      });
    }
    await settle(1);
    assert.deepEqual(calls.sort(), ["first a/x", "second b/y"]);
  } finally {
    for (const operator of operators) await operator.stop();
  }
});

Deno.test("an embedded operator's `ready` comes only after its startup handlers, and its signal stops it (28.1, 28.4)", async () => {
  const { client, credentials } = await testCluster();
  const namespace = await freshNamespace(client, "emb");
  const registry = new kopf.Registry();
  const order: string[] = [];
  kopf.on.startup({ registry }, async function prepare() {
    await kopf.sleep(0.5);
    order.push("startup");
  });
  const controller = new AbortController();
  const done = kopf.operator({
    registry,
    credentials,
    namespaces: [namespace],
    standalone: true,
    signal: controller.signal,
    ready: () => order.push("ready"),
  });
  await waitFor("readiness", () => order.includes("ready") || undefined);
  controller.abort();
  await done;
  assert.deepEqual(order, ["startup", "ready"]);
});
