import assert from "node:assert/strict";
import type { KubernetesObject } from "../model/body.ts";
import { runWithObject } from "../handling/current_object.ts";
import {
  adjustNamespace,
  adopt,
  appendOwnerReference,
  buildObjectReference,
  buildOwnerReference,
  type ChildObject,
  harmonizeNaming,
  label,
  removeOwnerReference,
} from "./hierarchies.ts";

function owner(): KubernetesObject {
  return {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "kex1", namespace: "ns1", uid: "uid-1", labels: { app: "demo", tier: "back" } },
  };
}

const OWNER_REF = {
  controller: true,
  blockOwnerDeletion: true,
  apiVersion: "kopf.dev/v1",
  kind: "KopfExample",
  name: "kex1",
  uid: "uid-1",
};

Deno.test("appendOwnerReference adds a controller reference once per owner uid", () => {
  const child: ChildObject = { kind: "ConfigMap" };
  appendOwnerReference(child, owner());
  appendOwnerReference(child, owner());
  assert.deepEqual(child.metadata?.ownerReferences, [OWNER_REF]);

  const other = { ...owner(), metadata: { ...owner().metadata, uid: "uid-2", name: "kex2" } };
  appendOwnerReference(child, other, { controller: false, blockOwnerDeletion: null });
  assert.deepEqual(child.metadata?.ownerReferences?.[1], {
    controller: false,
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    name: "kex2",
    uid: "uid-2",
  });
});

Deno.test("the hierarchy functions take one object, arrays, nested arrays and iterables", () => {
  const a: ChildObject = {}, b: ChildObject = {}, c: ChildObject = {}, d: ChildObject = {};
  appendOwnerReference([a, [b, [c]], new Set([d])], owner());
  for (const obj of [a, b, c, d]) assert.deepEqual(obj.metadata?.ownerReferences, [OWNER_REF]);
  assert.throws(() => appendOwnerReference("text" as unknown as ChildObject, owner()), TypeError);
});

Deno.test("appendOwnerReference refuses an owner without a uid", () => {
  assert.throws(
    () => appendOwnerReference({}, { kind: "KopfExample", metadata: { name: "new" } }),
    /KopfExample new has no metadata\.uid/,
  );
});

Deno.test("removeOwnerReference removes the owner's references and keeps the others", () => {
  const foreign = { apiVersion: "v1", kind: "Secret", name: "s", uid: "uid-9" };
  const child: ChildObject = { metadata: { ownerReferences: [{ ...foreign }] } };
  appendOwnerReference(child, owner());
  removeOwnerReference(child, owner());
  assert.deepEqual(child.metadata?.ownerReferences, [foreign]);
  const bare: ChildObject = {};
  removeOwnerReference(bare, owner());
  assert.deepEqual(bare.metadata?.ownerReferences, []);
});

Deno.test("label keeps existing values unless forced", () => {
  const obj: ChildObject = {};
  label(obj, { a: "x" });
  label(obj, { a: "y", b: "z" });
  assert.deepEqual(obj.metadata?.labels, { a: "x", b: "z" });
  label(obj, { a: "y" }, { forced: true });
  assert.deepEqual(obj.metadata?.labels, { a: "y", b: "z" });
  const untouched: ChildObject = { metadata: { labels: { k: "v" } } };
  label(untouched, {});
  assert.deepEqual(untouched.metadata?.labels, { k: "v" });
});

Deno.test("label with nested paths labels existing sub-structures only", () => {
  const deployment: ChildObject = { kind: "Deployment", spec: { template: { spec: { containers: [] } } } };
  label(deployment, { app: "demo" }, { nested: "spec.template" });
  assert.deepEqual(deployment.metadata?.labels, { app: "demo" });
  const template = (deployment.spec as { template: ChildObject }).template;
  assert.deepEqual(template.metadata?.labels, { app: "demo" });

  const job: ChildObject = { kind: "Job", spec: {} };
  label(job, { app: "demo" }, { nested: ["spec.template", ["spec", "jobTemplate", "spec", "template"]] });
  assert.deepEqual(job.spec, {}, "absent sub-structures are not created");

  const cron: ChildObject = { kind: "CronJob", spec: { jobTemplate: { spec: { template: {} } } } };
  label(cron, { app: "demo" }, { nested: ["spec.template", ["spec", "jobTemplate", "spec", "template"]] });
  const cronTemplate = ((cron.spec as ChildObject).jobTemplate as { spec: { template: ChildObject } }).spec.template;
  assert.deepEqual(cronTemplate.metadata?.labels, { app: "demo" });
});

Deno.test("harmonizeNaming sets a prefix, or the exact name when strict", () => {
  const loose: ChildObject = {};
  harmonizeNaming(loose, "parent");
  assert.deepEqual(loose.metadata, { generateName: "parent-" });

  const strict: ChildObject = { metadata: { generateName: "x-" } };
  harmonizeNaming(strict, "parent", { strict: true });
  assert.deepEqual(strict.metadata, { generateName: "x-" }, "an existing generateName is kept");
  harmonizeNaming(strict, "parent", { strict: true, forced: true });
  assert.deepEqual(strict.metadata, { name: "parent" });

  const named: ChildObject = { metadata: { name: "own" } };
  harmonizeNaming(named, "parent");
  assert.deepEqual(named.metadata, { name: "own" });
  harmonizeNaming(named, "parent", { forced: true });
  assert.deepEqual(named.metadata, { generateName: "parent-" });
});

