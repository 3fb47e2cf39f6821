/**
 * Kubernetes Events from handlers: they appear in `kubectl describe` of the object and in
 * `kubectl get events`, where cluster users look first, without access to the operator's logs.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

kopf.on.create("kopfexamples", function createFn({ body }) {
  // The general form: any type, reason and message.
  kopf.event(body, { type: "SomeType", reason: "SomeReason", message: "Some message" });

  // The two conventional types have shortcuts: Normal and Warning.
  kopf.info(body, { reason: "Noticed", message: "An informational message" });
  kopf.warn(body, { reason: "Suspicious", message: "A warning message" });

  // A caught error becomes an event of type Error; its message ends with the error's own text.
  try {
    throw new RangeError("The size is out of range.");
  } catch (error) {
    kopf.exception(body, { reason: "Failed", message: "Resizing failed:", error });
  }
});
