/**
 * Children: on creation of a KopfExample, a ConfigMap and a Pod that reads it are created through
 * the operator's own client, both adopted by the KopfExample, so that deleting it deletes them too.
 *
 * Run it from the repository root against a cluster with examples/crd.yaml applied:
 * `deno task kopf run -A --standalone examples/02-children/example.ts`,
 * then `kubectl apply -f examples/obj.yaml`. See README.md beside this file.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";
import type { V1ConfigMap, V1Pod } from "@kopf/kopf/types";
import type { KopfExample } from "../types.ts";

kopf.on.create<KopfExample>("kopfexamples", async function createFn({ api, spec, logger }) {
  const field = typeof spec.field === "string" ? spec.field : "default-value";
  const duration = typeof spec.duration === "string" ? spec.duration : "0";

  // adopt() names the child after the parent (generateName), puts it into the parent's namespace,
  // copies the parent's labels and adds the owner reference that the garbage collector follows.
  const config = kopf.adopt<V1ConfigMap>({ apiVersion: "v1", kind: "ConfigMap", data: { FIELD: field } });
  const createdConfig = await api.create(config);
  const configName = createdConfig.metadata!.name!;

  const pod = kopf.adopt<V1Pod>({
    apiVersion: "v1",
    kind: "Pod",
    spec: {
      restartPolicy: "Never",
      containers: [{
        name: "the-only-one",
        image: "busybox",
        command: ["sh", "-x", "-c", `echo "FIELD=$FIELD"; sleep ${sleepSeconds(duration)}`],
        envFrom: [{ configMapRef: { name: configName } }],
      }],
    },
  });
  const createdPod = await api.create(pod);
  const podName = createdPod.metadata!.name!;

  logger.info(`Created the ConfigMap ${configName} and the Pod ${podName}.`);
  return { children: [configName, podName] }; // stored at status.createFn.children
});

/** Kopf's example objects say `duration: 1m`; `sleep` of busybox wants seconds. */
function sleepSeconds(duration: string): number {
  const match = /^(\d+)\s*([smh]?)$/.exec(duration.trim());
  if (!match) return 0;
  const factor = { "": 1, s: 1, m: 60, h: 3600 }[match[2] as "" | "s" | "m" | "h"];
  return Number(match[1]) * factor;
}
