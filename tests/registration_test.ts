/**
 * Handler registration against a real API server: bound methods and async
 * functions as handlers, one run per function and id however many selectors match, registries
 * that keep operators apart, and invalid options failing `kopf run` at import.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { createExample, freshNamespace, getExample, testCluster, waitForStatus } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { KopfProcess } from "./support/kopf_process.ts";
import { runOperator } from "./support/operator.ts";
import { EventProbe } from "./support/probe.ts";

type Status = Record<string, unknown>;

Deno.test("a bound method is registered under the method's name; async handlers work alike", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "methods");
  const registry = new kopf.Registry();
  class Tagger {
    constructor(readonly tag: string) {}
    method(): string {
      return this.tag;
    }
    async asyncMethod(): Promise<string> {
      await kopf.sleep(0.1);
      return `${this.tag} (async)`;
    }
  }
  const tagger = new Tagger("tag-1");
  kopf.on.create("kopfexamples", { registry }, tagger.method.bind(tagger));
  kopf.on.create("kopfexamples", { registry }, tagger.asyncMethod.bind(tagger));
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "m");
    assert.equal(await waitForStatus(namespace, "m", "method"), "tag-1");
    assert.equal(await waitForStatus(namespace, "m", "asyncMethod"), "tag-1 (async)");
  } finally {
    await operator.stop();
  }
});

Deno.test("one function with one id runs once per cause, even when several selectors match the object", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "dedup");
  const registry = new kopf.Registry();
  const calls: string[] = [];
  function createFn({ name }: kopf.ChangeContext) {
    calls.push(name!);
    return calls.length;
  }
  kopf.on.create("kopfexamples", { registry }, createFn);
  kopf.on.create("kex", { registry }, createFn);
  kopf.on.create({ group: "kopf.dev", kind: "KopfExample" }, { registry }, createFn);
  // Controls: each selector does match the object on its own.
  kopf.on.create("kex", { registry }, function byShortcutFn({ name }) {
    calls.push(`shortcut ${name}`);
  });
  kopf.on.create({ group: "kopf.dev", kind: "KopfExample" }, { registry }, function byKindFn({ name }) {
    calls.push(`kind ${name}`);
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "d");
    assert.equal(typeof await waitForStatus(namespace, "d", "createFn"), "number");
    await eventually("the diff-base", async () => {
      const body = await getExample(client, namespace, "d");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await probe.caughtUp(namespace, "d");
    assert.deepEqual(calls.sort(), ["d", "kind d", "shortcut d"]);
  } finally {
    await operator.stop();
  }
});

Deno.test("an operator runs only the handlers of its own registry, not those of the default one", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "registries");
  const calls: string[] = [];
  // On the default registry; the label filter keeps it away from every other test's objects.
  kopf.on.create("kopfexamples", { labels: { "registry-test": namespace } }, function defaultFn({ name }) {
    calls.push(`default ${name}`);
  });
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function ownFn({ name }) {
    calls.push(`own ${name}`);
    return "own";
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await client.request({
      method: "POST",
      path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`,
      body: {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: { name: "r", labels: { "registry-test": namespace } },
        spec: {},
      },
    });
    assert.equal(await waitForStatus(namespace, "r", "ownFn"), "own");
    await probe.caughtUp(namespace, "r");
    assert.deepEqual(calls, ["own r"]);
    const body = await getExample(client, namespace, "r");
    assert.equal((body.status as Status).defaultFn, undefined);
  } finally {
    await operator.stop();
  }
});

Deno.test("kopf run: value= without field= fails at import with a TypeError, exit code 1", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "invalid");
  await using kopf = await KopfProcess.start(namespace, ["tests/fixtures/invalid_handlers.ts"], {
    KOPF_TEST_INVALID: "value-without-field",
  });
  const status = await kopf.exited;
  assert.equal(status.code, 1, kopf.output);
  assert.match(kopf.output, /invalid_handlers\.ts/);
  assert.match(kopf.output, /TypeError.*value\/old\/new filters are specified without a mandatory field/);
});

Deno.test("kopf run: requiresFinalizer is not an option; it fails at import with a TypeError, exit code 1", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "invalid");
  await using kopf = await KopfProcess.start(namespace, ["tests/fixtures/invalid_handlers.ts"], {
    KOPF_TEST_INVALID: "requires-finalizer",
  });
  const status = await kopf.exited;
  assert.equal(status.code, 1, kopf.output);
  assert.match(kopf.output, /invalid_handlers\.ts/);
  assert.match(kopf.output, /TypeError.*unknown option requiresFinalizer/);
});
