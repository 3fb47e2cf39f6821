/**
 * Superseding: progress left by a cause that a newer one replaced (an update still retrying when
 * the object is deleted) is reported with its counts and purged, so the new cause starts clean.
 *
 * @module
 */

import type { KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import type { ObjectLogger } from "../logging/object_logger.ts";
import { type Reason, REASON_TITLES } from "../handling/causes.ts";
import type { ChangeHandler } from "../handling/handlers.ts";
import type { ProgressRecord } from "../state/progress.ts";
import type { ProgressStorage } from "../state/progress_storage.ts";

/** Purges (in the patch) the progress of the handlers' records that belong to another cause than `reason`. */
export function supersede(
  handlers: readonly ChangeHandler[],
  reason: Reason,
  body: KubernetesObject,
  patch: Patch,
  logger: ObjectLogger,
  storage: ProgressStorage,
): void {
  // The records of another cause by handler id (each id once): made only when one is found, as
  // nearly every cycle finds none.
  let found: Map<string, ProgressRecord> | undefined;
  for (const { id } of handlers) {
    const record = storage.fetch(id, body);
    const purpose = record?.purpose as Reason | undefined;
    if (!record || !purpose || purpose === reason || !(purpose in REASON_TITLES)) continue;
    (found ??= new Map()).set(id, record);
  }
  if (!found) return;
  const stale = new Map<Reason, ProgressRecord[]>();
  const ids = new Set<string>();
  for (const [id, record] of found) {
    const purpose = record.purpose as Reason;
    stale.set(purpose, [...stale.get(purpose) ?? [], record]);
    ids.add(id);
    for (const subref of record.subrefs ?? []) ids.add(subref);
  }
  for (const [purpose, records] of stale) {
    const succeeded = records.filter((record) => record.success).length;
    const failed = records.filter((record) => record.failure).length;
    const left = records.length - succeeded - failed;
    logger.info(
      `${REASON_TITLES[purpose].noun} is superseded by ${REASON_TITLES[reason].gerund}: ` +
        `${succeeded} succeeded; ${failed} failed; ${left} left to the moment.`,
    );
  }
  for (const id of ids) storage.purge(id, body, patch);
}
