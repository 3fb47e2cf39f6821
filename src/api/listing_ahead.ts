/**
 * A listing by pages with the watch already open: the watch opens from the listing's
 * resourceVersion as soon as the first page has come, and its events are delivered among the
 * listed objects. A listing read at the pace of the handling (the backlog limit) may outlast the
 * API server's history of changes, and a watch opened only after it would find its start compacted
 * (410) and list everything again. The pages come from {@linkcode listPages} and are compared by a
 * {@linkcode Listing}; the watch requests and their events are the stream's (see `watching.ts`).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { linkSignals } from "../utils/signals.ts";
import { Arrival, Doorbell } from "../utils/arrivals.ts";
import { describeCause } from "./errors.ts";
import { type Listing, listPages, type PagedListing } from "./listing.ts";
import type { WatchEvent } from "./watch_state.ts";

const logger = getLogger(["kopf", "watching"]);

/**
 * How a watch request ended; `"quiet"`: stalled while its connection answered other requests;
 * `"unstreamed"`: its listing did not stream, the next one goes by pages.
 */
export type Outcome = "ended" | "gone" | "stalled" | "quiet" | "unstreamed";

/** A listing by pages with the watch open since its first page: where the watch is, until the listing completes. */
export interface Ahead {
  /** The listing in progress, told of the watch's events that overtake it. */
  readonly listing: Listing;
  /** The resourceVersion of the watch's latest event or bookmark (at first the listing's own). */
  resume: string;
}

/** What a listing by pages needs of its stream; asked once per listing or per watch request. */
export interface ListingStream {
  /** The listing to compare the objects with, as the stream's scope stands when it starts. */
  readonly listing: () => Listing;
  /** How the pages are asked for (the listing's resourceVersion is told to this listing, not the stream). */
  readonly pages: Omit<PagedListing, "snapshot">;
  /** Opens one watch request of the stream from `from`. */
  readonly watch: (signal: AbortSignal, from: string) => AsyncGenerator<WatchEvent, Outcome, undefined>;
  /**
   * Hands the stream the listing in progress once the watch is open (the watch's events move its
   * `resume` and overtake listed objects), or `undefined` once the listing is over.
   */
  readonly ahead: (ahead: Ahead | undefined) => void;
  /** The end of the listing: its `LISTED` event (the stream goes on from `resourceVersion`). */
  readonly completed: (resourceVersion: string) => WatchEvent;
  /** The stream's name, for logs. */
  readonly name: string;
}

/** The next of the events of the watch opened amid a listing, or its failure (never a rejection). */
type WatchStep = { readonly watched: IteratorResult<WatchEvent, Outcome> } | { readonly failed: unknown };

/**
 * Lists all objects page by page and reports what changed against the known objects (the first
 * listing knows none), with the watch open from the first page (the module's doc says why) and its
 * events delivered among the listed objects. Returns the outcome of that watch once it ends after
 * the listing; if it ended before, `"gone"` for a 410 (a watch after the listing would get it too),
 * else `undefined` (the stream watches on from where it got).
 */
export async function* listAhead(
  stream: ListingStream,
  attempt: AbortSignal,
): AsyncGenerator<WatchEvent, Outcome | undefined, undefined> {
  const listing = stream.listing();
  let snapshot: string | undefined;
  const objects = listPages({ ...stream.pages, snapshot: (resourceVersion) => snapshot = resourceVersion }, attempt);
  const early = new AbortController();
  using linked = linkSignals(early.signal, attempt);
  // Whichever comes first, each step followed once (not raced: see arrivals.ts).
  const doorbell = new Doorbell();
  let ahead: Ahead | undefined;
  let watch: AsyncGenerator<WatchEvent, Outcome, undefined> | undefined;
  let watched: Arrival<WatchStep> | undefined;
  let openedFrom: string | undefined;
  let ended: Outcome | undefined;
  const open = (from: string) => {
    watch = stream.watch(linked.signal, openedFrom = from);
    watched = new Arrival(nextStep(watch), doorbell);
  };
  let listed = new Arrival(objects.next(), doorbell);
  try {
    for (;;) {
      while (!watched?.arrived && !listed.arrived) await doorbell.wait();
      // The watch first when both have something: its events wait on the server, which ends a watch
      // left unread for long (the listing's wait in memory).
      if (!watched?.arrived) {
        const step = listed.take();
        if (step.done) {
          yield* listing.deletions();
          const resume = ahead?.resume ?? step.value;
          stream.ahead(ahead = undefined);
          yield stream.completed(resume);
          if (ended === "gone") return ended;
          break;
        }
        // Compared when delivered, not when read: the watch's events read meanwhile drop what they overtook.
        const event = listing.offer(step.value);
        listed = new Arrival(objects.next(), doorbell);
        if (!watch && snapshot !== undefined) {
          stream.ahead(ahead = { listing, resume: snapshot });
          open(snapshot);
        }
        if (event) yield event;
        continue;
      }
      const step = watched.take();
      if ("watched" in step && !step.watched.done) {
        watched = new Arrival(nextStep(watch!), doorbell);
        yield step.watched.value;
      } else {
        ended = "watched" in step && step.watched.done ? step.watched.value : undefined;
        const resume = ahead!.resume;
        // A watch that moved on before its end resumes at once, as the stream's watch would.
        if (ended !== undefined && ended !== "gone" && resume !== openedFrom) {
          open(resume);
          continue;
        }
        // The listing goes on alone; after it, a watch resumes from where this one got.
        watched = undefined;
        const why = "failed" in step ? describeCause(step.failed) : ended;
        logger.debug("The watch of {name} opened amid its listing ended ({why}).", { name: stream.name, why });
      }
    }
    // The watch opened amid the listing goes on as the stream's watch.
    if (!watched) return undefined;
    while (!watched.arrived) await doorbell.wait();
    const step = watched.take();
    if ("failed" in step) throw step.failed;
    if (step.watched.done) return step.watched.value;
    yield step.watched.value;
    return yield* watch!;
  } finally {
    stream.ahead(undefined);
    early.abort();
  }
}

/** Asks a watch request opened amid a listing for its next event; never rejects. */
function nextStep(watch: AsyncGenerator<WatchEvent, Outcome, undefined>): Promise<WatchStep> {
  return watch.next().then((watched) => ({ watched }), (failed: unknown) => ({ failed }));
}
