/**
 * Admission reviews as plain data: the `AdmissionReview` documents that the API server sends to
 * webhooks, their checks, the responses, the JSON Patch that a mutating handler's `kopf.Patch`
 * becomes, and the shapes that webhook servers and the managed configurations share.
 *
 * Pure: no I/O.
 *
 * @module
 */

import type { KubernetesObject } from "./body.ts";
import type { ConversionReview } from "./conversion_review.ts";
import type { Patch, PatchValue } from "./patch.ts";
import { WebhookError } from "./webhook_error.ts";

export { WebhookError };

/** The operations that admission webhooks see. */
export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/** The known operations, in Kubernetes' order. */
export const ADMISSION_OPERATIONS: readonly AdmissionOperation[] = Object.freeze([
  "CREATE",
  "UPDATE",
  "DELETE",
  "CONNECT",
]);

/** A group, version and resource (plural), as reviews name the resource of a request. */
export interface GroupVersionResource {
  /** The API group; `""` for the core group. */
  group: string;
  /** The version, e.g. `v1`. */
  version: string;
  /** The plural name, e.g. `kopfexamples`. */
  resource: string;
}

/** The `request` of an `AdmissionReview`, with the fields the framework reads. */
export interface AdmissionRequest {
  /** The request's id; the response must carry it back. */
  uid: string;
  /** The resource the request addresses (in the version the webhook's rules matched). */
  resource: GroupVersionResource;
  /** The subresource, e.g. `status`; absent for the main body. */
  subResource?: string;
  /** The operation. */
  operation: AdmissionOperation;
  /** The user who sent the API request, as the API server describes them (`username`, `uid`, `groups`, ...). */
  userInfo: Record<string, unknown>;
  /** The object after the operation; `null` for deletions. */
  object?: KubernetesObject | null;
  /** The object before the operation; `null` for creations. */
  oldObject?: KubernetesObject | null;
  /** Whether the API request is a dry run: handlers must not cause side effects then. */
  dryRun?: boolean;
  /** The object's name, if known. */
  name?: string;
  /** The object's namespace, if namespaced. */
  namespace?: string;
  /** Other fields of the request (`kind`, `requestKind`, `options`, ...), as sent. */
  [key: string]: unknown;
}

/** The `response` of an `AdmissionReview`. */
export interface AdmissionResponse {
  /** The uid of the request answered. */
  uid: string;
  /** Whether the request is admitted. */
  allowed: boolean;
  /** Warnings shown to the API client (kubectl prints them as `Warning: ...`). */
  warnings?: string[];
  /** A base64-encoded JSON Patch (mutating webhooks only). */
  patch?: string;
  /** `JSONPatch` when there is a patch. */
  patchType?: "JSONPatch";
  /** Why the request is denied: the API client sees the message and the code. */
  status?: { code: number; message: string };
}

/** An `AdmissionReview` document: a request (from the API server) or a response (to it). */
export interface AdmissionReview {
  /** `admission.k8s.io/v1` (or `v1beta1`). */
  apiVersion?: string;
  /** `AdmissionReview`. */
  kind?: string;
  /** The request, in reviews from the API server. */
  request?: AdmissionRequest;
  /** The response, in answers to it. */
  response?: AdmissionResponse;
}

/**
 * Where the API server sends admission requests: a URL, or a Service in the cluster; with the CA
 * (base64 of PEM) that signed the server's certificate, unless it is in the default trust chain.
 * Each webhook gets the handler's id appended to `url` or `service.path`.
 */
export interface WebhookClientConfig {
  /** `https://host:port/path`; no query or fragment. */
  url?: string;
  /** The CA bundle, base64-encoded PEM. */
  caBundle?: string;
  /** A Service in the cluster instead of a URL. */
  service?: { namespace: string; name: string; path?: string; port?: number };
}

/** What a webhook server passes along with a review, besides the review itself. */
export interface WebhookRequestOptions {
  /** The handler id from the URL: only that handler runs. Absent: all admission handlers run. */
  webhook?: string;
  /** The HTTP request's headers. */
  headers?: HeadersInit;
  /** The verified client certificate's details, if the server checks client certificates. */
  sslpeer?: Record<string, unknown>;
}

/**
 * What webhook servers call for every review they receive, with the parsed JSON body: admission
 * reviews and (for `kopf.on.conversion`) conversion reviews, told apart by their `kind`. It
 * resolves to the review response to send back as JSON. It rejects with a
 * {@linkcode WebhookError} when the review is malformed (the server answers with its `status`
 * code) -- never for a handler's failure, which becomes a denial (or a failed conversion).
 */
