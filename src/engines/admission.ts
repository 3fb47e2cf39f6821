/**
 * Answering admission reviews: finding the resource of a review among the served ones, selecting
 * the admission handlers for it (the one named by the webhook URL, or all), running them all at
 * once with one context each, and turning their outcome into a response -- the highest-ranked
 * error as the denial, the warnings, and the mutations as a JSON Patch.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { recordWebhook } from "../observability/metrics.ts";
import { traceWebhook } from "../observability/tracing.ts";
import { AdmissionError } from "../handling/admission.ts";
import type { AdmissionContext, AdmissionHandler } from "../handling/admission_handler.ts";
import type { Memo } from "../handling/context.ts";
import { resourceContext } from "../handling/context.ts";
import { PermanentError, TemporaryError } from "../handling/errors.ts";
import { matchesFilters } from "../handling/filters.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import {
  type AdmissionRequest,
  type AdmissionReview,
  buildResponse,
  type Denial,
  jsonPatchFor,
  parseReview,
  WebhookError,
  type WebhookRequestOptions,
} from "../model/admission.ts";
import type { KubernetesObject } from "../model/body.ts";
import { diff } from "../model/diff.ts";
import type { Indices } from "../model/index_store.ts";
import { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import { LruMap } from "../utils/lru.ts";

const logger = getLogger(["kopf", "admission"]);

/**
 * The memos that admission handlers get (Kopf's rule): for a `CREATE`, a throw-away shallow copy
 * of the operator's memo; for `UPDATE`, `DELETE` and `CONNECT`, the object's own memo, kept by
 * uid between reviews. The operator may give a lookup of the memos its watch streams keep, so that
 * admission handlers and resource handlers share one memo per object.
 */
export class AdmissionMemories {
  readonly #base: Memo;
  readonly #lookup: ((uid: string) => Memo | undefined) | undefined;
  readonly #own: LruMap<string, Memo>;

  /**
   * @param base the operator's memo, copied for objects seen for the first time.
   * @param options `lookup`: the operator's per-object memos by uid; `capacity`: how many
   *   objects' memos are kept here at most (least recently used forgotten first).
   */
  constructor(base: Memo, options: { lookup?: (uid: string) => Memo | undefined; capacity?: number } = {}) {
    this.#base = base;
    this.#lookup = options.lookup;
    this.#own = new LruMap(options.capacity ?? 10_000);
  }

