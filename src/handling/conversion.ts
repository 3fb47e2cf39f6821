/**
 * Converters (`kopf.on.conversion`): functions that turn an object of a custom resource from one
 * of its versions into another, served by the operator as the CRD's conversion webhook (what they
 * are: `conversion_handler.ts`; how reviews are answered: `engines/conversion.ts`).
 *
 * @module
 */

import type { SelectorInput } from "../model/selector.ts";
import type { ConversionFn, ConversionHandlerOptions, ConvertibleObject } from "./conversion_handler.ts";
import type { Registry } from "./registry.ts";
import { functionName, parseRegistration } from "./registration_arguments.ts";

/** Options of `on.conversion`: the versions, the converter id, and the registry to add to. */
export type ConversionOptions = ConversionHandlerOptions & { registry?: Registry };

/**
 * An anonymous converter (`(body) => ...`, as converters usually are) gets `<from>-to-<to>` as its
 * id; anything malformed is left for the registration pipeline to refuse with its usual words.
 */
function withDefaultId(options: unknown, fn: unknown): unknown {
  if (typeof fn !== "function" || functionName(fn) !== "") return options;
  if (typeof options !== "object" || options === null || Array.isArray(options)) return options;
  const { id, from, to } = options as Partial<ConversionOptions>;
  if (id !== undefined || typeof from !== "string" || typeof to !== "string") return options;
  return { ...options, id: `${from}-to-${to}` };
}

/**
 * Registers a converter of a custom resource from one version to another. The operator serves
 * the CRD's conversion webhook on its webhook server (`settings.admission.server`) and, when the
 * webhooks are managed (`settings.admission.managed`), points the CRD's `spec.conversion` at it.
 *
 * The converter gets a copy of the object at `from` and returns it at `to`; the framework sets
 * `apiVersion` and keeps `kind` and the metadata (but labels and annotations, which converters
 * may change). Conversions between versions without a converter go through several, by the
 * shortest chain. Throwing fails the API request that needed the conversion, with the message.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.conversion("widgets.example.com", { from: "v1", to: "v2" }, (body) => {
 *   const [value, unit] = String(body.spec?.size ?? "0Gi").split(/(?=[A-Za-z])/);
 *   return { ...body, spec: { ...body.spec, size: { value: Number(value), unit } } };
 * });
 * ```
 */
export function conversion<F = ConvertibleObject, T = ConvertibleObject>(
  resource: SelectorInput,
  options: ConversionOptions,
  fn: ConversionFn<F, T>,
): ConversionFn<F, T> {
  const parsed = parseRegistration<ConversionHandlerOptions, ConversionFn<never, unknown>>(
    "conversion",
    [resource, withDefaultId(options, fn), fn],
  );
  const { selector, registry, options: given, id } = parsed;
  registry.add({ kind: "conversion", id, selector, from: given.from, to: given.to, fn: parsed.fn });
  return fn;
}
