/**
 * An operator with nothing to run refuses to start (issue 11, defect 8) instead of idling
 * silently: `kopf run` on a handler file that registers no handlers exits 1 naming the files it
 * loaded, and `kopf.operator()` rejects with a `NoHandlersError` — also when only login, probe or
 * cleanup handlers are registered, which serve nothing by themselves. Admission handlers alone,
 * or startup handlers alone, are something to run.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { freshNamespace, testCluster } from "./support/cluster.ts";
import { KopfProcess } from "./support/kopf_process.ts";
import { runOperator } from "./support/operator.ts";

Deno.test("kopf run on a handler file that registers no handlers exits 1, saying so and naming the file", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "nothing");
  await using operator = await KopfProcess.start(namespace, ["tests/fixtures/no_handlers.ts"]);
  const status = await operator.waitForExit();
  assert.equal(status.code, 1, operator.output);
  assert.match(
    operator.lines.at(-1) ?? "",
    /^kopf: No handlers are registered: the operator has nothing to run\..* Loaded: tests\/fixtures\/no_handlers\.ts\.$/,
  );
  assert.ok(!operator.output.includes("nothing to serve"), operator.output);
});

Deno.test("kopf.operator() with an empty registry, or only login/probe/cleanup handlers, rejects with NoHandlersError", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "nothing-emb");
  await assert.rejects(
    runOperator(new kopf.Registry(), namespace),
    (error: Error) => error instanceof kopf.NoHandlersError && /^No handlers are registered/.test(error.message),
  );
  const registry = new kopf.Registry();
  kopf.on.probe({ registry }, function health() {
    return true;
  });
  kopf.on.cleanup({ registry }, function farewell() {});
  await assert.rejects(
    runOperator(registry, namespace),
    (error: Error) =>
      error instanceof kopf.NoHandlersError && error.message.startsWith("Only probe, cleanup handlers are registered"),
  );
});

Deno.test("kopf.operator() with only a startup handler runs (the startup handler is something to run)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "only-startup");
  const registry = new kopf.Registry();
  let started = false;
  kopf.on.startup({ registry }, function begin() {
    started = true;
  });
  const operator = await runOperator(registry, namespace);
  await operator.stop();
  assert.equal(started, true);
});
