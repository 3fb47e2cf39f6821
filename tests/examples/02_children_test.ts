/**
 * examples/02-children as its README describes it: `kopf run` on the example creates an adopted
 * ConfigMap and Pod per KopfExample through the client, lists their names in the status, and the
 * garbage collector deletes them with their parent (a private LocalCluster with kube-controller-manager's
 * garbagecollector: the shared cluster of `deno task test` runs no controllers).
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { LocalCluster } from "@kopf/kopf/testing";
import type { V1ConfigMap, V1Pod } from "@kopf/kopf/types";
import type { KopfExample } from "../../examples/types.ts";
import { connect, freshNamespace } from "../support/cluster.ts";
import { eventually } from "../support/eventually.ts";
import { KopfProcess } from "../support/kopf_process.ts";

Deno.test("examples/02-children: adopted ConfigMap and Pod, named in the status, deleted with their parent", async () => {
  await using cluster = await LocalCluster.start({ controllers: ["garbagecollector"] });
  const { client } = await connect(cluster.kubeconfig); // applies examples/crd.yaml
  using api = await kopf.connect({ kubeconfig: cluster.kubeconfig });
  try {
    const namespace = await freshNamespace(client, "example-02");
    await using operator = await KopfProcess.start(namespace, ["examples/02-children/example.ts"], {
      KUBECONFIG: cluster.kubeconfig,
    });

    const parent = await api.create<KopfExample>({
      apiVersion: "kopf.dev/v1",
      kind: "KopfExample",
      metadata: { name: "kopf-example-1", namespace, labels: { somelabel: "somevalue" } },
      spec: { duration: "1m", field: "value" },
    });
    const children = await eventually("status.createFn.children", async () => {
      const current = await api.get<KopfExample>("kopfexamples", "kopf-example-1", { namespace });
      const result = current?.status?.createFn as { children?: string[] } | undefined;
      return result?.children;
    });
    assert.equal(children.length, 2, `two children: ${JSON.stringify(children)}`);
    const [configName, podName] = children;
    assert.match(configName, /^kopf-example-1-[a-z0-9]{5}$/, "named after the parent by generateName");
    assert.match(podName, /^kopf-example-1-[a-z0-9]{5}$/);

    const config = await api.get<V1ConfigMap>("configmaps", configName, { namespace });
    const pod = await api.get<V1Pod>("pods", podName, { namespace });
    assert.ok(config && pod, "both children exist");
    const owner = {
      apiVersion: "kopf.dev/v1",
      kind: "KopfExample",
      name: "kopf-example-1",
      uid: parent.metadata!.uid!,
      controller: true,
      blockOwnerDeletion: true,
    };
    for (const child of [config, pod]) {
      assert.deepEqual(child.metadata?.ownerReferences, [owner], `${child.kind} is owned by the KopfExample`);
      assert.equal(child.metadata?.labels?.somelabel, "somevalue", `${child.kind} has the parent's labels`);
    }
    assert.deepEqual(config.data, { FIELD: "value" });
    const container = pod.spec!.containers[0];
    assert.deepEqual(container.envFrom, [{ configMapRef: { name: configName } }], "the Pod reads the ConfigMap");
    assert.match(container.command!.join(" "), /sleep 60$/, "duration 1m is 60 s of sleep");
    await operator.waitForLine(new RegExp(`Created the ConfigMap ${configName} and the Pod ${podName}\\.`));
    await operator.waitForLine(/Handler 'createFn' succeeded\./);
    const handled = await api.get<KopfExample>("kopfexamples", "kopf-example-1", { namespace });
    assert.equal(
      handled?.metadata?.finalizers,
      undefined,
      "no deletion handler, so no finalizer: the GC does the rest",
    );

    await api.delete("kopfexamples", "kopf-example-1", { namespace });
    // About 40 s: the garbage collector watches a CRD created after its start only from its next
    // discovery resync (every 30 s), and only then learns that the owner is gone.
    await eventually("the garbage collector to delete both children", async () => {
      const left = [
        await api.get("configmaps", configName, { namespace }),
        await api.get("pods", podName, { namespace }),
      ];
      return left.every((child) => child === null) || undefined;
    }, { seconds: 120 });
    assert.doesNotMatch(operator.output, /Traceback|Error:/, "the operator logged no error");
  } finally {
    client.close();
  }
});
