/**
 * Built-in resources: handlers take pods, config maps or deployments as they take custom
 * resources. Here, every pod outside the system namespaces gets a lifetime (30 s, or its
 * `example.kopf.dev/lifetime` annotation), after which it is labelled `expired=true` — the
 * harmless half of a chaos tool that would delete it (deleting needs a client, see 02-children).
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

const LIFETIME = "example.kopf.dev/lifetime";

// System pods are never touched: breaking the control plane breaks the operator too.
const notSystem: kopf.WhenCallback = ({ namespace }) => !namespace?.startsWith("kube-");

// A daemon per pod is the pod's timer: the framework starts one for every matching pod (also for
// those that existed before a restart) and stops it when the pod is deleted, so no bookkeeping of
// our own is needed. Expired pods match no more and get no daemon.
kopf.daemon(
  "pods",
  { when: notSystem, labels: { expired: kopf.ABSENT } },
  async function expire({ annotations, stopped, patch, logger }) {
    const lifetime = Number(annotations[LIFETIME] ?? 30);
    logger.info(`=== The pod expires in ${lifetime} s.`);
    if (await kopf.sleep(lifetime, stopped)) {
      logger.info("=== The pod's expiry is cancelled: it is deleted, or the operator is stopping.");
      return;
    }
    patch.metadata.labels.expired = "true";
    logger.info("=== The pod has expired.");
  },
);
