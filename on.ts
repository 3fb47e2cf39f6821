/**
 * The registration functions: `on.create`, `on.event`, … Each takes a resource selector,
 * optional options, and the handler function.
 *
 * @example
 * ```ts
 * import * as on from "@kopf/kopf/on";
 * on.create("kopfexamples", function createFn() {
 *   return { message: "hello world" };
 * });
 * ```
 *
 * @module
 */

export {
  create,
  type CreateOptions,
  del as delete,
  type DeleteOptions,
  event,
  type EventOptions,
  field,
  type FieldOptions,
  resume,
  type ResumeOptions,
  update,
  type UpdateOptions,
} from "./src/handling/registration.ts";
