/**
 * Streaming lists (Kubernetes' watch-list): a stream's listing comes as the first events of its
 * watch request (`sendInitialEvents`) -- every object as `ADDED`, then a bookmark annotated
 * `k8s.io/initial-events-end` that carries the resourceVersion the watch goes on from -- instead of
 * LIST pages followed by a watch. One request instead of one per page plus the watch, with no
 * continue token to expire between pages of a long listing.
 *
 * Detected, never assumed: a server refuses the parameter where its `WatchList` gate is off (HTTP
 * 422 that names it), and a server too old to know it ignores it and sends a plain watch, whose
 * first bookmark then lacks the annotation. Either way the stream lists by pages, as it would have;
 * a refusal is remembered per client and API group version, so the other streams do not ask again.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { KubernetesObject } from "../model/body.ts";
import type { ApiClient } from "./client.ts";
import { ApiBadRequestError, ApiUnprocessableError } from "./errors.ts";

const logger = getLogger(["kopf", "watching"]);

/** The annotation of the bookmark that ends the initial events. */
const INITIAL_EVENTS_END = "k8s.io/initial-events-end";

/** The query parameters of a watch request whose first events are the listing. */
export const STREAMING_QUERY: Readonly<Record<string, string>> = Object.freeze({
  sendInitialEvents: "true",
  // With no resourceVersion: the objects as of now (a consistent read), as a LIST without one gives.
  resourceVersionMatch: "NotOlderThan",
});

/** The API group versions (by client) whose server does not stream lists. */
const refusals = new WeakMap<ApiClient, Set<string>>();

/** Whether lists of this API group version are worth streaming with this client (not refused before). */
export function mayStream(client: ApiClient, apiVersion: string): boolean {
  return !refusals.get(client)?.has(apiVersion);
}

/**
 * Remembers that the server does not stream lists of this API group version (`detail`: how it
 * showed it), so that no stream of this client asks again, and says so once.
 */
export function refuseStreaming(client: ApiClient, apiVersion: string, detail: string): void {
  let refused = refusals.get(client);
  if (!refused) refusals.set(client, refused = new Set());
  if (refused.has(apiVersion)) return;
  refused.add(apiVersion);
  logger.info("The API server does not stream lists of {apiVersion} ({detail}); listing by pages.", {
    apiVersion,
    detail,
  });
}

/** Whether a bookmark is the one that ends the initial events. */
export function endsInitialEvents(object: KubernetesObject): boolean {
  return object.metadata.annotations?.[INITIAL_EVENTS_END] === "true";
}

/**
 * How the server answered a streaming watch request with an error: `"refused"` when it rejects
 * streaming itself (its `WatchList` gate is off), `"invalid"` for another invalid request (a bad
 * selector: a LIST then reports it as it always did), `undefined` for any other failure.
 */
export function streamingRejection(error: unknown): "refused" | "invalid" | undefined {
  if (!(error instanceof ApiUnprocessableError || error instanceof ApiBadRequestError)) return undefined;
  const message = error.payload?.message ?? error.message;
  return /sendInitialEvents|resourceVersionMatch/.test(message) ? "refused" : "invalid";
}
