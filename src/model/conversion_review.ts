/**
 * Conversion reviews as plain data: the `ConversionReview` documents (`apiextensions.k8s.io/v1`)
 * that the API server sends to a CRD's conversion webhook, their checks, the responses, and the
 * rule that keeps an object's metadata as it was (labels and annotations aside) across a conversion.
 *
 * Pure: no I/O.
 *
 * @module
 */

import type { KubernetesObject, ObjectMeta } from "./body.ts";
import { deepEqual } from "./diff.ts";
import { WebhookError } from "./webhook_error.ts";

/** The `request` of a `ConversionReview`. */
export interface ConversionRequest {
  /** The request's id; the response must carry it back. */
  uid: string;
  /** The `apiVersion` (`group/version`) to convert the objects to. */
  desiredAPIVersion: string;
  /** The objects to convert, each with its own `apiVersion`. */
  objects: KubernetesObject[];
}

/** The `response` of a `ConversionReview`. */
export interface ConversionResponse {
  /** The uid of the request answered. */
  uid: string;
  /** The converted objects, in the order of the request's objects; empty on failure. */
  convertedObjects: KubernetesObject[];
  /** `Success`, or `Failure` with the message that the API client sees. */
  result: { status: "Success" | "Failure"; message?: string };
}

/** A `ConversionReview` document: a request (from the API server) or a response (to it). */
export interface ConversionReview {
  /** `apiextensions.k8s.io/v1`. */
  apiVersion?: string;
  /** `ConversionReview`. */
  kind?: string;
  /** The request, in reviews from the API server. */
  request?: ConversionRequest;
  /** The response, in answers to it. */
  response?: ConversionResponse;
}

/** The review versions that the operator's conversion webhooks accept (the CRD's `conversionReviewVersions`). */
export const CONVERSION_REVIEW_VERSIONS: readonly string[] = Object.freeze(["v1"]);

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a parsed JSON body is a `ConversionReview` (by its `kind`), not an admission review. */
export function isConversionReview(value: unknown): boolean {
  return isMapping(value) && value.kind === "ConversionReview";
}

/**
 * Checks that a parsed JSON body is a `ConversionReview` with a usable request; throws a
 * {@linkcode WebhookError} (400) naming the first problem.
 *
 * @example
 * ```ts
 * const { request } = parseConversionReview({
 *   apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview",
 *   request: { uid: "1", desiredAPIVersion: "example.com/v2", objects: [] },
 * });
 * ```
 */
export function parseConversionReview(value: unknown): { review: ConversionReview; request: ConversionRequest } {
  const bad = (message: string) => new WebhookError(400, message);
  if (!isMapping(value) || value.kind !== "ConversionReview") {
    throw bad("The conversion review must be a JSON object of kind ConversionReview.");
  }
  const request = value.request;
  if (!isMapping(request)) throw bad("The conversion review has no request (an object).");
  if (typeof request.uid !== "string" || request.uid === "") throw bad("The conversion request has no uid.");
  if (typeof request.desiredAPIVersion !== "string" || !request.desiredAPIVersion.includes("/")) {
    throw bad("The conversion request's desiredAPIVersion must be a group/version, such as example.com/v2.");
  }
  if (!Array.isArray(request.objects)) throw bad("The conversion request's objects must be a list.");
  request.objects.forEach((object, index) => {
    if (!isMapping(object) || !isMapping(object.metadata) || typeof object.apiVersion !== "string") {
      throw bad(`The conversion request's objects[${index}] must be an object with apiVersion and metadata.`);
    }
  });
  return {
    review: value as ConversionReview,
    request: {
      uid: request.uid,
      desiredAPIVersion: request.desiredAPIVersion,
      objects: request.objects as KubernetesObject[],
    },
  };
}

/**
 * The response document for a request: the same `apiVersion` as the request's (or
 * `apiextensions.k8s.io/v1`), the request's uid, and either the converted objects or the failure.
 *
 * @example
 * ```ts
 * buildConversionResponse({}, "1", { failure: "spec.size is not a size." }).response!.result;
 * // { status: "Failure", message: "spec.size is not a size." }
 * ```
 */
export function buildConversionResponse(
  review: Pick<ConversionReview, "apiVersion">,
  uid: string,
  outcome: { converted: readonly KubernetesObject[] } | { failure: string },
): ConversionReview {
  const response: ConversionResponse = "failure" in outcome
    ? { uid, convertedObjects: [], result: { status: "Failure", message: outcome.failure } }
    : { uid, convertedObjects: [...outcome.converted], result: { status: "Success" } };
  return { apiVersion: review.apiVersion ?? "apiextensions.k8s.io/v1", kind: "ConversionReview", response };
}

/** The metadata fields that a converter may change; the API server keeps the rest as it was. */
export const CONVERTIBLE_METADATA: readonly string[] = Object.freeze(["labels", "annotations"]);

/**
 * The metadata of a converted object: the original's, with the converted object's labels and
 * annotations (the only metadata a conversion may change, as the API server enforces). Also
 * says which other fields the converted object had changed (they are restored), and what is
 * wrong with its labels or annotations, if anything (values must be strings).
 *
 * @example
 * ```ts
 * restoredMetadata({ name: "a", uid: "1" }, { name: "b", labels: { x: "y" } });
 * // { metadata: { name: "a", uid: "1", labels: { x: "y" } }, restored: ["name", "uid"], invalid: undefined }
 * ```
 */
export function restoredMetadata(
  original: ObjectMeta,
  converted: unknown,
): { metadata: ObjectMeta; restored: string[]; invalid: string | undefined } {
  const given = isMapping(converted) ? converted : {};
  const metadata: ObjectMeta = { ...original };
  const restored = [...new Set([...Object.keys(original), ...Object.keys(given)])]
    .filter((key) => !CONVERTIBLE_METADATA.includes(key))
    .filter((key) => !deepEqual(given[key], original[key]))
    .sort();
  let invalid: string | undefined;
  for (const key of CONVERTIBLE_METADATA) {
    const value = given[key];
    // An empty mapping where there was none (`{ ...undefined }`) is no change.
    const none = value === undefined || value === null ||
      (original[key] === undefined && isMapping(value) && Object.keys(value).length === 0);
    if (none) {
      delete metadata[key];
      continue;
    }
    const bad = !isMapping(value)
      ? "is not a mapping"
      : Object.entries(value).filter(([, item]) => typeof item !== "string").map(([name]) => name)
        .map((name) => `has a non-string value at ${JSON.stringify(name)}`)[0];
    if (bad !== undefined) invalid ??= `metadata.${key} ${bad} (${key} must map names to strings)`;
    else metadata[key] = { ...value } as Record<string, string>;
  }
  return { metadata, restored, invalid };
}

/**
 * The group and version of an `apiVersion`: `example.com/v2` -> `["example.com", "v2"]`;
 * `v1` (the core group) -> `["", "v1"]`.
 */
export function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.lastIndexOf("/");
  return slash < 0 ? ["", apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}
