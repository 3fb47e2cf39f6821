/**
 * Sending a cycle's patch: one JSON merge-patch for the object, and one for its status
 * subresource when the resource has one (the main endpoint ignores status changes then).
 *
 * @module
 */

import type { ApiClient } from "./client.ts";
import { ApiConflictError, ApiNotFoundError, ApiUnprocessableError } from "./errors.ts";
import { resourcePath } from "./paths.ts";
import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";

/**
 * Applies a patch to an object; sends nothing for an empty patch.
 *
 * @returns the object as the last response returned it, or `null` if nothing was sent or the object is gone.
 */
export function applyPatch(
  client: ApiClient,
  resource: Resource,
  body: KubernetesObject,
  patch: Patch,
  signal?: AbortSignal,
): Promise<KubernetesObject | null> {
  return applyMergePatch(client, resource, body, patch.toMergePatch(), signal);
}

/**
 * Applies a patch already rendered as a merge-patch (see `Patch.toMergePatch()`), for a caller
 * that has rendered it anyway: each rendering is a deep copy of the patch. The signal can keep the
 * write from beginning, not interrupt it.
 *
 * @param versions Collects the resourceVersion of each request's answer (two with a status part).
 * @returns the object as the last response returned it, or `null` if nothing was sent or the object is gone.
 */
export async function applyMergePatch(
  client: ApiClient,
  resource: Resource,
  body: KubernetesObject,
  mergePatch: JsonObject,
  signal?: AbortSignal,
  versions?: string[],
): Promise<KubernetesObject | null> {
  const separateStatus = resource.subresources.includes("status");
  // The main part first, as Kopf does: whoever waits for the results in the status (users, tests)
  // then finds the rest of the cycle's changes already there.
  const { status, ...rest } = mergePatch;
  const parts: [JsonObject, string | undefined][] = separateStatus
    ? [[rest, undefined], [status === undefined ? {} : { status }, "status"]]
    : [[mergePatch, undefined]];
  const target = { namespace: body.metadata.namespace, name: body.metadata.name };
  // The parts are one write: once begun, it is not aborted -- a stop between the two requests would
  // record the handlers as done (in the main part) without their results (in the status), for good.
  // An aborted signal only keeps the write from beginning.
  signal?.throwIfAborted();
  let result: KubernetesObject | null = null;
  for (const [part, subresource] of parts) {
    if (Object.keys(part).length === 0) continue;
    try {
      result = await client.request<KubernetesObject>({
        method: "PATCH",
        path: resourcePath(resource, { ...target, subresource }),
        body: part,
        contentType: "application/merge-patch+json",
        resource: subresource ? `${resource.plural}/${subresource}` : resource.plural,
        // The status part ends a write begun: it waits ahead of the writes that other cycles begin.
        ahead: result !== null,
      });
      const version = result?.metadata.resourceVersion;
      if (version) versions?.push(version);
    } catch (error) {
      if (error instanceof ApiNotFoundError) return null;
      throw error;
    }
  }
  return result;
}

/**
 * Adds or removes one finalizer with a JSON-patch that first tests the object's
 * resourceVersion (and, for a removal, the finalizer's position), so that a concurrent change of
 * the list by someone else is never overwritten. Foreign finalizers are never touched.
 *
 * A removal that loses to a concurrent change is tried again on the fresh object (a few times).
 *
 * @returns the patched object; `null` if nothing was needed, the object is gone, or it changed
 *   meanwhile (its next event brings the decision again).
 */
export async function changeFinalizers(
  client: ApiClient,
  resource: Resource,
  body: KubernetesObject,
  finalizer: string,
  action: "add" | "remove",
  signal?: AbortSignal,
): Promise<KubernetesObject | null> {
  const target = { namespace: body.metadata.namespace, name: body.metadata.name };
  // A removal usually ends a finished deletion: losing it to a concurrent change (another
  // operator's finalizer) would make the next event look like a new deletion, so it is retried
  // on the fresh object. An addition is decided again by the object's next event anyway.
  const attempts = action === "remove" ? REMOVAL_ATTEMPTS : 1;
  let current = body;
  for (let attempt = 1;; attempt++) {
    const operations = finalizerOperations(current, finalizer, action);
    if (!operations) return null;
    try {
      return await client.request<KubernetesObject>({
        method: "PATCH",
        path: resourcePath(resource, target),
        body: operations,
        contentType: "application/json-patch+json",
        resource: resource.plural,
        signal,
      });
    } catch (error) {
      if (error instanceof ApiNotFoundError) return null;
      if (!(error instanceof ApiConflictError || error instanceof ApiUnprocessableError)) throw error;
      if (attempt >= attempts) return null;
    }
    try {
      current = await client.request<KubernetesObject>({
        path: resourcePath(resource, target),
        resource: resource.plural,
        signal,
      });
    } catch (error) {
      if (error instanceof ApiNotFoundError) return null;
      throw error;
    }
  }
}

/** How many times a finalizer removal is tried against concurrent changes of the object. */
const REMOVAL_ATTEMPTS = 5;

/** The JSON-patch that adds or removes the finalizer, guarded by tests; `null` if there is nothing to do. */
function finalizerOperations(body: KubernetesObject, finalizer: string, action: "add" | "remove"): JsonObject[] | null {
  const finalizers = body.metadata.finalizers;
  const index = finalizers?.indexOf(finalizer) ?? -1;
  const operations: JsonObject[] = [{
    op: "test",
    path: "/metadata/resourceVersion",
    value: body.metadata.resourceVersion ?? "",
  }];
  if (action === "add") {
    if (index >= 0) return null;
    operations.push(
      finalizers
        ? { op: "add", path: "/metadata/finalizers/-", value: finalizer }
        : { op: "add", path: "/metadata/finalizers", value: [finalizer] },
    );
  } else {
    if (index < 0) return null;
    operations.push(
      { op: "test", path: `/metadata/finalizers/${index}`, value: finalizer },
      { op: "remove", path: `/metadata/finalizers/${index}` },
    );
  }
  return operations;
}
