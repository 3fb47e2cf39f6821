/**
 * The change handlers of an object's life: creation, updates, changes of one field, deletion,
 * and resuming after an operator restart. Several handlers of one kind run in the order they
 * were registered, each once: a handler that has succeeded is not called again for that change.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

// Resuming handlers run for objects that existed before the operator started (not on creation):
// the place to rebuild in-memory state that the last process lost.
kopf.on.resume("kopfexamples", function resumeFn1({ logger }) {
  logger.info("RESUMED 1st");
});

kopf.on.create("kopfexamples", function createFn1({ logger }) {
  logger.info("CREATED 1st");
});

kopf.on.resume("kopfexamples", function resumeFn2({ logger }) {
  logger.info("RESUMED 2nd");
});

kopf.on.create("kopfexamples", function createFn2({ logger }) {
  logger.info("CREATED 2nd");
});

// `diff` lists what changed since the last handled state; status and metadata changes are not in it.
kopf.on.update("kopfexamples", function updateFn({ diff, logger }) {
  logger.info(`UPDATED: ${JSON.stringify(diff)}`);
});

kopf.on.delete("kopfexamples", function deleteFn1({ logger }) {
  logger.info("DELETED 1st");
});

kopf.on.delete("kopfexamples", function deleteFn2({ logger }) {
  logger.info("DELETED 2nd");
});

// A field handler sees only its field: `old` and `new` are the field's values, not the whole object.
kopf.on.field("kopfexamples", { field: "spec.field" }, function fieldFn({ old, new: now, logger }) {
  logger.info(`FIELD CHANGED: ${JSON.stringify(old)} -> ${JSON.stringify(now)}`);
});