export type WebhookFn = (
  review: unknown,
  options?: WebhookRequestOptions,
) => Promise<AdmissionReview | ConversionReview>;

/**
 * An admission server or tunnel, as `settings.admission.server` takes it: given the function that
 * answers reviews and a signal that stops it, it serves until the signal aborts and yields the
 * client config to put into webhook configurations -- first when it is ready, then whenever the
 * endpoint changes. Ending on its own (or throwing) stops the admission machinery with an error.
 * `kopf.WebhookServer` is one; an object with such a `serve` method or a plain function works too.
 */
export interface AdmissionServer {
  /** Serves the reviews; see {@linkcode AdmissionServer}. */
  serve(fn: WebhookFn, signal: AbortSignal): AsyncIterable<WebhookClientConfig>;
}

/** The function form of an {@linkcode AdmissionServer}. */
export type AdmissionServerFn = (fn: WebhookFn, signal: AbortSignal) => AsyncIterable<WebhookClientConfig>;

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Checks that a parsed JSON body is an `AdmissionReview` with a usable request; throws a
 * {@linkcode WebhookError} (400) naming the first problem.
 *
 * @example
 * ```ts
 * const { request } = parseReview({
 *   apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
 *   request: {
 *     uid: "1", operation: "CREATE", userInfo: { username: "admin" },
 *     resource: { group: "kopf.dev", version: "v1", resource: "kopfexamples" },
 *     object: { metadata: { name: "x" } },
 *   },
 * });
 * ```
 */
export function parseReview(value: unknown): { review: AdmissionReview; request: AdmissionRequest } {
  const bad = (message: string) => new WebhookError(400, message);
  if (!isMapping(value)) throw bad("The admission review must be a JSON object.");
  if (value.kind !== undefined && value.kind !== "AdmissionReview") {
    throw bad(`The admission review's kind must be AdmissionReview, not ${JSON.stringify(value.kind)}.`);
  }
  if (value.apiVersion !== undefined && typeof value.apiVersion !== "string") {
    throw bad("The admission review's apiVersion must be a string.");
  }
  const request = value.request;
  if (!isMapping(request)) throw bad("The admission review has no request (an object).");
  if (typeof request.uid !== "string" || request.uid === "") throw bad("The admission request has no uid.");
  const resource = request.resource;
  if (
    !isMapping(resource) || typeof resource.version !== "string" || typeof resource.resource !== "string" ||
    (resource.group !== undefined && typeof resource.group !== "string")
  ) {
    throw bad("The admission request has no resource {group, version, resource}.");
  }
  if (typeof request.operation !== "string" || !ADMISSION_OPERATIONS.includes(request.operation as never)) {
    throw bad(
      `The admission request's operation must be one of ${ADMISSION_OPERATIONS.join(", ")}, ` +
        `not ${JSON.stringify(request.operation)}.`,
    );
  }
  if (request.subResource !== undefined && request.subResource !== null && typeof request.subResource !== "string") {
    throw bad("The admission request's subResource must be a string.");
  }
  if (!isMapping(request.userInfo)) throw bad("User info is missing from the admission request.");
  const object = request.object ?? null;
  const oldObject = request.oldObject ?? null;
  if (object === null && oldObject === null) {
    throw bad("Either old or new object is missing from the admission request.");
  }
  for (const [name, body] of [["object", object], ["oldObject", oldObject]] as const) {
    if (body !== null && (!isMapping(body) || (body.metadata !== undefined && !isMapping(body.metadata)))) {
      throw bad(`The admission request's ${name} must be a Kubernetes object.`);
    }
  }
  const normalized: AdmissionRequest = {
    ...request,
    uid: request.uid,
    resource: {
      group: (resource.group as string | undefined) ?? "",
      version: resource.version,
      resource: resource.resource,
    },
    operation: request.operation as AdmissionOperation,
    subResource: (request.subResource as string | null | undefined) || undefined,
    userInfo: request.userInfo,
    object: withMetadata(object),
    oldObject: withMetadata(oldObject),
    dryRun: request.dryRun === true,
  };
  return { review: value as AdmissionReview, request: normalized };
}

function withMetadata(body: unknown): KubernetesObject | null {
  if (!isMapping(body)) return null;
  return (isMapping(body.metadata) ? body : { ...body, metadata: {} }) as KubernetesObject;
}

