/**
 * The registration functions: `on.create`, `on.event`, ... Each takes a resource selector,
 * optional options, and the handler function (`on.conversion` requires its options: the
 * versions). The activity handlers -- `on.startup`, `on.cleanup`, `on.probe`, `on.login` -- take
 * no resource: `(fn)` or `(options, fn)`.
 *
 * The options of each registration are typed here, and only here: `on.CreateOptions`,
 * `on.EventOptions`, `on.TimerOptions`, ... (`kopf.timer`, `kopf.daemon` and `kopf.index` are the
 * same functions as `on.timer`, `on.daemon` and `on.index`, and take the same options).
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
  type ActivityOptions,
  cleanup,
  create,
  type CreateOptions,
  del as delete,
  type DeleteOptions,
  event,
  type EventOptions,
  field,
  type FieldOptions,
  login,
  probe,
  resume,
  type ResumeOptions,
  startup,
  update,
  type UpdateOptions,
} from "./src/handling/registration.ts";
export { index, type IndexOptions } from "./src/handling/index_registration.ts";
export { daemon, type DaemonOptions, timer, type TimerOptions } from "./src/handling/background_registration.ts";
export { mutate, type MutateOptions, validate, type ValidateOptions } from "./src/handling/admission.ts";
export { conversion, type ConversionOptions } from "./src/handling/conversion.ts";
export type { ConversionFn, ConvertibleObject } from "./src/handling/conversion_handler.ts";
