/**
 * The operator under test in example_test.ts: one creation handler that logs a line and
 * leaves a result on the object, so that a test can check both.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

kopf.on.create("kopfexamples", function createFn({ logger }) {
  logger.info("Something was logged here.");
  return { logged: true };
});
