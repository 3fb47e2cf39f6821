/**
 * Failure isolation against a real API server, through `kopf run`: a handler result that JSON
 * cannot encode, and an unexpected framework error for one object (a corrupt progress record),
 * each next to an object created at the same time that is handled normally.
 */

import assert from "node:assert/strict";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import {
  createExample,
  freshNamespace,
  getExample,
  KOPFEXAMPLES,
  patchExample,
  testCluster,
  waitForStatus,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { KopfProcess } from "./support/kopf_process.ts";

const HANDLERS = "tests/fixtures/throttling_handlers.ts";

type Status = Record<string, unknown>;

/**
 * Our behaviour (differs from Kopf on purpose): the result is encoded inside the handler's attempt,
 * so a result that JSON cannot encode (a BigInt, a circular object) fails that attempt like any
 * exception of the handler would: "failed with an exception. Will retry in N s.", retried after the
 * handler's backoff, the progress record saying why. Kopf only notices when it serialises the
 * patch, outside the handler, and so throttles the whole object as an unexpected error; here the
 * fault is the handler's, it stays visible on the object, and the handler's own retry settings
 * (`backoff`, `retries`, `timeout`, `errors`) apply. Either way, other objects are not affected.
 */
Deno.test("a result that JSON cannot encode is the handler's error, retried with backoff; others are handled", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "unencodable");
  await using kopf = await KopfProcess.start(namespace, [HANDLERS]);
  await Promise.all(["bad", "loop", "good"].map((name) => createExample(client, namespace, name)));
  assert.deepEqual(await waitForStatus(namespace, "good", "createFn"), { handled: true });

  for (const [name, message] of [["bad", /BigInt/], ["loop", /circular/i]] as const) {
    const record = await eventually(`a second failed attempt for ${name}`, async () => {
      const body = await getExample(client, namespace, name);
      const text = body.metadata.annotations?.["kopf.zalando.org/createFn"];
      const record = text ? JSON.parse(text) : undefined;
      return record?.retries >= 2 ? record : undefined;
    });
    assert.equal(record.success, false, name);
    assert.equal(record.failure, false, `${name}: not given up, retried`);
    assert.ok(record.delayed, name);
    assert.match(record.message, message);
    const body = await getExample(client, namespace, name);
    assert.equal((body.status as Status | undefined)?.createFn, undefined, `${name}: no result stored`);
    await kopf.waitForLine(new RegExp(`\\[${namespace}/${name}\\] Handler 'createFn' failed with an exception`));
  }
  await kopf.stop();
  assert.deepEqual(kopf.lines.filter((line) => line.includes("Throttling")), [], "not a framework error");
  assert.deepEqual(kopf.lines.filter((line) => line.includes(`[${namespace}/good]`) && /ERROR|WARN/.test(line)), []);
});

Deno.test("an unexpected error for one object is throttled 1, 1, 2… s; the other object is handled normally", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "throttled");
  await using kopf = await KopfProcess.start(namespace, [HANDLERS]);
  const broken = {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    // A progress record that is not JSON: reading it fails in the framework, before any handler.
    metadata: { name: "broken", annotations: { "kopf.zalando.org/createFn": "{not json" } },
    spec: {},
  };
  await Promise.all([
    client.request<KubernetesObject>({ method: "POST", path: resourcePath(KOPFEXAMPLES, { namespace }), body: broken }),
    createExample(client, namespace, "fine"),
  ]);
  assert.deepEqual(await waitForStatus(namespace, "fine", "createFn"), { handled: true });
  const prefix = `[${namespace}/broken] Throttling for `;
  await kopf.waitForLine(new RegExp(`\\[${namespace}/broken\\] Throttling for 1 seconds due to an unexpected error`));

  // Repeated failures rest longer each time (settings.batching.errorDelays: 1, 1, 2, 3, 5, …).
  const delays = () =>
    kopf.lines.filter((line) => line.includes(prefix)).map((line) =>
      Number(line.slice(line.indexOf(prefix) + prefix.length).split(" ")[0])
    );
  await eventually("three throttlings", () => delays().length >= 3 || undefined);
  assert.deepEqual(delays().slice(0, 3), [1, 1, 2]);
  assert.deepEqual(
    kopf.lines.filter((line) => line.includes(`[${namespace}/fine]`) && line.includes("Throttling")),
    [],
  );

  // Once the cause is gone, the object is handled.
  await patchExample(client, namespace, "broken", { metadata: { annotations: { "kopf.zalando.org/createFn": null } } });
  assert.deepEqual(await waitForStatus(namespace, "broken", "createFn"), { handled: true });
});

Deno.test({
  name: "the end of a throttling is logged: 'Throttling is over. Switching back to normal operations.'",
  fn: async () => {
    const { client } = await testCluster();
    const namespace = await freshNamespace(client, "throttle-over");
    await using kopf = await KopfProcess.start(namespace, [HANDLERS]);
    await client.request<KubernetesObject>({
      method: "POST",
      path: resourcePath(KOPFEXAMPLES, { namespace }),
      body: {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: { name: "broken", annotations: { "kopf.zalando.org/createFn": "{not json" } },
        spec: {},
      },
    });
    await kopf.waitForLine(new RegExp(`\\[${namespace}/broken\\] Throttling for 1 seconds`));
    await patchExample(client, namespace, "broken", {
      metadata: { annotations: { "kopf.zalando.org/createFn": null } },
    });
    assert.deepEqual(await waitForStatus(namespace, "broken", "createFn"), { handled: true });
    await kopf.waitForLine(
      new RegExp(`\\[${namespace}/broken\\] Throttling is over\\. Switching back to normal operations\\.`),
      10,
    );
  },
});
