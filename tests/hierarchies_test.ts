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
import {
  CONFIGMAPS,
  connect,
  createExample,
  deleteExample,
  freshNamespace,
  patchExample,
  waitFor,
} from "./support/cluster.ts";

Deno.test("an adopted ConfigMap is garbage-collected with its owner; a released one survives (24.1, 24.2, 24.6)", async () => {
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
    await waitFor("the adopted ConfigMap to be garbage-collected", async () => {
      try {
        await get(child.metadata.name!);
        return undefined;
      } catch (error) {
        if (error instanceof ApiNotFoundError) return true;
        throw error;
      }
    }, 120);
    const kept = await get(survivor.metadata.name!);
    assert.equal(kept.metadata.uid, survivor.metadata.uid, "the released ConfigMap survives its former owner");
  } finally {
    client.close();
  }
});