/** A handler's failure, as the response reports it. */
export interface Denial {
  /** The HTTP-like status code (an `AdmissionError`'s code, else 500). */
  code: number;
  /** The message the API client sees. */
  message: string;
}

/**
 * The response document for a request: the same `apiVersion` and `kind` as the request's (or
 * `admission.k8s.io/v1` / `AdmissionReview`), the request's uid, and the outcome.
 */
export function buildResponse(
  review: Pick<AdmissionReview, "apiVersion" | "kind">,
  uid: string,
  outcome: { denial?: Denial; warnings?: readonly string[]; jsonPatch?: readonly JsonPatchOperation[] },
): AdmissionReview {
  const response: AdmissionResponse = { uid, allowed: outcome.denial === undefined };
  if (outcome.warnings?.length) response.warnings = outcome.warnings.map(String);
  if (outcome.jsonPatch?.length) {
    response.patch = base64(JSON.stringify(outcome.jsonPatch));
    response.patchType = "JSONPatch";
  }
  if (outcome.denial) response.status = { code: outcome.denial.code, message: outcome.denial.message };
  return {
    apiVersion: review.apiVersion ?? "admission.k8s.io/v1",
    kind: review.kind ?? "AdmissionReview",
    response,
  };
}

/** Base64 of a text's UTF-8 bytes. */
export function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** One operation of a JSON Patch (RFC 6902), as far as mutations produce them. */
export type JsonPatchOperation =
  | { op: "add" | "replace"; path: string; value: unknown }
  | { op: "remove"; path: string };

/** A JSON Pointer token: `~` and `/` escaped. */
function pointerToken(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** A value to add or replace: `undefined` and (merge-patch) `null` keys of mappings left out. */
function cleaned(value: PatchValue | undefined): unknown {
  if (Array.isArray(value)) return value.map((item) => cleaned(item) ?? null);
  if (!isMapping(value)) return value;
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item !== undefined && item !== null) result[key] = cleaned(item as PatchValue);
  }
  return result;
}

/**
 * The JSON Patch that applies a `kopf.Patch` (merge-patch semantics) to the original object:
 * `null` removes a key (only if the original has it), a mapping over an existing mapping recurses
 * into it, and any other value replaces an existing key or adds an absent one (with its parents,
 * as one added mapping).
 *
 * @example
 * ```ts
 * import { Patch } from "@kopf/kopf";
 * const patch = new Patch();
 * patch.spec.numbers = [1, 2, 3];
 * patch.metadata.labels["app.kubernetes.io/name"] = "x";
 * jsonPatchFor(patch, { metadata: { name: "a" }, spec: {} });
 * // [{ op: "add", path: "/metadata/labels", value: { "app.kubernetes.io/name": "x" } },
 * //  { op: "add", path: "/spec/numbers", value: [1, 2, 3] }]
 * ```
 */
export function jsonPatchFor(patch: Patch, original: unknown): JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [];
  const walk = (changes: Record<string, unknown>, base: unknown, path: string): void => {
    for (const [key, value] of Object.entries(changes)) {
      if (value === undefined) continue;
      const here = `${path}/${pointerToken(key)}`;
      const exists = isMapping(base) && Object.hasOwn(base, key);
      if (value === null) {
        if (exists) operations.push({ op: "remove", path: here });
      } else if (exists && isMapping(value) && isMapping(base[key])) {
        walk(value, base[key], here);
      } else {
        operations.push({ op: exists ? "replace" : "add", path: here, value: cleaned(value as PatchValue) });
      }
    }
  };
  walk(patch.toMergePatch(), original, "");
  return operations;
}

/**
 * The name of a handler's webhook in a managed configuration: the handler id made a valid DNS
 * subdomain (`/` -> `.`, `_` -> `-`, camelCase -> kebab-case, other characters hex-encoded as
 * `x<hex>`), then `.` and the configuration's name: `checkNumbers` -> `check-numbers.auto.kopf.dev`.
 *
 * @example
 * ```ts
 * webhookName("check_numbers", "auto.kopf.dev"); // "check-numbers.auto.kopf.dev"
 * webhookName("validateFn/spec.x", "auto.kopf.dev"); // "validate-fn.spec.x.auto.kopf.dev"
 * ```
 */
export function webhookName(id: string, managed: string): string {
  const name = id
    .replaceAll("/", ".")
    .replaceAll("_", "-")
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, (char) => `x${char.codePointAt(0)!.toString(16)}`);
  return `${name}.${managed}`;
}