Deno.test("adjustNamespace sets the namespace unless present or forced", () => {
  const obj: ChildObject = {};
  adjustNamespace(obj, "ns1");
  assert.equal(obj.metadata?.namespace, "ns1");
  adjustNamespace(obj, "ns2");
  assert.equal(obj.metadata?.namespace, "ns1");
  adjustNamespace(obj, "ns2", { forced: true });
  assert.equal(obj.metadata?.namespace, "ns2");
  adjustNamespace(obj, null, { forced: true });
  assert.equal(obj.metadata && "namespace" in obj.metadata, false, "null with forced removes the namespace");
});

Deno.test("adopt = owner reference + name prefix + namespace + labels of the owner", () => {
  const child: ChildObject = { kind: "ConfigMap" };
  adopt(child, owner());
  assert.deepEqual(child, {
    kind: "ConfigMap",
    metadata: {
      ownerReferences: [OWNER_REF],
      generateName: "kex1-",
      namespace: "ns1",
      labels: { app: "demo", tier: "back" },
    },
  });

  const own: ChildObject = { metadata: { name: "mine", namespace: "elsewhere", labels: { app: "own" } } };
  adopt(own, owner());
  assert.equal(own.metadata?.name, "mine");
  assert.equal(own.metadata?.namespace, "elsewhere");
  assert.deepEqual(own.metadata?.labels, { app: "own", tier: "back" });
  adopt(own, owner(), { forced: true, strict: true });
  assert.equal(own.metadata?.name, "kex1");
  assert.equal(own.metadata?.namespace, "ns1");
  assert.deepEqual(own.metadata?.labels, { app: "demo", tier: "back" });
});

Deno.test("adopt with nested labels the pod template too", () => {
  const deployment: ChildObject = { kind: "Deployment", spec: { template: {} } };
  adopt(deployment, owner(), { nested: "spec.template" });
  const template = (deployment.spec as { template: ChildObject }).template;
  assert.deepEqual(template.metadata, { labels: { app: "demo", tier: "back" } }, "only labels go to nested parts");
});

Deno.test("the owner defaults to the object being handled, also after awaits", async () => {
  const body = owner();
  const child: ChildObject = { kind: "ConfigMap" };
  const standalone: ChildObject = {};
  await runWithObject(body, async () => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    adopt(child);
    label(standalone);
    harmonizeNaming(standalone);
    adjustNamespace(standalone);
    appendOwnerReference(standalone);
  });
  assert.equal(child.metadata?.generateName, "kex1-");
  assert.deepEqual(child.metadata?.ownerReferences, [OWNER_REF]);
  assert.deepEqual(standalone.metadata, {
    labels: { app: "demo", tier: "back" },
    generateName: "kex1-",
    namespace: "ns1",
    ownerReferences: [OWNER_REF],
  });
  runWithObject(body, () => removeOwnerReference(standalone));
  assert.deepEqual(standalone.metadata?.ownerReferences, []);
});

Deno.test("outside of a handler, an omitted owner, name, namespace or labels is a clear error", () => {
  assert.throws(() => adopt({}), /kopf\.adopt\(\) is called outside of a handler: pass the owner explicitly/);
  assert.throws(() => appendOwnerReference({}), /outside of a handler/);
  assert.throws(() => removeOwnerReference({}), /outside of a handler/);
  assert.throws(() => label({}), /kopf\.label\(\) .* pass the labels explicitly/);
  assert.throws(() => harmonizeNaming({}), /pass the name explicitly/);
  assert.throws(() => adjustNamespace({}), /pass the namespace explicitly/);
  assert.throws(() => adopt({}, { metadata: { uid: "u" } }), /name must be set explicitly/);
});

Deno.test("a cluster-scoped owner leaves children without a namespace", () => {
  const node = { apiVersion: "v1", kind: "Node", metadata: { name: "n1", uid: "uid-n" } };
  const child: ChildObject = {};
  adopt(child, node);
  assert.equal(child.metadata && "namespace" in child.metadata, false);
  assert.deepEqual(child.metadata?.labels, {});
});

Deno.test("buildOwnerReference refuses an owner without apiVersion, kind, name or uid, naming what is missing", () => {
  assert.throws(
    () => buildOwnerReference({ kind: "KopfExample", metadata: { uid: "u1" } }),
    (error: unknown) =>
      error instanceof TypeError &&
      /An owner reference needs the owner's apiVersion, metadata\.name: pass the owner as the API returned it/
        .test(error.message),
  );
  assert.throws(() => buildOwnerReference({}), /apiVersion, kind, metadata\.name, metadata\.uid/);
});

Deno.test("buildOwnerReference equals the appended entry; buildObjectReference omits absent fields", () => {
  const child: ChildObject = {};
  appendOwnerReference(child, owner());
  assert.deepEqual(buildOwnerReference(owner()), child.metadata?.ownerReferences?.[0]);
  assert.deepEqual(buildObjectReference(owner()), {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    name: "kex1",
    uid: "uid-1",
    namespace: "ns1",
  });
  assert.deepEqual(buildObjectReference({ kind: "Node", metadata: { name: "n1" } }), { kind: "Node", name: "n1" });
});
