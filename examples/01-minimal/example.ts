/**
 * The smallest operator: one creation handler whose result becomes the object's status.
 *
 * Run it from the repository root against a cluster with examples/crd.yaml applied:
 * `deno task kopf run -A --standalone examples/01-minimal/example.ts`,
 * then `kubectl apply -f examples/obj.yaml`.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

kopf.on.create("kopfexamples", function createFn({ spec, logger }) {
  logger.info(`And here we are! Created with spec: ${JSON.stringify(spec)}`);
  return { message: "hello world" }; // stored at status.createFn
});
