/**
 * What a converter is: the object it receives and returns, its function, its options, and its
 * record in the registry. Kept apart from its registration (`conversion.ts`), which needs the
 * registry, while the registry needs only these types.
 *
 * @module
 */

import type { ObjectMeta } from "../model/body.ts";
import type { Selector } from "../model/selector.ts";

/**
 * An object of a custom resource as converters receive it (a copy: change it freely) and return
 * it, with its spec typed as `Spec` (untyped by default). Give the types of your versions instead,
 * e.g. `kopf.on.conversion<ConvertibleObject<WidgetV1Spec>, ConvertibleObject<WidgetV2Spec>>(...)`.
 */
export interface ConvertibleObject<Spec = Record<string, unknown> | undefined> {
  /** `group/version`: the `from` version's when received; set to the `to` version's after return. */
  apiVersion: string;
  /** The kind; kept as it is. */
  kind: string;
  /** The metadata: only changes to `labels` and `annotations` are kept. */
  metadata: ObjectMeta;
  /** The spec, as stored. */
  spec: Spec;
  /** The status, as stored. */
  status?: Record<string, unknown>;
  /** Any other field. */
  [key: string]: unknown;
}

/**
 * A converter: given an object at the `from` version, returns it at the `to` version (or a
 * promise of it). Throwing fails the conversion: the API request that needed it fails with the
 * error's message.
 */
export type ConversionFn<F = ConvertibleObject, T = ConvertibleObject> = (body: F) => T | Promise<T>;

/** Options of converters. */
export interface ConversionHandlerOptions {
  /** The version it converts from, e.g. `v1`. */
  from: string;
  /** The version it converts to, e.g. `v2`. */
  to: string;
  /** The converter's id in logs, metrics and spans; the function's name, else `<from>-to-<to>`. */
  id?: string;
}

/** A registered converter. */
export interface ConversionHandler {
  /** Always `conversion`: the registry keeps these apart. */
  readonly kind: "conversion";
  /** The converter id. */
  readonly id: string;
  /** The custom resource whose versions it converts. */
  readonly selector: Selector;
  /** The version it converts from. */
  readonly from: string;
  /** The version it converts to. */
  readonly to: string;
  /** The function. */
  readonly fn: ConversionFn<never, unknown>;
}
