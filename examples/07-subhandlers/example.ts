/**
 * Sub-handlers: a handler that discovers its work while it runs (one piece per item of the
 * spec) declares a sub-handler per piece. Each one has its own id, progress, retries and result,
 * so a piece that fails is retried alone, and the pieces already done are not repeated.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

kopf.on.create("kopfexamples", function createFn({ spec, subhandler }) {
  const items = Array.isArray(spec.items) ? spec.items.map(String) : [];
  for (const item of items) {
    // The id must be stable across calls of the parent: it names the piece's state on the object.
    subhandler({ id: item }, function createItemFn({ logger }) {
      logger.info(`=== Handling creation for ${item}. ===`);
      return { item }; // stored at status["createFn/<item>"]
    });
  }
});
