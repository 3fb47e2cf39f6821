/**
 * Deletions that are not: with a label selector, the server reports an object that stops matching
 * it as deleted. Each deletion is checked with a GET, and an object that still exists is reported
 * as a `MODIFIED` with its current state: with `left: true` unless it matches the selector again
 * (then the watch brings it back as `ADDED` soon, and it must stay known meanwhile).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { KubernetesObject } from "../model/body.ts";
import type { Resource } from "../model/resource.ts";
import type { ApiClient } from "./client.ts";
import { ApiNotFoundError, describeCause } from "./errors.ts";
import { resourcePath } from "./paths.ts";
import type { WatchEvent } from "./watch_state.ts";

const logger = getLogger(["kopf", "watching"]);

/**
 * How many deletions are checked at once: in a burst of them (a namespace deleted), each GET does
 * not wait for the one before, nor does the stream wait for each of them.
 */
export const CHECKED_AT_ONCE = 16;

/** What reading the next event came to: the event or the end, or the error the stream ended with. */
type Read<R> = IteratorResult<WatchEvent, R> | { failed: unknown };

/**
 * Passes the events through in their order, replacing the deletions of objects that still exist.
 * While deletions are being checked, the events behind them are read on (up to
 * {@linkcode CHECKED_AT_ONCE} waiting) and the deletions among them checked meanwhile.
 */
export async function* confirmDeletions<R>(
  events: AsyncGenerator<WatchEvent, R, undefined>,
  client: ApiClient,
  resource: Resource,
  selector: string,
  stream: string,
  signal: AbortSignal,
): AsyncGenerator<WatchEvent, R, undefined> {
  // The events read and not passed on yet, in the stream's order; each settles once its check is done.
  const ahead: Promise<WatchEvent>[] = [];
  let checking = 0;
  let reading: Promise<Read<R>> | undefined;
  let end: Read<R> | undefined;
  const read = () => reading ??= events.next().then((result) => result, (failed) => ({ failed }));
  const take = (result: Read<R>) => {
    reading = undefined;
    if ("failed" in result || result.done) {
      end = result;
      return;
    }
    const event = result.value;
    if (event.type !== "DELETED") {
      ahead.push(Promise.resolve(event));
      return;
    }
    checking++;
    const check = confirmed(event, client, resource, selector, stream, signal).finally(() => checking--);
    // Awaited in its turn; until then, a check cut by the stream's stop must not count as unhandled.
    check.catch(() => {});
    ahead.push(check);
  };
  try {
    for (;;) {
      if (ahead.length === 0) {
        if (end && "failed" in end) throw end.failed;
        if (end) return end.value as R;
        take(await read());
        continue;
      }
      if (checking > 0 && !end && ahead.length < CHECKED_AT_ONCE) {
        const reader = read();
        // The first event's check, or the next event to read (and maybe to check), whichever comes first.
        const next = await Promise.race([ahead[0].then(() => undefined), reader]);
        if (next) {
          take(next);
          continue;
        }
      }
      yield await ahead.shift()!;
    }
  } finally {
    await events.return(undefined as R);
  }
}

/** The event for a deletion: itself if the object is gone, else the object's current state. */
async function confirmed(
  event: WatchEvent & { object: KubernetesObject },
  client: ApiClient,
  resource: Resource,
  selector: string,
  stream: string,
  signal: AbortSignal,
): Promise<WatchEvent> {
  const current = await existing(event.object, client, resource, stream, signal);
  if (!current) return event;
  return { type: "MODIFIED", object: current, left: !matchesSelector(selector, current.metadata.labels ?? {}) };
}

/** The object's current state if it still exists (the same uid); `null` if it is gone or cannot be read. */
async function existing(
  object: KubernetesObject,
  client: ApiClient,
  resource: Resource,
  stream: string,
  signal: AbortSignal,
): Promise<KubernetesObject | null> {
  const { name, namespace, uid } = object.metadata;
  if (!name) return null;
  try {
    const current = await client.request<KubernetesObject>({
      path: resourcePath(resource, { namespace, name }),
      resource: resource.plural,
      signal,
    });
    return current.metadata.uid === uid ? current : null;
  } catch (error) {
    if (signal.aborted) throw error;
    if (!(error instanceof ApiNotFoundError)) {
      logger.warn(
        "Cannot tell whether {name} of {stream} is deleted or only unmatched ({error}); taking it as deleted.",
        { name, stream, error: describeCause(error) },
      );
    }
    return null;
  }
}

/**
 * Whether labels match a selector of equality requirements (`key`, `!key`, `key=value`,
 * `key==value`, `key!=value`); a set-based one (`key in (a,b)`) is taken as not matching.
 */
export function matchesSelector(selector: string, labels: Readonly<Record<string, string>>): boolean {
  for (const requirement of selector.split(",")) {
    const term = requirement.trim();
    const inequality = term.match(/^([^=!\s]+)\s*!=\s*(\S*)$/);
    if (inequality) {
      if (labels[inequality[1]] === inequality[2]) return false;
      continue;
    }
    const equality = term.match(/^([^=!\s]+)\s*==?\s*(\S*)$/);
    if (equality) {
      if (labels[equality[1]] !== equality[2]) return false;
      continue;
    }
    if (/^![^=!\s]+$/.test(term)) {
      if (Object.hasOwn(labels, term.slice(1))) return false;
      continue;
    }
    if (!/^[^=!\s()]+$/.test(term) || !Object.hasOwn(labels, term)) return false;
  }
  return true;
}
