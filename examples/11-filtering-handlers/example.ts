/**
 * Filters: a handler runs only for objects whose labels, annotations or fields match, or for
 * which a `when` callback says yes. For examples/obj.yaml (label `somelabel: somevalue`,
 * annotation `someannotation: somevalue`, `spec.field: value`), the handlers named `…Matching`,
 * `…Present`, `…Absent` and `…Satisfied` run; those named `…Mismatching` or `…NotSatisfied` do not.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

// A value callback gets the label's (or annotation's) value and the handler's context.
const sayYes: kopf.ValueCallback = (value, { spec }) => value === "somevalue" && spec.field !== undefined;
const sayNo: kopf.ValueCallback = (value, { spec }) => value === "somevalue" && spec.field === "not-this-value";

kopf.on.create("kopfexamples", { labels: { somelabel: "somevalue" } }, function labelMatching({ logger }) {
  logger.info("Label is matching.");
});

kopf.on.create("kopfexamples", { labels: { somelabel: kopf.PRESENT } }, function labelPresent({ logger }) {
  logger.info("Label is present.");
});

kopf.on.create("kopfexamples", { labels: { nonexistent: kopf.ABSENT } }, function labelAbsent({ logger }) {
  logger.info("Label is absent.");
});

kopf.on.create("kopfexamples", { labels: { somelabel: sayYes } }, function labelCallbackMatching({ logger }) {
  logger.info("Label callback is matching.");
});

kopf.on.create(
  "kopfexamples",
  { annotations: { someannotation: "somevalue" } },
  function annotationMatching({ logger }) {
    logger.info("Annotation is matching.");
  },
);

kopf.on.create(
  "kopfexamples",
  { annotations: { someannotation: kopf.PRESENT } },
  function annotationPresent({ logger }) {
    logger.info("Annotation is present.");
  },
);

kopf.on.create("kopfexamples", { annotations: { nonexistent: kopf.ABSENT } }, function annotationAbsent({ logger }) {
  logger.info("Annotation is absent.");
});

kopf.on.create(
  "kopfexamples",
  { annotations: { someannotation: sayNo } },
  function annotationCallbackMismatching({ logger }) {
    logger.info("Annotation callback is matching (it should not).");
  },
);

kopf.on.create("kopfexamples", { when: () => true }, function whenSatisfied({ logger }) {
  logger.info("Filter is satisfied.");
});

kopf.on.create("kopfexamples", { when: () => false }, function whenNotSatisfied({ logger }) {
  logger.info("Filter is satisfied (it should not be).");
});

// With `field`, the id gets the field appended: this one is `fieldValueSatisfied/spec.field`.
kopf.on.create("kopfexamples", { field: "spec.field", value: "value" }, function fieldValueSatisfied({ logger }) {
  logger.info("Field value is satisfied.");
});

kopf.on.create(
  "kopfexamples",
  { field: "spec.field", value: "something-else" },
  function fieldValueNotSatisfied({ logger }) {
    logger.info("Field value is satisfied (it should not be).");
  },
);

kopf.on.create(
  "kopfexamples",
  { field: "spec.field", value: kopf.PRESENT },
  function fieldPresenceSatisfied({ logger }) {
    logger.info("Field presence is satisfied.");
  },
);

kopf.on.create(
  "kopfexamples",
  { field: "spec.inexistent", value: kopf.PRESENT },
  function fieldPresenceNotSatisfied({ logger }) {
    logger.info("Field presence is satisfied (it should not be).");
  },
);

// `old` and `new` select one transition of the field, not any change of it.
kopf.on.update(
  "kopfexamples",
  { field: "spec.field", old: "value", new: "changed" },
  function fieldChangeSatisfied({ logger }) {
    logger.info("Field change is satisfied.");
  },
);

// Daemons and timers filter too: this one runs while `spec.field` is "value", and stops otherwise.
kopf.daemon("kopfexamples", { field: "spec.field", value: "value" }, async function fieldDaemon({ stopped, logger }) {
  while (!stopped.aborted) {
    logger.info("Field daemon is satisfied.");
    await kopf.sleep(1, stopped);
  }
  logger.info("Field daemon has stopped.");
});
