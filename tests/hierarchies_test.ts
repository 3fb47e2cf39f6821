/**
 * Hierarchies end to end: children adopted by a kopfexample are garbage-collected with it by a
 * real garbage collector (a private LocalCluster with kube-controller-manager's garbagecollector).
 */

import assert from "node:assert/strict";
import { ApiNotFoundError } from "../src/api/errors.ts";
import { resourcePath } from "../src/api/paths.ts";
import { adopt, type ChildObject, removeOwnerReference } from "../src/kits/hierarchies.ts";
import { LocalCluster } from "../src/kits/local_cluster/local_cluster.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import * as kopf from "@kopf/kopf";
import {
  CONFIGMAPS,
  connect,
  createExample,
  deleteExample,
  freshNamespace,
  KOPFEXAMPLES,
  patchExample,
  testCluster,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";

Deno.test("an adopted ConfigMap is garbage-collected with its owner; a released one survives", async () => {
  await using cluster = await LocalCluster.start({ controllers: ["garbagecollector"] });
  const { client } = await connect(cluster.kubeconfig);
  try {
    const namespace = await freshNamespace(client, "hierarchy");
    await createExample(client, namespace, "parent");
    const owner = await patchExample(client, namespace, "parent", { metadata: { labels: { app: "demo" } } });

    const adopted: ChildObject = { apiVersion: "v1", kind: "ConfigMap", data: { key: "value" } };
    adopt(adopted, owner);
    const released: ChildObject = { apiVersion: "v1", kind: "ConfigMap", data: { key: "value" } };
    adopt(released, owner);
    removeOwnerReference(released, owner);

    const path = resourcePath(CONFIGMAPS, { namespace });
    const child = await client.request<KubernetesObject>({ method: "POST", path, body: adopted });
    const survivor = await client.request<KubernetesObject>({ method: "POST", path, body: released });

    assert.match(child.metadata.name!, /^parent-[a-z0-9]{5}$/, "named after the owner by generateName");
    assert.equal(child.metadata.namespace, namespace);
    assert.deepEqual(child.metadata.labels, { app: "demo" });
    assert.deepEqual(child.metadata.ownerReferences, [{
      apiVersion: "kopf.dev/v1",
      kind: "KopfExample",
      name: "parent",
      uid: owner.metadata.uid!,
      controller: true,
      blockOwnerDeletion: true,
    }]);
    assert.equal(survivor.metadata.ownerReferences, undefined);

    await deleteExample(client, namespace, "parent");
    const get = (name: string) =>
      client.request<KubernetesObject>({ path: resourcePath(CONFIGMAPS, { namespace, name }) });
    await eventually("the adopted ConfigMap to be garbage-collected", async () => {
      try {
        await get(child.metadata.name!);
        return undefined;
      } catch (error) {
        if (error instanceof ApiNotFoundError) return true;
        throw error;
      }
    }, { seconds: 120 });
    const kept = await get(survivor.metadata.name!);
    assert.equal(kept.metadata.uid, survivor.metadata.uid, "the released ConfigMap survives its former owner");
  } finally {
    client.close();
  }
});

Deno.test("inside a handler, the helpers default to the handled object: naming, namespace, labels, references", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "hierarchy-helpers");
  const registry = new kopf.Registry();
  const created: Record<string, KubernetesObject> = {};
  const expectedRefs: unknown[] = [];
  kopf.on.create("kopfexamples", { registry }, async function createFn({ body }) {
    const post = (path: string, child: ChildObject) =>
      client.request<KubernetesObject>({ method: "POST", path, body: child });
    const configmaps = resourcePath(CONFIGMAPS, { namespace });

    const generated: ChildObject = { apiVersion: "v1", kind: "ConfigMap" };
    kopf.harmonizeNaming(generated);
    kopf.adjustNamespace(generated);
    kopf.appendOwnerReference(generated);
    kopf.appendOwnerReference(generated); // the same owner is referenced once
    expectedRefs.push(kopf.buildOwnerReference(body));
    created.generated = await post(configmaps, generated);

    const strict: ChildObject = { apiVersion: "v1", kind: "ConfigMap" };
    kopf.harmonizeNaming(strict, undefined, { strict: true });
    kopf.adjustNamespace(strict);
    created.strict = await post(configmaps, strict);

    const kept: ChildObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "kept" } };
    kopf.label(kept, { a: "x" });
    kopf.label(kept, { a: "y" });
    created.kept = await post(configmaps, kept);

    const forced: ChildObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "forced" } };
    kopf.label(forced, { a: "x" });
    kopf.label(forced, { a: "y" }, { forced: true });
    created.forced = await post(configmaps, forced);

    // The API server accepts the Deployment only if its pod template got the labels its selector wants.
    const deployment: ChildObject = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "deployment" },
      spec: {
        selector: { matchLabels: { app: "demo" } },
        template: { metadata: {}, spec: { containers: [{ name: "c", image: "example.invalid/c" }] } },
      },
    };
    kopf.label(deployment, undefined, { nested: "spec.template" });
    kopf.adjustNamespace(deployment);
    created.deployment = await post(`/apis/apps/v1/namespaces/${namespace}/deployments`, deployment);
  });
  const operator = await runOperator(registry, namespace);
  try {
    await client.request({
      method: "POST",
      path: resourcePath(KOPFEXAMPLES, { namespace }),
      body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "p", labels: { app: "demo" } } },
    });
    await eventually("the children", () => created.deployment);
    const parent = await client.request<KubernetesObject>({
      path: resourcePath(KOPFEXAMPLES, { namespace, name: "p" }),
    });

    assert.match(created.generated.metadata.name!, /^p-[a-z0-9]{5}$/);
    assert.equal(created.generated.metadata.namespace, namespace);
    assert.deepEqual(
      created.generated.metadata.ownerReferences,
      expectedRefs,
      "buildOwnerReference is what is appended",
    );
    assert.deepEqual(created.generated.metadata.ownerReferences, [{
      apiVersion: "kopf.dev/v1",
      kind: "KopfExample",
      name: "p",
      uid: parent.metadata.uid!,
      controller: true,
      blockOwnerDeletion: true,
    }]);
    assert.equal(created.strict.metadata.name, "p");
    assert.equal(created.strict.metadata.namespace, namespace);
    assert.deepEqual(created.kept.metadata.labels, { a: "x" }, "existing labels are kept");
    assert.deepEqual(created.forced.metadata.labels, { a: "y" }, "forced overwrites");
    assert.deepEqual(created.deployment.metadata.labels, { app: "demo" }, "the owner's labels by default");
    const template = (created.deployment.spec as { template: { metadata: { labels?: unknown } } }).template;
    assert.deepEqual(template.metadata.labels, { app: "demo" }, "nested: the pod template too");
  } finally {
    await operator.stop();
  }
});

Deno.test("outside of a handler, the helpers need the owner explicitly", () => {
  assert.throws(() => kopf.adopt({ kind: "ConfigMap" }), /called outside of a handler/);
  assert.throws(() => kopf.label({ kind: "ConfigMap" }), /called outside of a handler/);
  assert.throws(() => kopf.harmonizeNaming({ kind: "ConfigMap" }), /called outside of a handler/);
  assert.throws(() => kopf.adjustNamespace({ kind: "ConfigMap" }), /called outside of a handler/);
});
