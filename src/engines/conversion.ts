/**
 * Answering conversion reviews: finding the converters of the objects' custom resource, the
 * shortest chain of converters from each object's version to the desired one, running it on a
 * copy of the object, and turning the outcome into a response -- the converted objects with their
 * new `apiVersion` and their original metadata (labels and annotations aside), or the first
 * failure's message, which the API client sees.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ConversionHandler } from "../handling/conversion_handler.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import type { KubernetesObject } from "../model/body.ts";
import { type Resource, resourceName } from "../model/resource.ts";
import {
  buildConversionResponse,
  type ConversionReview,
  parseConversionReview,
  restoredMetadata,
  splitApiVersion,
} from "../model/conversion_review.ts";
import { recordWebhook } from "../observability/metrics.ts";
import { traceWebhook } from "../observability/tracing.ts";

const logger = getLogger(["kopf", "conversion"]);

/** The converters of one custom resource, as the selectors of `on.conversion` resolve. */
export interface ConversionTarget {
  /** The CRD's name: `<plural>.<group>`. */
  readonly name: string;
  /** The API group. */
  readonly group: string;
  /** The kind of its objects. */
  readonly kind: string;
  /** Its converters, in registration order. */
  readonly converters: readonly ConversionHandler[];
}

/** What answering conversion reviews needs. */
export interface ConversionServing {
  /** The custom resources with converters now (read on every review). */
  readonly targets: () => readonly ConversionTarget[];
}

/**
 * A conversion that cannot be done: no chain of converters, a converter's failure, or a result
 * that is not an object. Its message is what the API client sees.
 */
