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

/** Passes the events through, replacing the deletions of objects that still exist. */
export async function* confirmDeletions<R>(
  events: AsyncGenerator<WatchEvent, R, undefined>,
  client: ApiClient,
  resource: Resource,
  selector: string,
  stream: string,
  signal: AbortSignal,
): AsyncGenerator<WatchEvent, R, undefined> {
  try {
    for (;;) {
      const next = await events.next();
      if (next.done) return next.value;
      const event = next.value;
      const current = event.type === "DELETED" ? await existing(event.object, client, resource, stream, signal) : null;
      if (!current) yield event;
      else yield { type: "MODIFIED", object: current, left: !matchesSelector(selector, current.metadata.labels ?? {}) };
    }
  } finally {
    await events.return(undefined as R);
  }
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
