/**
 * Admission handlers (`kopf.on.validate`, `kopf.on.mutate`): the error that denies a request with
 * a message and a code, and their registration (what they are and receive: `admission_handler.ts`).
 *
 * @module
 */

import { Selector, type SelectorInput } from "../model/selector.ts";
import { shareInstances } from "../utils/process_global.ts";
import { ADMISSION_OPERATIONS } from "../model/admission.ts";
import type { AdmissionFn, AdmissionHandlerOptions, AdmissionKind } from "./admission_handler.ts";
import { validateFilters } from "./filters.ts";
import { defaultRegistry, type Registry } from "./registry.ts";
import { handlerId } from "./registration.ts";

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

const ALLOWED = [
  "id",
  "param",
  "labels",
  "annotations",
  "when",
  "field",
  "value",
  "operations",
  "operation",
  "subresource",
  "persistent",
  "sideEffects",
  "ignoreFailures",
  "registry",
];

function register(
  type: AdmissionKind,
  resource: SelectorInput,
  optionsOrFn: AdmissionOptions | AdmissionFn,
  maybeFn: AdmissionFn | undefined,
): AdmissionFn {
  const where = `on.${type}()`;
  let options: AdmissionOptions;
  let fn: AdmissionFn;
  if (typeof optionsOrFn === "function") {
    if (maybeFn !== undefined) throw new TypeError(`${where}: give either (resource, fn) or (resource, options, fn).`);
    [options, fn] = [{}, optionsOrFn];
  } else {
    if (typeof maybeFn !== "function") {
      throw new TypeError(`${where}: the last argument must be the handler function, got ${typeof maybeFn}.`);
    }
    [options, fn] = [optionsOrFn ?? {}, maybeFn];
  }
  const unknown = Object.keys(options).filter((key) => !ALLOWED.includes(key));
  if (unknown.length) {
    const retrying = unknown.filter((key) => ["errors", "timeout", "retries", "backoff"].includes(key));
    throw new TypeError(
      `${where}: unknown option${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; ` +
        (retrying.length
          ? "admission handlers are never retried, so errors/timeout/retries/backoff do not apply; "
          : "") +
        `the options are: ${ALLOWED.join(", ")}.`,
    );
  }
  const selector = new Selector(resource);
  const { registry = defaultRegistry, ...rest } = options;
  validateFilters(type, rest);
  if (rest.operation !== undefined && rest.operations !== undefined) {
    throw new TypeError(`${where}: give either operation or operations, not both.`);
  }
  const given = rest.operation !== undefined ? [rest.operation] : rest.operations;
  if (given !== undefined) {
    if (!Array.isArray(given) || given.length === 0) {
      throw new TypeError(
        `${where}: operations must be a non-empty list of ${ADMISSION_OPERATIONS.join(", ")}; ` +
          `leave it out for all operations.`,
      );
    }
    const bad = given.filter((operation) => !ADMISSION_OPERATIONS.includes(operation));
    if (bad.length) {
      throw new TypeError(
        `${where}: unknown operation${bad.length > 1 ? "s" : ""} ${bad.map((op) => JSON.stringify(op)).join(", ")}; ` +
          `the operations are ${ADMISSION_OPERATIONS.join(", ")}.`,
      );
    }
  }
  if (rest.subresource !== undefined && (typeof rest.subresource !== "string" || rest.subresource === "")) {
    throw new TypeError(`${where}: subresource must be a name such as "status", or "*" for all.`);
  }
  for (const flag of ["persistent", "sideEffects", "ignoreFailures"] as const) {
    if (rest[flag] !== undefined && typeof rest[flag] !== "boolean") {
      throw new TypeError(`${where}: ${flag} must be true or false.`);
    }
  }
  registry.add({
    kind: "admission",
    type,
    id: handlerId(type, selector, rest, fn),
    selector,
    fn,
    options: rest,
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
/** With options: the handler id, filters, retries, the registry, …. */
export function validate(resource: SelectorInput, options: ValidateOptions, fn: AdmissionFn): AdmissionFn;
export function validate(
  resource: SelectorInput,
  optionsOrFn: ValidateOptions | AdmissionFn,
  maybeFn?: AdmissionFn,
): AdmissionFn {
  return register("validate", resource, optionsOrFn, maybeFn);
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
/** With options: the handler id, filters, retries, the registry, …. */
export function mutate(resource: SelectorInput, options: MutateOptions, fn: AdmissionFn): AdmissionFn;
export function mutate(
  resource: SelectorInput,
  optionsOrFn: MutateOptions | AdmissionFn,
  maybeFn?: AdmissionFn,
): AdmissionFn {
  return register("mutate", resource, optionsOrFn, maybeFn);
}
