/**
 * The listing part of a watch stream: every object, compared with the objects the stream already
 * knows -- the first listing reports all as first seen, a relisting (after 410 Gone, or a change of
 * scope) only what changed meanwhile, deletions included. The objects come page by page
 * ({@linkcode listObjects}) or as the initial events of a watch ({@linkcode Listing} fed by the
 * stream, see `streaming_lists.ts`); the comparison is the same.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { KubernetesList, KubernetesObject } from "../model/body.ts";
import { ApiGoneError } from "./errors.ts";
import { identityKey, identityOf, type ObjectIdentity, type WatchEvent } from "./watch_state.ts";

const logger = getLogger(["kopf", "watching"]);

/** A page of a listing as asked for with a continue token: the page, or why there is none. */
export interface ListedPage {
  readonly token: string | undefined;
  readonly page?: KubernetesList;
  readonly error?: unknown;
}

/** What one listing compares against. */
export interface ListingScope {
  /** The objects the stream knows, by uid: updated as the listing goes. */
  readonly known: Map<string, ObjectIdentity>;
  /** Objects not known before come as first seen (`type: null`) rather than as `ADDED`. */
  readonly fresh: boolean;
  /** Known objects to deliver again as first seen, even unchanged (with `fresh`). */
  readonly revisit?: (uid: string) => boolean;
  /** Which objects (by uid) the stream is for; the others are skipped. */
  readonly accepts?: (uid: string) => boolean;
}

/** How a listing by pages asks for them and fills in what pages leave out. */
export interface PagedListingScope extends ListingScope {
  /** Asks for one page (the first with no token); never rejects. */
  readonly page: (token: string | undefined) => Promise<ListedPage>;
  /** The kind and apiVersion of the resource, for items that the server sends without them. */
  readonly kind: string;
  readonly apiVersion: string;
  /** The stream's name, for the logs. */
  readonly name: string;
}

/**
 * One listing in progress: each listed object is compared with what the stream knew, and once the
 * last has come, the known objects that were not listed are the deletions missed meanwhile.
 */
export class Listing {
  readonly #scope: ListingScope;
  /** The resourceVersion of each object listed so far, by uid. */
  readonly #listed = new Map<string, string | undefined>();

  constructor(scope: ListingScope) {
    this.#scope = scope;
  }

  /** One listed object: what to deliver for it, if anything (the known objects are updated). */
  offer(object: KubernetesObject): WatchEvent | undefined {
    const { known, fresh, revisit, accepts } = this.#scope;
    const uid = object.metadata.uid ?? identityKey(object);
    const version = object.metadata.resourceVersion;
    if (accepts?.(uid) === false) return undefined;
    // The same object again (a listing started over) is delivered once.
    if (this.#listed.has(uid) && this.#listed.get(uid) === version) return undefined;
    this.#listed.set(uid, version);
    const before = known.get(uid);
    known.set(uid, identityOf(object));
    if (fresh && (!before || revisit?.(uid))) return { type: null, object };
    if (!before) return { type: "ADDED", object, relisted: true };
    if (before.metadata.resourceVersion !== version) return { type: "MODIFIED", object, relisted: true };
    return undefined;
  }

  /** After the last object: the known objects that were not listed, each as a deletion (and forgotten). */
  *deletions(): Generator<WatchEvent, void, undefined> {
    const known = this.#scope.known;
    for (const [uid, identity] of [...known]) {
      if (this.#listed.has(uid)) continue;
      known.delete(uid);
      yield { type: "DELETED", object: structuredClone(identity) as KubernetesObject, relisted: true };
    }
  }
}

/**
 * Lists all objects page by page and yields what changed against the known objects; returns the
 * listing's resourceVersion (where the watch resumes). Nothing of it counts if the signal aborts
 * before it completes: it throws the signal's reason then, and the known objects it did not reach stay.
 */
export async function* listObjects(
  scope: PagedListingScope,
  signal: AbortSignal,
): AsyncGenerator<WatchEvent, string, undefined> {
  const listing = new Listing(scope);
  let resourceVersion: string | undefined;
  let next: Promise<ListedPage> | undefined = scope.page(undefined);
  while (next) {
    const { token: asked, page, error } = await next;
    next = undefined;
    if (!page) {
      if (asked === undefined || !(error instanceof ApiGoneError)) throw error;
      // The continue token expired between pages: list again from the start. Objects already
      // delivered with the same resourceVersion are skipped, so nobody sees them twice.
      logger.info("The listing of {name} expired between pages; listing again.", { name: scope.name });
      next = scope.page(undefined);
      continue;
    }
    resourceVersion ??= page.metadata.resourceVersion;
    const token = page.metadata.continue || undefined;
    // The next page is on its way while this one's objects are handled (and their writes served).
    if (token) next = scope.page(token);
    const kind = page.kind?.replace(/List$/, "") || scope.kind;
    const apiVersion = page.apiVersion || scope.apiVersion;
    for (const object of page.items ?? []) {
      object.kind ??= kind;
      object.apiVersion ??= apiVersion;
      const event = listing.offer(object);
      if (event) yield event;
    }
  }
  // A page that came after the abort must not make an old scope's listing the resume point.
  if (signal.aborted) throw signal.reason;
  yield* listing.deletions();
  return resourceVersion ?? "";
}
