/**
 * Sending a cycle's patch: one JSON merge-patch for the object, and one for its status
 * subresource when the resource has one (the main endpoint ignores status changes then).
 *
 * @module
 */

import type { ApiClient } from "./client.ts";
import { ApiNotFoundError } from "./errors.ts";
import { resourcePath } from "./paths.ts";
import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";

/**
 * Applies a patch to an object; sends nothing for an empty patch.
 *
 * @returns the object as the last response returned it, or `null` if nothing was sent or the object is gone.
 */
export async function applyPatch(
  client: ApiClient,
  resource: Resource,
  body: KubernetesObject,
  patch: Patch,
  signal?: AbortSignal,
): Promise<KubernetesObject | null> {
  const separateStatus = resource.subresources.includes("status");
  const parts: [JsonObject, string | undefined][] = separateStatus
    ? [[patch.withoutStatus(), undefined], [patch.onlyStatus(), "status"]]
    : [[patch.toMergePatch(), undefined]];
  const target = { namespace: body.metadata.namespace, name: body.metadata.name };
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
        signal,
      });
    } catch (error) {
      if (error instanceof ApiNotFoundError) return null;
      throw error;
    }
  }
  return result;
}
