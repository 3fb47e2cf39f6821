/**
 * What one watch stream asks the server: the pages of its listing and its watch requests, each with
 * the stream's path and selectors (the `shardSelector` changes with the stream's scope), its page
 * size and its timeouts. The stream reads the answers (see `watching.ts`).
 *
 * @module
 */

import type { ApiClient } from "./client.ts";
import type { ListedPage } from "./listing.ts";
import { resourcePath } from "./paths.ts";
import { STREAMING_QUERY } from "./streaming_lists.ts";
import type { WatchOptions } from "./watch_options.ts";
import type { KubernetesList } from "../model/body.ts";
import type { Resource } from "../model/resource.ts";
import type { WatchingSettings } from "../settings/watching.ts";

/** The requests of one stream of one resource in one namespace (or cluster-wide). */
export class WatchRequests {
  /** The `shardSelector` of the requests to come (absent: none). */
  shardSelector: string | undefined;
  readonly #client: ApiClient;
  readonly #resource: Resource;
  readonly #options: WatchOptions;
  readonly #settings: WatchingSettings;
  readonly #path: string;

  /** The requests of a stream with these options (and settings, the options' or the defaults). */
  constructor(client: ApiClient, resource: Resource, options: WatchOptions, settings: WatchingSettings) {
    this.#client = client;
    this.#resource = resource;
    this.#options = options;
    this.#settings = settings;
    this.#path = resourcePath(resource, { namespace: options.namespace });
    this.shardSelector = options.shardSelector;
  }

  /**
   * One page of the listing; never rejects (a page asked for ahead may be left unread when the
   * stream stops). Pages are part of the stream, like its watch: they do not queue for a slot of
   * `settings.networking.concurrentRequests` behind the writes of the objects listed before them.
   */
  page(token: string | undefined, signal: AbortSignal): Promise<ListedPage> {
    return this.#client.request<KubernetesList>({
      path: this.#path,
      query: {
        limit: this.#settings.listPageSize ?? undefined,
        continue: token,
        labelSelector: this.#options.labelSelector,
        fieldSelector: this.#options.fieldSelector,
        shardSelector: this.shardSelector,
      },
      verb: "list",
      resource: this.#resource.plural,
      signal,
      urgent: true,
    }).then((page) => ({ page }), (error: unknown) => ({ error }));
  }

  /**
   * Opens one watch request with bookmarks from the resourceVersion `from` (`null`: from now); with
   * `streaming`, its first events are the listing (see `streaming_lists.ts`).
   */
  open(from: string | null, streaming: boolean, signal: AbortSignal): Promise<Response> {
    return this.#client.open({
      path: this.#path,
      query: {
        watch: "true",
        allowWatchBookmarks: "true",
        resourceVersion: from || undefined,
        ...(streaming ? STREAMING_QUERY : {}),
        timeoutSeconds: this.#settings.serverTimeout ?? undefined,
        labelSelector: this.#options.labelSelector,
        fieldSelector: this.#options.fieldSelector,
        shardSelector: this.shardSelector,
      },
      verb: "watch",
      resource: this.#resource.plural,
      connectTimeout: this.#settings.connectTimeout ?? undefined,
      signal,
    });
  }
}
