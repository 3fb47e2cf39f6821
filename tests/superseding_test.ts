/**
 * A cause superseded by a newer one (an update by the deletion), with the operator's log captured.
 */

import assert from "node:assert/strict";
import { reset } from "@logtape/logtape";
import * as kopf from "@kopf/kopf";
import { ApiNotFoundError } from "../src/api/errors.ts";
import {
  createExample,
  deleteExample,
  freshNamespace,
  getExample,
  patchExample,
  testCluster,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";

Deno.test("an update still retrying is superseded by the deletion, which runs at once", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "supersede");
  const lines: string[] = [];
  await kopf.configureLogging({ format: "plain", write: (line) => lines.push(line) });
  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.on.update("kopfexamples", { registry }, function updateFn() {
    calls.push("update");
    throw new kopf.TemporaryError("not now", { delay: 30 });
  });
  kopf.on.delete("kopfexamples", { registry }, function deleteFn() {
    calls.push("delete");
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "s");
    await eventually("the diff-base", async () => {
      const body = await getExample(client, namespace, "s");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await patchExample(client, namespace, "s", { spec: { x: 1 } });
    await eventually("the update to be delayed", async () => {
      const body = await getExample(client, namespace, "s");
      return body.metadata.annotations?.["kopf.zalando.org/updateFn"]?.includes('"delayed"') || undefined;
    });
    await deleteExample(client, namespace, "s");
    await eventually("the object to be gone", async () => {
      try {
        await getExample(client, namespace, "s");
        return undefined;
      } catch (error) {
        if (error instanceof ApiNotFoundError) return true;
        throw error;
      }
    });
    assert.deepEqual(calls, ["update", "delete"]);
    assert.ok(
      lines.some((line) =>
        line.includes("Updating is superseded by deletion: 0 succeeded; 0 failed; 1 left to the moment.")
      ),
      lines.join("\n"),
    );
  } finally {
    await operator.stop();
    await reset();
  }
});
