/**
 * Objects whose essence does not fit in an annotation (the API server allows 256 KiB of
 * annotations per object) against a real API server: their diff-base is a digest of the essence,
 * the creation handler runs once and its outcome is stored, and a later change still runs the
 * update handler once.
 */

import assert from "node:assert/strict";
import { reset } from "@logtape/logtape";
import * as kopf from "@kopf/kopf";
import { createExample, freshNamespace, getExample, patchExample, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { captureLogs } from "./support/logs.ts";
import { runOperator } from "./support/operator.ts";
import { EventProbe } from "./support/probe.ts";

const DIFF_BASE = "kopf.zalando.org/last-handled-configuration";

for (const kib of [300, 1000]) {
  Deno.test(`a ${kib} KiB spec: the creation runs once, its outcome is stored, a change runs the update once`, async () => {
    const { client } = await testCluster();
    const namespace = await freshNamespace(client, `big-${kib}`);
    const lines = await captureLogs();
    const registry = new kopf.Registry();
    const calls: string[] = [];
    kopf.on.create("kopfexamples", { registry }, function createFn({ spec }) {
      calls.push("create");
      return { size: String(spec.blob).length };
    });
    kopf.on.update("kopfexamples", { registry }, function updateFn({ diff }) {
      calls.push("update");
      return { changed: diff.map(([op, path]) => `${op} ${path.join(".")}`) };
    });
    const probe = new EventProbe(registry);
    const operator = await runOperator(registry, namespace);
    try {
      await createExample(client, namespace, "big", { blob: "x".repeat(kib * 1024), size: 1 });
      const created = await eventually("the creation to be stored", async () => {
        const body = await getExample(client, namespace, "big");
        const status = body.status as Record<string, unknown> | undefined;
        return body.metadata.annotations?.[DIFF_BASE] && status?.createFn ? body : undefined;
      });
      assert.deepEqual((created.status as Record<string, unknown>).createFn, { size: kib * 1024 });
      assert.match(created.metadata.annotations![DIFF_BASE], /^\{"kopf:essence-sha256":"[0-9a-f]{64}"\}\n$/);
      await probe.caughtUp(namespace, "big");
      assert.deepEqual(calls, ["create"], "the creation handler runs once");

      await patchExample(client, namespace, "big", { spec: { size: 2 } });
      await eventually("the update", () => calls.includes("update") || undefined);
      const updated = await eventually("the update's result", async () => {
        const body = await getExample(client, namespace, "big");
        return (body.status as Record<string, unknown>).updateFn ? body : undefined;
      });
      assert.deepEqual((updated.status as Record<string, unknown>).updateFn, { changed: ["add spec"] });
      await probe.caughtUp(namespace, "big");
      assert.deepEqual(calls, ["create", "update"], "the update handler runs once");
      const text = lines.join("\n");
      assert.doesNotMatch(text, /refused|Throttling|unexpected error/, text.slice(-3000));
    } finally {
      await operator.stop();
      await reset();
    }
  });
}
