/**
 * Everything at once: startup and cleanup activities, creation (with children, events, retries and
 * sub-handlers), update, field, resume and deletion handlers, an event handler on the children, an
 * index of them, a timer that reads the index, and a daemon — on the typed KopfExample.
 *
 * Run it from the repository root against a cluster with examples/crd.yaml applied:
 * `deno task kopf run -A --standalone examples/99-all-at-once/example.ts`,
 * then `kubectl apply -f examples/obj.yaml`. See README.md beside this file.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";
import type { V1ConfigMap, V1Pod } from "@kopf/kopf/types";
import type { KopfExample } from "../types.ts";

/** The label of the Pods this operator creates, and by which it finds them again. */
const POD_LABELS = { application: "kopf-example-99" };

kopf.on.startup(async function startupFnSimple({ logger }) {
  logger.info("Starting in 1s...");
  await kopf.sleep(1);
});

kopf.on.startup(function startupFnRetried({ retry, logger }) {
  if (retry < 2) throw new kopf.TemporaryError(`Going to succeed in ${2 - retry}s`, { delay: 1 });
  logger.info("Starting retried...");
});

kopf.on.cleanup(async function cleanupFn({ logger }) {
  logger.info("Cleaning up in 1s...");
  await kopf.sleep(1);
});

kopf.on.create<KopfExample>("kopfexamples", async function create1({ api, body }) {
  const child = kopf.adopt<V1ConfigMap>({ apiVersion: "v1", kind: "ConfigMap", data: { step: "job1" } });
  const created = await api.create(child);

  kopf.info(body, { reason: "AnyReason", message: "The first job has started." });
  kopf.event(body, { type: "Warning", reason: "SomeReason", message: "Cannot do something" });
  kopf.event(created, { type: "Normal", reason: "SomeReason", message: "Created as part of the job1step" });
  return { job1Status: 100, child: created.metadata.name };
});

// An arbitrary error is retried (after `backoff` seconds here, 60 by default), also across restarts:
// the retry count is stored on the object.
kopf.on.create<KopfExample>("kopfexamples", { backoff: 1 }, async function create2({ retry }) {
  await waitForSomething();
  if (!retry) throw new Error("Whoops!");
  return { job2Status: 100 };
});

kopf.on.create<KopfExample>("kopfexamples", async function createPod({ api, logger }) {
  const pod = kopf.adopt<V1Pod>({
    apiVersion: "v1",
    kind: "Pod",
    spec: {
      restartPolicy: "Never",
      containers: [{ name: "the-only-one", image: "busybox", command: ["sh", "-x", "-c", "sleep 1"] }],
    },
  });
  kopf.label(pod, POD_LABELS);
  const created = await api.create(pod);
  logger.info(`Created the Pod ${created.metadata.name}.`);
});

// One sub-handler per item of the spec: each has its own id, retries and result (status["createItems/<item>"]).
kopf.on.create<KopfExample>("kopfexamples", function createItems({ spec, subhandler }) {
  for (const item of stringList(spec.items)) {
    subhandler({ id: item }, ({ logger }) => {
      logger.info(`Item ${item} is handled.`);
      return { item };
    });
  }
});

kopf.on.update<KopfExample>("kopfexamples", function update({ diff, logger }) {
  logger.info(`Handling the diff: ${JSON.stringify(diff)}`);
});

kopf.on.field<KopfExample>("kopfexamples", { field: "spec.lst" }, function updateLst({ old, new: now, logger }) {
  logger.info(`Handling the FIELD = ${JSON.stringify(old)} -> ${JSON.stringify(now)}`);
});

kopf.on.resume<KopfExample>("kopfexamples", function resume({ reason, logger }) {
  logger.info(`Resumed (${reason}): the operator has found the object at its start.`);
});

kopf.on.delete<KopfExample>("kopfexamples", function deleteFn({ logger }) {
  logger.info("Deleted, really deleted");
});

kopf.on.event("pods", { labels: POD_LABELS }, function examplePodChange({ type, name, logger }) {
  logger.info(`This pod is special for us: ${name} (${type ?? "listed"}).`);
});

// The Pods of each KopfExample, by the namespace and name of their owner.
kopf.index("pods", { labels: POD_LABELS }, function podsByOwner({ body, namespace, name }) {
  const owner = body.metadata.ownerReferences?.find((ref) => ref.kind === "KopfExample");
  return owner ? { [JSON.stringify([namespace, owner.name])]: name } : null;
});

// Reads the index every second; the result goes to status.countPods, written only when it changes.
kopf.timer<KopfExample>("kopfexamples", { interval: 1 }, function countPods({ indices, namespace, name }) {
  const pods = indices.podsByOwner.get(JSON.stringify([namespace, name]));
  return { pods: pods?.size ?? 0 };
});

kopf.daemon<KopfExample>("kopfexamples", async function monitor({ stopped, logger }) {
  logger.info("Monitoring has started.");
  let beats = 0;
  while (!stopped.aborted) {
    beats += 1;
    await kopf.sleep(1, stopped);
  }
  const reason = stopped.reason as kopf.StopReason;
  logger.info(`Monitoring has stopped (${reason.causes.join(", ")}) after ${beats} beat(s).`);
});

/** Stands for a call to an external system that job 2 waits for. */
async function waitForSomething(): Promise<void> {
  // Asynchronous on purpose: a blocking wait in JavaScript would stop the whole operator.
  await kopf.sleep(1);
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}