  /** The memo for a review of an object. */
  recall(body: KubernetesObject, operation: string): Memo {
    const uid = body.metadata?.uid;
    if (operation === "CREATE" || !uid) return { ...this.#base };
    const shared = this.#lookup?.(uid);
    if (shared) return shared;
    let memo = this.#own.get(uid);
    if (!memo) this.#own.set(uid, memo = { ...this.#base });
    return memo;
  }
}

/** What answering reviews needs. */
export interface AdmissionServing {
  /** The admission handlers. */
  readonly handlers: readonly AdmissionHandler[];
  /** The resources the handlers' selectors resolve to now (read on every review). */
  readonly resources: () => ReadonlyMap<string, readonly Resource[]>;
  /** The memos. */
  readonly memories: AdmissionMemories;
  /** The operator's indexes. */
  readonly indices: Indices;
}

/** The rank of an error when several handlers fail: the lowest is reported. */
function rank(error: unknown): number {
  if (error instanceof AdmissionError) return 0;
  if (error instanceof PermanentError) return 1;
  if (error instanceof TemporaryError) return 2;
  return 9;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name || String(error);
  return String(error);
}

/**
 * The denial reported for the errors of the handlers of one review: an {@linkcode AdmissionError}
 * first (with its code), then a `PermanentError`, then a `TemporaryError`, then anything else
 * (all with code 500); `undefined` without errors.
 *
 * @example
 * ```ts
 * denialOf([new Error("boom"), new AdmissionError("Meh", { code: 400 })]); // { code: 400, message: "Meh" }
 * ```
 */
export function denialOf(errors: readonly unknown[]): Denial | undefined {
  if (errors.length === 0) return undefined;
  const first = [...errors].sort((a, b) => rank(a) - rank(b))[0];
  const code = first instanceof AdmissionError ? first.code : 500;
  return { code, message: messageOf(first) };
}

/** The resource of a review among the served ones: 404 if none, 409 if several. */
function findResource(request: AdmissionRequest, served: Iterable<Resource>): Resource {
  const { group, version, resource: plural } = request.resource;
  const found = new Map<string, Resource>();
  for (const resource of served) {
    if (resource.group === group && resource.version === version && resource.plural === plural) {
      found.set(`${resource.kind}`, resource);
    }
  }
  const what = `${plural}.${version}${group ? `.${group}` : ""}`;
  if (found.size === 0) throw new WebhookError(404, `The resource ${what} is not served by admission handlers.`);
  if (found.size > 1) {
    throw new WebhookError(409, `The resource ${what} is ambiguous: ${[...found.keys()].join(", ")}.`);
  }
  return [...found.values()][0];
}

function sameResource(a: Resource, b: Resource): boolean {
  return a.group === b.group && a.version === b.version && a.plural === b.plural;
}

function subresourceMatches(handler: AdmissionHandler, subresource: string | null): boolean {
  const wanted = handler.options.subresource;
  if (wanted === undefined) return subresource === null;
  return wanted === "*" || wanted === subresource;
}

/** The handlers a review may go to: the one named by the webhook URL (404 if none is), else all. */
function candidatesFor(
  handlers: readonly AdmissionHandler[],
  webhook: string | undefined,
): readonly AdmissionHandler[] {
  if (webhook === undefined) return handlers;
  const candidates = handlers.filter((handler) => handler.id === webhook);
  if (candidates.length === 0) {
    throw new WebhookError(404, `There is no admission handler with the id ${JSON.stringify(webhook)}.`);
  }
  return candidates;
}

/** The resources the candidates serve now, each once. */
function servedBy(
  candidates: readonly AdmissionHandler[],
  resolved: ReadonlyMap<string, readonly Resource[]>,
): Iterable<Resource> {
  const served = new Map<string, Resource>();
  for (const handler of candidates) {
    for (const resource of resolved.get(handler.id) ?? []) served.set(JSON.stringify(resource), resource);
  }
  return served.values();
}

/** What the handlers of one review share: the object, one patch, one list of warnings, one logger. */
interface OpenReview {
  readonly request: AdmissionRequest;
  readonly resource: Resource;
  /** The new object, or the old one for a deletion. */
  readonly body: KubernetesObject;
  readonly patch: Patch;
  readonly warnings: string[];
  readonly logger: ObjectLogger;
  /** A new context for a handler (or its filters), over the shared pieces. */
  readonly contextFor: (handler: AdmissionHandler) => AdmissionContext;
}

/** The decoded request as the handlers see it: the object, its memo, the diff, the context. */
function openReview(
  serving: AdmissionServing,
  request: AdmissionRequest,
  resource: Resource,
  options: WebhookRequestOptions,
): OpenReview {
  const body = (request.object ?? request.oldObject) as KubernetesObject;
  const subresource = request.subResource ?? null;
  const operation = request.operation;
  const memo = serving.memories.recall(body, operation);
  const patch = new Patch();
  const warnings: string[] = [];
  const headers = new Headers(options.headers);
  const objectLogger = new ObjectLogger(body, { local: true });
  const old = request.oldObject ?? null;
  const now = request.object ?? null;
  const changes = diff(old, now);
  const contextFor = (handler: AdmissionHandler): AdmissionContext => ({
    ...resourceContext(body, {
      patch,
      logger: objectLogger,
      memo,
      resource,
      param: handler.options.param,
      indices: serving.indices,
    }),
    // Not stored yet on creation: no uid, and no name when it is to be made from generateName.
    uid: body.metadata?.uid,
    name: body.metadata?.name,
    dryrun: request.dryRun === true,
    operation,
    subresource,
    warnings,
    userinfo: request.userInfo,
    headers,
    sslpeer: options.sslpeer ?? {},
    old,
    new: now,
    diff: changes,
  });
  return { request, resource, body, patch, warnings, logger: objectLogger, contextFor };
}

/**
 * The candidates that handle the review, by resource, subresource, operation and filters; the
 * errors of failing filters count as the handlers' own.
 */
function selectHandlers(
  candidates: readonly AdmissionHandler[],
  resolved: ReadonlyMap<string, readonly Resource[]>,
  review: OpenReview,
): { selected: AdmissionHandler[]; errors: unknown[] } {
  const { resource, body, logger: objectLogger, contextFor } = review;
  const subresource = review.request.subResource ?? null;
  const operation = review.request.operation;
  const selected: AdmissionHandler[] = [];
  const errors: unknown[] = [];
  for (const handler of candidates) {
    if (!(resolved.get(handler.id) ?? []).some((one) => sameResource(one, resource))) continue;
    if (!subresourceMatches(handler, subresource)) continue;
    const onlyDelete = handler.operations?.length === 1 && handler.operations[0] === "DELETE";
    if (handler.type === "mutate" && operation === "DELETE" && !onlyDelete) continue;
    try {
      if (!matchesFilters(handler.options, "current", { body, context: () => contextFor(handler) })) continue;
    } catch (error) {
      // A broken filter callback is the handler's failure, as if the handler had thrown it.
      errors.push(error);
      objectLogger.exception(`The filters of the admission handler '${handler.id}' failed.`, error);
      continue;
    }
    selected.push(handler);
  }
  return { selected, errors };
}

/** Runs one handler, traced and measured: the error that denies the request, or `undefined`. */
async function runHandler(handler: AdmissionHandler, review: OpenReview): Promise<unknown> {
  const objectLogger = review.logger;
  const began = performance.now();
  try {
    await traceWebhook(
      handler.id,
      async () => await handler.fn(review.contextFor(handler)),
      (error) => error instanceof AdmissionError,
    );
    recordWebhook(handler.id, "success", (performance.now() - began) / 1000);
    objectLogger.debug(`Admission handler '${handler.id}' succeeded.`);
    return undefined;
  } catch (error) {
    const denied = error instanceof AdmissionError;
    recordWebhook(handler.id, denied ? "denied" : "error", (performance.now() - began) / 1000);
    if (error instanceof AdmissionError) {
      objectLogger.info(`Admission handler '${handler.id}' denied the request: ${error.message}`);
      return error;
    }
    if (handler.options.ignoreFailures) {
      objectLogger.exception(
        `Admission handler '${handler.id}' failed with an exception; the request is admitted (ignoreFailures).`,
        error,
      );
      return undefined;
    }
    objectLogger.exception(`Admission handler '${handler.id}' failed with an exception.`, error);
    return error;
  }
}

/**
 * Builds the function that answers admission reviews (webhook servers call it through the
 * operator's `WebhookFn`, which passes conversion reviews elsewhere).
 *
 * Per review: the request is checked (400 when malformed), its resource is looked up (404 when
 * no handler serves it), the handlers are selected -- the one named by `webhook` (404 if there is
 * no such handler), else all -- by resource, subresource and filters (mutating handlers skip
 * `DELETE` unless it is their only operation; `operations` are otherwise left to the webhook's
 * rules), and run all at once. Their return values are ignored. Any error denies, except an
 * arbitrary error (not an `AdmissionError`) of an `ignoreFailures` handler, which is logged.
 */
export function admissionFn(
  serving: AdmissionServing,
): (review: unknown, options?: WebhookRequestOptions) => Promise<AdmissionReview> {
  return async (input: unknown, options: WebhookRequestOptions = {}): Promise<AdmissionReview> => {
    const { review, request } = parseReview(input);
    const resolved = serving.resources();
    const candidates = candidatesFor(serving.handlers, options.webhook);
    const resource = findResource(request, servedBy(candidates, resolved));
    const open = openReview(serving, request, resource, options);
    const { selected, errors } = selectHandlers(candidates, resolved, open);
    const outcomes = await Promise.all(selected.map((handler) => runHandler(handler, open)));
    for (const outcome of outcomes) if (outcome !== undefined) errors.push(outcome);
    const mutating = selected.some((handler) => handler.type === "mutate");
    const jsonPatch = mutating ? jsonPatchFor(open.patch, open.body) : [];
    logger.debug("Admission review {uid} of {name}: {count} handler(s), {errors} error(s).", {
      uid: request.uid,
      name: open.body.metadata?.name,
      count: selected.length,
      errors: errors.length,
    });
    return buildResponse(review, request.uid, { denial: denialOf(errors), warnings: open.warnings, jsonPatch });
  };
}
