/**
 * One processing cycle of one object: event handlers, then change handlers (once the operator's
 * own last patch has been seen), then one patch for everything the cycle changed.
 *
 * @module
 */

import type { ApiClient } from "../api/client.ts";
import { applyPatch } from "../api/patching.ts";
import type { KubernetesObject } from "../model/body.ts";
import { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import { handleCreation, readDiffBase } from "../handling/change_handling.ts";
import type { Memo } from "../handling/context.ts";
import { runEventHandlers } from "../handling/event_handling.ts";
import type { ChangeHandler, EventHandler } from "../handling/handlers.ts";
import type { Settings } from "../settings/settings.ts";

/** What the operator remembers about one object between its events. */
export interface ObjectMemory {
  /** The handlers' per-object memo. */
  memo: Memo;
  /** The resourceVersion of the operator's own last patch, until the watch has delivered it. */
  expectedVersion?: string;
  /** Until when (ms since the epoch) to wait for `expectedVersion` before handling anyway. */
  consistencyDeadline?: number;
}

/** Something for an object's queue: a watch event, or a wake-up to re-check delayed handlers. */
export type ObjectWork =
  | { kind: "event"; type: string | null; object: KubernetesObject }
  | { kind: "wakeup"; object: KubernetesObject };

/** What a cycle needs besides the object. */
export interface CycleDeps {
  client: ApiClient;
  resource: Resource;
  settings: Settings;
  eventHandlers: readonly EventHandler[];
  createHandlers: readonly ChangeHandler[];
  signal: AbortSignal;
}

/** What a cycle asks its caller to do afterwards. */
export interface CycleOutcome {
  /** Re-check the object after so many seconds (delayed handlers, or a consistency wait). */
  wakeupAfter?: number;
}

/** Processes one piece of work for one object. */
export async function processObject(work: ObjectWork, memory: ObjectMemory, deps: CycleDeps): Promise<CycleOutcome> {
  const body = work.object;
  const logger = new ObjectLogger(body);
  const patch = new Patch();
  const extra = { patch, logger, memo: memory.memo, resource: deps.resource };

  if (work.kind === "event") {
    await runEventHandlers(deps.eventHandlers, { type: work.type, object: body }, extra);
    if (work.type === "DELETED") return {};
  }

  const outcome: CycleOutcome = {};
  if (deps.createHandlers.length && !body.metadata.deletionTimestamp && readDiffBase(body, deps.settings) === null) {
    const version = body.metadata.resourceVersion;
    if (memory.expectedVersion !== undefined && version === memory.expectedVersion) {
      memory.expectedVersion = memory.consistencyDeadline = undefined;
    }
    const waiting = memory.expectedVersion !== undefined && Date.now() < (memory.consistencyDeadline ?? 0);
    if (waiting) {
      // Our own last patch is not seen yet: this body predates it, and handling it would repeat
      // work already done. Its echo will come; re-check at the deadline in case it never does.
      logger.debug(`Waiting for resourceVersion ${memory.expectedVersion} before handling.`);
      outcome.wakeupAfter = ((memory.consistencyDeadline ?? 0) - Date.now()) / 1000;
    } else {
      memory.expectedVersion = memory.consistencyDeadline = undefined;
      const result = await handleCreation(deps.createHandlers, body, { ...extra, settings: deps.settings });
      outcome.wakeupAfter = result.delay;
    }
  }

  if (!patch.empty) {
    logger.debug(`Patching with: ${JSON.stringify(patch.toMergePatch())}`);
    const patched = await applyPatch(deps.client, deps.resource, body, patch, deps.signal);
    const timeout = deps.settings.persistence.consistencyTimeout;
    if (patched?.metadata.resourceVersion && timeout > 0) {
      memory.expectedVersion = patched.metadata.resourceVersion;
      memory.consistencyDeadline = Date.now() + timeout * 1000;
    }
  }
  return outcome;
}
