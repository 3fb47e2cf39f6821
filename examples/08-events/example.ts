/**
 * Event handlers: called for every watch event of an object (its listing at startup, each
 * change, its deletion), with no progress kept on the object and no retries. A failing event
 * handler is logged and forgotten; the next event calls it again.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

kopf.on.event("kopfexamples", function eventFnWithError() {
  throw new Error("Oops!");
});

// `type` is ADDED, MODIFIED or DELETED for watch events, and null for objects seen in a listing.
kopf.on.event("kopfexamples", function normalEventFn({ type, name, logger }) {
  logger.info(`Event received: ${type ?? "listed"} ${name}`);
});