export class ConversionError extends Error {
  /**
   * Makes the error.
   *
   * @param message what the API client sees.
   * @param options the original error as `cause`, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ConversionError";
  }
}

/**
 * The custom resources with converters: each converter's selector resolved among the discovered
 * resources (one CRD, `<plural>.<group>`, whatever version the selector names). Unresolved or
 * ambiguous selectors, core resources, and converters between the same versions as an earlier
 * one are warned about and left out.
 */
export function resolveTargets(
  converters: readonly ConversionHandler[],
  resources: readonly Resource[],
): ConversionTarget[] {
  const targets = new Map<string, ConversionTarget & { converters: ConversionHandler[] }>();
  for (const converter of converters) {
    const { resources: selected, ambiguous } = converter.selector.select(resources);
    if (ambiguous.length || selected.length === 0) {
      logger.warn("The converter {id} converts nothing: {selector} is {problem}.", {
        id: converter.id,
        selector: String(converter.selector),
        problem: ambiguous.length ? `ambiguous (${ambiguous.map(resourceName).join(", ")})` : "not found",
      });
      continue;
    }
    for (const resource of selected) {
      if (!resource.group) {
        logger.warn("The converter {id} is ignored: {resource} is a core resource, not a custom one.", {
          id: converter.id,
          resource: resourceName(resource),
        });
        continue;
      }
      const name = `${resource.plural}.${resource.group}`;
      const target = targets.get(name) ?? { name, group: resource.group, kind: resource.kind, converters: [] };
      targets.set(name, target);
      const twin = target.converters.find((other) => other.from === converter.from && other.to === converter.to);
      if (twin === undefined) target.converters.push(converter);
      else if (twin !== converter) {
        logger.warn("The converter {id} is ignored: {other} converts {name} from {from} to {to} already.", {
          id: converter.id,
          other: twin.id,
          name,
          from: converter.from,
          to: converter.to,
        });
      }
    }
  }
  return [...targets.values()];
}

/** The converters as messages list them: `v1->v2 (v1ToV2), v2->v1 (v2ToV1)`. */
export function describeConverters(converters: readonly ConversionHandler[]): string {
  if (converters.length === 0) return "none";
  return converters.map((converter) => `${converter.from}\u2192${converter.to} (${converter.id})`).join(", ");
}

/**
 * The shortest chain of converters from one version to another (breadth-first; of equally short
 * chains, the one through the earliest registered converters); `[]` for the same version;
 * `undefined` when no chain leads there. Of several converters between the same two versions,
 * the first registered one is used.
 *
 * @example
 * ```ts ignore
 * findChain(converters, "v1", "v3"); // [v1->v2, v2->v3] when only those are registered
 * ```
 */
export function findChain(
  converters: readonly ConversionHandler[],
  from: string,
  to: string,
): ConversionHandler[] | undefined {
  const cameBy = new Map<string, ConversionHandler | null>([[from, null]]);
  const queue = [from];
  while (queue.length > 0 && !cameBy.has(to)) {
    const version = queue.shift()!;
    for (const converter of converters) {
      if (converter.from !== version || cameBy.has(converter.to)) continue;
      cameBy.set(converter.to, converter);
      queue.push(converter.to);
    }
  }
  if (!cameBy.has(to)) return undefined;
  const chain: ConversionHandler[] = [];
  for (let step = cameBy.get(to); step; step = cameBy.get(step.from)) chain.unshift(step);
  return chain;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name || String(error);
  return String(error);
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Runs one converter on a copy of an object; the result with the `to` version's `apiVersion`. */
async function runConverter(
  converter: ConversionHandler,
  body: KubernetesObject,
  group: string,
  objectLogger: ObjectLogger,
): Promise<KubernetesObject> {
  const began = performance.now();
  let result: unknown;
  try {
    result = await traceWebhook(
      converter.id,
      async () => await converter.fn(structuredClone(body) as never),
      () => false,
    );
  } catch (error) {
    recordWebhook(converter.id, "error", (performance.now() - began) / 1000);
    objectLogger.exception(`Converter '${converter.id}' (${converter.from}\u2192${converter.to}) failed.`, error);
    throw new ConversionError(messageOf(error), { cause: error });
  }
  recordWebhook(converter.id, "success", (performance.now() - began) / 1000);
  if (!isMapping(result)) {
    const what = result === null ? "null" : Array.isArray(result) ? "a list" : typeof result;
    throw new ConversionError(
      `The converter '${converter.id}' (${converter.from}\u2192${converter.to}) returned ${what}, not an object: ` +
        "return the converted object.",
    );
  }
  return { ...result, apiVersion: `${group}/${converter.to}` } as KubernetesObject;
}

/**
 * Converts one object to a version through the chain of converters; `kind` and the metadata are
 * the original's, but for the labels and annotations that the converters left (other changes to
 * metadata are undone with a warning).
 */
export async function convertObject(
  object: KubernetesObject,
  desiredAPIVersion: string,
  target: ConversionTarget,
): Promise<KubernetesObject> {
  const [group, from] = splitApiVersion(object.apiVersion ?? "");
  const [desiredGroup, to] = splitApiVersion(desiredAPIVersion);
  if (group !== target.group || desiredGroup !== target.group) {
    throw new ConversionError(
      `Cannot convert ${object.apiVersion} to ${desiredAPIVersion}: ${target.name} converts within ${target.group}.`,
    );
  }
  if (from === to) return object;
  const chain = findChain(target.converters, from, to);
  if (chain === undefined) {
    throw new ConversionError(
      `Cannot convert ${target.name} from ${from} to ${to}: no chain of converters leads there; ` +
        `the registered converters are: ${describeConverters(target.converters)}.`,
    );
  }
  const objectLogger = new ObjectLogger(object, { local: true });
  let current = object;
  for (const converter of chain) current = await runConverter(converter, current, group, objectLogger);
  const { metadata, restored, invalid } = restoredMetadata(object.metadata, current.metadata);
  const through = chain.map((converter) => converter.id).join(", ");
  if (invalid !== undefined) {
    throw new ConversionError(`The conversion from ${from} to ${to} (${through}) set ${invalid}.`);
  }
  if (restored.length) {
    objectLogger.warning(
      `The conversion from ${from} to ${to} (${through}) changed metadata.${restored.join(", metadata.")}; ` +
        "only labels and annotations may change, so the rest is kept as it was.",
    );
  }
  return { ...current, apiVersion: desiredAPIVersion, kind: object.kind, metadata };
}

/** The target whose group and kind the objects have; a failure if there is none. */
function targetOf(objects: readonly KubernetesObject[], targets: readonly ConversionTarget[]): ConversionTarget {
  const first = objects[0];
  const [group] = splitApiVersion(first.apiVersion ?? "");
  const target = targets.find((target) => target.group === group && target.kind === first.kind);
  if (target === undefined) {
    const served = targets.map((target) => target.name).join(", ") || "none";
    throw new ConversionError(
      `No converters are registered for ${first.kind} in ${group || "the core group"}; ` +
        `the resources with converters are: ${served}.`,
    );
  }
  return target;
}

/**
 * Builds the function that answers conversion reviews (webhook servers call it through the
 * operator's webhook function, which tells the reviews apart by their `kind`).
 *
 * Per review: the request is checked (a `WebhookError` with 400 when malformed), the objects'
 * custom resource is found by their group and kind, and each object is converted to
 * `desiredAPIVersion` (all at once, in order). Any failure fails the whole review with its
 * message (`result.status: Failure`), which the API server passes on to its client.
 */
export function conversionFn(
  serving: ConversionServing,
): (review: unknown) => Promise<ConversionReview> {
  return async (input: unknown): Promise<ConversionReview> => {
    const { review, request } = parseConversionReview(input);
    try {
      const objects = request.objects;
      const target = objects.length ? targetOf(objects, serving.targets()) : undefined;
      const converted = target
        ? await Promise.all(objects.map((object) => convertObject(object, request.desiredAPIVersion, target)))
        : [];
      logger.debug("Conversion review {uid}: {count} object(s) to {version}.", {
        uid: request.uid,
        count: converted.length,
        version: request.desiredAPIVersion,
      });
      return buildConversionResponse(review, request.uid, { converted });
    } catch (error) {
      if (!(error instanceof ConversionError)) throw error;
      logger.info("Conversion review {uid} to {version} failed: {message}", {
        uid: request.uid,
        version: request.desiredAPIVersion,
        message: error.message,
      });
      return buildConversionResponse(review, request.uid, { failure: error.message });
    }
  };
}
