/**
 * Peering: operators that serve the same objects know of each other through a peering object
 * (a KopfPeering in their namespace, or the ClusterKopfPeering), and only those of the highest
 * priority handle objects — the others pause. The handler is trivial: what this example shows
 * happens between processes (see the README).
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

kopf.on.create("kopfexamples", function createFn({ logger }) {
  logger.info("Handled by this operator.");
  return { handled: true };
});
