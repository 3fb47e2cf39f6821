/**
 * The listing part of a watch stream: every object, compared with the objects the stream already
 * knows -- the first listing reports all as first seen, a relisting (after 410 Gone, or a change of
 * scope) only what changed meanwhile, deletions included. The objects come page by page
 * ({@linkcode listPages}, with the watch already open from the first page: see `listing_ahead.ts`)
 * or as the initial events of a watch (see `streaming_lists.ts`); a {@linkcode Listing} compares
 * them alike.
 *
 * @module
 */

import type { KubernetesList, KubernetesObject } from "../model/body.ts";
import { identityKey, identityOf, type ObjectIdentity, type WatchEvent } from "./watch_state.ts";

/** A page of a listing, or why there is none. */
export interface ListedPage {
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
export interface PagedListing {
  /** Asks for one page (the first with no token); never rejects. */
  readonly page: (token: string | undefined) => Promise<ListedPage>;
  /** The kind and apiVersion of the resource, for items that the server sends without them. */
  readonly kind: string;
  readonly apiVersion: string;
  /** Told the listing's resourceVersion as soon as the first page has come (every page is of that moment). */
  readonly snapshot?: (resourceVersion: string) => void;
}

/**
 * One listing in progress: each listed object is compared with what the stream knew, and once the
 * last has come, the known objects that were not listed are the deletions missed meanwhile. A watch
 * opened from the listing's resourceVersion before its end may bring an object's change before the
 * listing reaches it ({@linkcode Listing.overtake}): the listed state, older, is dropped then.
 */
export class Listing {
  readonly #scope: ListingScope;
  /** The objects listed so far, and those whose change a watch brought first, by uid. */
  readonly #reached = new Set<string>();

  constructor(scope: ListingScope) {
    this.#scope = scope;
  }

  /** One listed object: what to deliver for it, if anything (the known objects are updated). */
  offer(object: KubernetesObject): WatchEvent | undefined {
    const { known, fresh, revisit, accepts } = this.#scope;
    const uid = object.metadata.uid ?? identityKey(object);
    if (accepts?.(uid) === false) return undefined;
    // Delivered already, or overtaken by a newer state from the watch.
    if (this.#reached.has(uid)) return undefined;
    this.#reached.add(uid);
    const before = known.get(uid);
    known.set(uid, identityOf(object));
    if (fresh && (!before || revisit?.(uid))) return { type: null, object };
    if (!before) return { type: "ADDED", object, relisted: true };
    if (before.metadata.resourceVersion !== object.metadata.resourceVersion) {
      return { type: "MODIFIED", object, relisted: true };
    }
    return undefined;
  }

  /**
   * An object's event from a watch opened amid the listing, to be called before the event updates
   * the known objects: from now on the listing drops the object (its listed state is older than the
   * event's) and does not count it as deleted. Returns what to deliver: a change of an object that
   * the listing has not reached comes as the listing would have brought it (first seen, where it
   * delivers such objects so), any other event as it is.
   */
  overtake(uid: string, type: "ADDED" | "MODIFIED" | "DELETED", object: KubernetesObject): WatchEvent {
    const { known, fresh, revisit } = this.#scope;
    const reached = this.#reached.has(uid);
    this.#reached.add(uid);
    if (!reached && fresh && type === "MODIFIED" && (!known.has(uid) || revisit?.(uid))) return { type: null, object };
    return { type, object };
  }

  /** After the last object: the known objects that were not listed, each as a deletion (and forgotten). */
  *deletions(): Generator<WatchEvent, void, undefined> {
    const known = this.#scope.known;
    for (const [uid, identity] of [...known]) {
      if (this.#reached.has(uid)) continue;
      known.delete(uid);
      yield { type: "DELETED", object: structuredClone(identity) as KubernetesObject, relisted: true };
    }
  }
}

/**
 * Lists all objects page by page, each page asked for while the one before is read; yields the
 * objects (with the kind and apiVersion that pages leave out) and returns the listing's
 * resourceVersion (where the watch goes on from). A continue token expired between pages (etcd
 * compacted the listing's moment) ends it with 410 Gone (`ApiGoneError`): the stream lists again,
 * comparing with what it knows by then. Nothing of it counts if the signal aborts before it
 * completes: it throws the signal's reason then.
 */
export async function* listPages(
  scope: PagedListing,
  signal: AbortSignal,
): AsyncGenerator<KubernetesObject, string, undefined> {
  let resourceVersion: string | undefined;
  let next: Promise<ListedPage> | undefined = scope.page(undefined);
  while (next) {
    const { page, error }: ListedPage = await next;
    if (!page) throw error;
    if (resourceVersion === undefined) {
      resourceVersion = page.metadata.resourceVersion ?? "";
      scope.snapshot?.(resourceVersion);
    }
    const token: string | undefined = page.metadata.continue || undefined;
    // The next page is on its way while this one's objects are handled (and their writes served).
    next = token ? scope.page(token) : undefined;
    const kind = page.kind?.replace(/List$/, "") || scope.kind;
    const apiVersion = page.apiVersion || scope.apiVersion;
    for (const object of page.items ?? []) {
      object.kind ??= kind;
      object.apiVersion ??= apiVersion;
      yield object;
    }
  }
  // A page that came after the abort must not make an old scope's listing the resume point.
  if (signal.aborted) throw signal.reason;
  return resourceVersion ?? "";
}
