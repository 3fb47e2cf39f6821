/**
 * Admission handlers (`kopf.on.validate`, `kopf.on.mutate`): the error that denies a request with
 * a message and a code, and their registration (what they are and receive: `admission_handler.ts`).
 *
 * @module
 */

import type { SelectorInput } from "../model/selector.ts";
import { shareInstances } from "../utils/process_global.ts";
import type { AdmissionFn, AdmissionHandlerOptions, AdmissionKind } from "./admission_handler.ts";
import type { Registry } from "./registry.ts";
import { parseRegistration } from "./registration_arguments.ts";

/** Options of an {@linkcode AdmissionError}. */
export interface AdmissionErrorOptions {
  /** The status code the API client sees; 500 by default. */
  code?: number;
}

/**
 * Denies an admission request with this message and code. Any other error thrown by an admission
 * handler denies too, with code 500 and the error's message.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.validate("kopfexamples", function checkNumbers({ spec }) {
 *   if (!Array.isArray(spec.numbers ?? [])) throw new kopf.AdmissionError("Numbers must be a list.", { code: 400 });
 * });
 * ```
 */
export class AdmissionError extends Error {
  /** The status code of the denial; 500 unless given. */
  readonly code: number;

  /**
   * Makes the error.
   *
   * @param message what the API client sees.
   * @param options the code.
   */
  constructor(message: string, options: AdmissionErrorOptions = {}) {
    super(message);
    this.name = "AdmissionError";
    this.code = options.code ?? 500;
  }
}

// A validating handler may throw it from another copy of the library: it must still deny with its code.
shareInstances(AdmissionError, "AdmissionError");

/** Options of `on.validate` and `on.mutate`, with the registry to add to. */
export type AdmissionOptions = AdmissionHandlerOptions & { registry?: Registry };
/** Options of `on.validate`. */
export type ValidateOptions = AdmissionOptions;
/** Options of `on.mutate`. */
export type MutateOptions = AdmissionOptions;

function register(
  type: AdmissionKind,
  args: readonly [unknown, unknown, unknown?],
): AdmissionFn {
  const { selector, registry, options, fn, id } = parseRegistration<AdmissionHandlerOptions, AdmissionFn>(type, args);
  const given = options.operation !== undefined ? [options.operation] : options.operations;
  registry.add({
    kind: "admission",
    type,
    id,
    selector,
    fn,
    options,
    operations: given === undefined ? null : [...new Set(given)],
  });
  return fn;
}

/**
 * Registers a validating admission handler: the API server asks it before objects are created,
 * changed or deleted (through the operator's webhook server, see `settings.admission`). Returning
 * admits the request; throwing an {@linkcode AdmissionError} denies it with its message and code,
 * any other error with code 500. Strings pushed into `warnings` are shown to the API client.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.validate("kopfexamples", function checkNumbers({ spec, warnings }) {
 *   if (spec.numbers === undefined) warnings.push("No numbers; the default is used.");
 *   else if (!Array.isArray(spec.numbers)) throw new kopf.AdmissionError("Numbers must be a list.", { code: 400 });
 * });
 * ```
 */
export function validate(resource: SelectorInput, fn: AdmissionFn): AdmissionFn;
/** With options: the handler id, filters, `operations`, `subresource`, the webhook flags, the registry. */
export function validate(resource: SelectorInput, options: ValidateOptions, fn: AdmissionFn): AdmissionFn;
export function validate(
  resource: SelectorInput,
  optionsOrFn: ValidateOptions | AdmissionFn,
  maybeFn?: AdmissionFn,
): AdmissionFn {
  return register("validate", [resource, optionsOrFn, maybeFn]);
}

/**
 * Registers a mutating admission handler: what it writes into `patch` (merge-patch semantics,
 * `null` removes) is returned to the API server as a JSON Patch and applied to the object before
 * it is stored. Errors deny the request as for {@linkcode validate}.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.mutate("kopfexamples", function defaultNumbers({ spec, patch }) {
 *   if (spec.numbers === undefined) patch.spec.numbers = [1, 2, 3];
 * });
 * ```
 */
export function mutate(resource: SelectorInput, fn: AdmissionFn): AdmissionFn;
/** With options: the handler id, filters, `operations`, `subresource`, the webhook flags, the registry. */
export function mutate(resource: SelectorInput, options: MutateOptions, fn: AdmissionFn): AdmissionFn;
export function mutate(
  resource: SelectorInput,
  optionsOrFn: MutateOptions | AdmissionFn,
  maybeFn?: AdmissionFn,
): AdmissionFn {
  return register("mutate", [resource, optionsOrFn, maybeFn]);
}
