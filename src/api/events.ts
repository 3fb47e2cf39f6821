/**
 * Writing core v1 Events: creating one, and patching the count of one already posted.
 *
 * @module
 */

import type { ApiClient } from "./client.ts";
import { resourcePath } from "./paths.ts";
import type { KubernetesObject } from "../model/body.ts";
import type { Resource } from "../model/resource.ts";

/** The core v1 Events resource. */
export const EVENTS: Resource = {
  group: "",
  version: "v1",
  plural: "events",
  kind: "Event",
  singular: "event",
  namespaced: true,
  preferred: true,
  shortcuts: ["ev"],
  categories: [],
  verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
  subresources: [],
};

/** Creates and updates Events; the poster uses it, tests fake it. */
export interface EventWriter {
  /** Creates an Event in a namespace; resolves to the Event as stored (with its generated name). */
  create(namespace: string, body: KubernetesObject, signal?: AbortSignal): Promise<KubernetesObject>;
  /** Merge-patches an existing Event; rejects with `ApiNotFoundError` if it is gone (Events expire). */
  patch(
    namespace: string,
    name: string,
    patch: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<KubernetesObject>;
}

/** An {@linkcode EventWriter} that sends the requests through an API client. */
export function eventWriter(client: ApiClient): EventWriter {
  return {
    create: (namespace, body, signal) =>
      client.request<KubernetesObject>({ method: "POST", path: resourcePath(EVENTS, { namespace }), body, signal }),
    patch: (namespace, name, patch, signal) =>
      client.request<KubernetesObject>({
        method: "PATCH",
        path: resourcePath(EVENTS, { namespace, name }),
        body: patch,
        contentType: "application/merge-patch+json",
        signal,
      }),
  };
}
