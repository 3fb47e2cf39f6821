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

export { create, type CreateOptions, event, type EventOptions } from "./src/handling/registration.ts";
