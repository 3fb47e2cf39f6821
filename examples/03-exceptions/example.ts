/**
 * Errors and retries: what a handler's failure means depends on what it throws and on its
 * `errors`, `retries` and `backoff` options. All four handlers run for every new kopfexample;
 * the object's creation is processed once each of them has succeeded or failed for good.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

/** An error of the application's own, which the framework knows nothing about. */
class FlakyBackendError extends Error {
  override name = "FlakyBackendError";
}

// A PermanentError says "retrying cannot help": the handler fails at once and is never called again.
kopf.on.create("kopfexamples", function failsForGood() {
  throw new kopf.PermanentError("The spec can never be satisfied.");
});

// A TemporaryError says "try again later": `retry` counts the attempts, so the fourth one succeeds.
kopf.on.create("kopfexamples", function succeedsEventually({ retry, logger }) {
  if (retry < 3) throw new kopf.TemporaryError(`Not ready yet (attempt ${retry + 1}).`, { delay: 1 });
  logger.info(`Succeeded after ${retry} retries.`);
});

// Any other error is temporary by default; `retries` bounds how often it is tried before giving up.
kopf.on.create("kopfexamples", { retries: 3, backoff: 1 }, function givesUpAfterRetries() {
  throw new FlakyBackendError("The backend did not answer.");
});

// With `errors: "permanent"`, an unexpected error is treated as a PermanentError: no retries.
kopf.on.create("kopfexamples", { errors: "permanent" }, function failsAtFirstError() {
  throw new FlakyBackendError("The backend did not answer.");
});
