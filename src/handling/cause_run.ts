/**
 * A cause's run through its change handlers in one cycle: what the handlers see and where their
 * outcomes go, how a slow cycle writes what it has so far, and how far the handlers got.
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Diff } from "../model/diff.ts";
import type { Indices } from "../model/index_store.ts";
import type { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import type { ObjectLogger } from "../logging/object_logger.ts";
import type { ProgressStorage } from "../state/progress_storage.ts";
import type { Reason } from "./causes.ts";
import type { Memo } from "./context.ts";
import type { Lifecycle } from "./lifecycles.ts";

/** What the handlers of a cause see and where their outcomes go. */
export interface CauseRun {
  reason: Reason;
  body: KubernetesObject;
  old: JsonObject | null;
  new: JsonObject;
  diff: Diff;
  patch: Patch;
  logger: ObjectLogger;
  memo: Memo;
  indices: Indices;
  resource: Resource;
  storage: ProgressStorage;
  lifecycle: Lifecycle;
  defaultBackoff: number;
  /** The `timeout` of handlers that set none (`settings.execution.handlerTimeout`). */
  handlerTimeout?: number | null;
  /** Aborted when the operator stops serving the object (it exits, or the stream stops): the handlers' signals abort with it. */
  signal?: AbortSignal;
  /** Writes what the cycle has recorded so far, while a slow handler still runs. */
  checkpoint?: Checkpoint;
}

/**
 * Writing the outcomes of the handlers finished so far before the end of a slow cycle: a crash
 * then re-runs only the handler that was running (Kopf's guarantee for succeeded handlers).
 */
export interface Checkpoint {
  /** When (ms since the epoch) a handler still running makes the next checkpoint due. */
  readonly at: number;
  /**
   * Sends the copy of the cycle's patch taken before that handler started, armed for `due` (the
   * `at` of then): nothing if another checkpoint has been sent since.
   */
  readonly send: (patch: Patch, due: number) => void;
}

/** How far the handlers of a cause got in this cycle. */
export interface CauseOutcome {
  /** All handlers finished (succeeded, or failed permanently). */
  done: boolean;
  /** Seconds until the next handler is due, when not done (0: at once). */
  delay?: number;
  /** Top-level handlers that succeeded (sub-handlers are not counted, as in Kopf). */
  succeeded: number;
  /** Top-level handlers that failed for good. */
  failed: number;
  /**
   * The ids of all sub-handlers (any depth) of the cause's handlers, sorted, as their records
   * list them after this cycle: their progress must be purged with the handlers' own.
   */
  subrefs: string[];
}
