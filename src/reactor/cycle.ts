/**
 * One object's cycle as its steps see it: the object, what the operator remembers of it, the
 * cycle's patch and logger, and -- for the steps that depend on the stored state -- the essences,
 * their diff and the handlers' match, computed once when first asked for.
 *
 * @module
 */

import type { ApiClient } from "../api/client.ts";
import type { JsonObject, KubernetesObject } from "../model/body.ts";
import { type Diff, diff as diffOf } from "../model/diff.ts";
import type { Indices } from "../model/index_store.ts";
import { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import type { Reason } from "../handling/causes.ts";
import { type Memo, resourceContext } from "../handling/context.ts";
import type { FilterContext } from "../handling/filters.ts";
import type { BackgroundHandler, ChangeHandler, EventHandler } from "../handling/handlers.ts";
import type { Lifecycle } from "../handling/lifecycles.ts";
import { backgroundHandlersFor, type ChangeMatch } from "../handling/selection.ts";
import type { ObjectBackground } from "../engines/background.ts";
import type { Settings } from "../settings/settings.ts";
import { resolveDiffBase } from "../state/essence_digest.ts";
import { maskSensitive, type SensitiveFields } from "../state/sensitive.ts";

/** Per list of change handlers (one per resource): the status fields they filter on. */
const statusFields = new WeakMap<readonly ChangeHandler[], readonly string[][]>();

/** The status fields that change handlers filter on, worked out once per resource and kept in `statusFields`. */
function statusFieldsOf(handlers: readonly ChangeHandler[]): readonly string[][] {
  const fields = handlers.flatMap((handler) =>
    handler.field && handler.field[0] === "status" ? [[...handler.field]] : []
  );
  statusFields.set(handlers, fields);
  return fields;
}

/** What the operator remembers about one object between its events. */
export interface ObjectMemory {
  /** The handlers' per-object memo. */
  memo: Memo;
  /** The object was first seen by the initial listing (so it may be resumed). */
  noticedByListing: boolean;
  /** A cycle has finished all handlers of a cause for it in this process (no resuming after that). */
  fullyHandledOnce: boolean;
  /** The resourceVersion of the operator's own last patch, until the watch has delivered it. */
  expectedVersion?: string;
  /** Until when (ms since the epoch) to wait for `expectedVersion` before handling anyway. */
  consistencyDeadline?: number;
  /** The object's daemons and timers, if its resource has any. */
  background?: ObjectBackground;
  /**
   * The resourceVersions of the last cycle's writes, while their echoes would change nothing
   * (`own_echoes.ts`): such an echo is not processed.
   */
  ownEchoes?: readonly string[];
  /**
   * After unexpected errors of its cycles (`error_throttle.ts`): how many came in a row, and until
   * when (ms since the epoch) the object rests. Kept here, not by the throttle: nearly every object
   * has none, and a glance at it spares two calls per cycle.
   */
  rest?: { readonly errors: number; readonly until: number };
}

/** Something for an object's queue: a watch event, or a wake-up to re-check delayed handlers. */
export type ObjectWork =
  | {
    kind: "event";
    type: string | null;
    object: KubernetesObject;
    left?: boolean;
    /** Found by a relisting after 410 Gone: the object's events since the last one seen are not known. */
    relisted?: boolean;
    /**
     * The resourceVersions of the object's earlier events that this one replaced while they waited
     * in its queue (the latest few): one of them may be the operator's own write's.
     */
    replaced?: readonly string[];
    /** When the watch delivered the event, or its object left the park (`performance.now()`): for the queues' wait. */
    arrived?: number;
  }
  | { kind: "wakeup"; object: KubernetesObject };

/** What a cycle needs besides the object. */
export interface CycleDeps {
  client: ApiClient;
  resource: Resource;
  settings: Settings;
  lifecycle: Lifecycle;
  eventHandlers: readonly EventHandler[];
  changeHandlers: readonly ChangeHandler[];
  /** The daemons and timers of the resource; an object's `memory.background` runs them. */
  backgroundHandlers: readonly BackgroundHandler[];
  /** The operator's indexes, for the handlers' contexts. */
  indices: Indices;
  /** The resource's fields whose values are masked in the diff-base, `old`/`new`/`diff` and logs. */
  sensitive: SensitiveFields;
  signal: AbortSignal;
}

/** The stored state of the object against its current one, for the steps that depend on it. */
export interface CycleState {
  /** The current essence (sensitive values masked). */
  readonly now: JsonObject;
  /** The last handled essence; `null` when the object was never handled. */
  readonly old: JsonObject | null;
  readonly diff: Diff;
  /** What change handlers' filters look at. */
  readonly match: ChangeMatch;
  /** The object has a deletion timestamp. */
  readonly deleting: boolean;
  /** The operator's finalizer is on the object. */
  readonly finalized: boolean;
  /** The daemons and timers that should run for the object (those that ended on their own aside). */
  readonly spawning: readonly BackgroundHandler[];
}

/**
 * One cycle of one object: what its steps read, and the patch they fill.
 *
 * Its fields are declared and set in the constructor, none initialised in the class body and none
 * `#private`: V8 runs a class's field initialisers as a function of their own at every construction,
 * and every cycle makes one (docs/performance/cpu.md, "Fewer functions, a third pass").
 */
export class Cycle {
  /** The piece of work the cycle handles. */
  declare readonly work: ObjectWork;
  /** What the operator remembers of the object. */
  declare readonly memory: ObjectMemory;
  /** What the cycle needs besides the object. */
  declare readonly deps: CycleDeps;
  /** The object as the work carries it. */
  declare readonly body: KubernetesObject;
  /**
   * The fields outside the essence that change handlers filter on (e.g. `status.phase`): kept in the
   * diff-base. A field, not a getter: read twice by nearly every cycle (docs/performance/cpu.md,
   * "Fewer functions, a second pass").
   */
  declare readonly extraFields: readonly string[][];
  /** Everything the cycle writes besides the finalizer, sent once at its end. */
  declare readonly patch: Patch;
  /** The cause, once detected: the filters of the cause's handlers see it (Kopf passes it too). */
  declare reason: Reason | undefined;
  declare private madeLogger: ObjectLogger | undefined;
  declare private madeState: CycleState | undefined;
  declare private essences: Pick<CycleState, "now" | "old" | "diff"> | undefined;

  constructor(work: ObjectWork, memory: ObjectMemory, deps: CycleDeps) {
    this.work = work;
    this.memory = memory;
    this.deps = deps;
    this.body = work.object;
    this.patch = new Patch();
    // All set now, `undefined` or not: every cycle keeps the same shape, whichever it makes later.
    this.reason =
      this.madeLogger =
      this.madeState =
      this.essences =
        undefined;
    // Looked up here, worked out by the helper only the first time: a call less in every cycle.
    this.extraFields = statusFields.get(deps.changeHandlers) ?? statusFieldsOf(deps.changeHandlers);
    const expected = memory.expectedVersion;
    if (expected === undefined) return;
    if (
      this.body.metadata.resourceVersion === expected || (work.kind === "event" && work.replaced?.includes(expected))
    ) {
      memory.expectedVersion = memory.consistencyDeadline = undefined;
    }
  }

  /** The logger of the object's messages; made on first use (most cycles of echoes log nothing). */
  get logger(): ObjectLogger {
    return this.madeLogger ??= new ObjectLogger(this.body);
  }

  /** The parts of the handlers' contexts that every handler of this cycle shares. */
  get extra(): {
    patch: Patch;
    logger: ObjectLogger;
    memo: Memo;
    resource: Resource;
    indices: Indices;
  } {
    const { patch, logger, memory, deps } = this;
    return { patch, logger, memo: memory.memo, resource: deps.resource, indices: deps.indices };
  }

  /** The essence as the diff-base storage builds it, without the progress storage's fields. */
  essence(): JsonObject {
    const { progressStorage, diffbaseStorage } = this.deps.settings.persistence;
    return progressStorage.clear(diffbaseStorage.build(this.body, this.extraFields));
  }

  /** What change handlers' filters see (the reason once detected). */
  filterContext(): FilterContext {
    const { old, now, diff } = this.#compare();
    const context = resourceContext(this.body, { ...this.extra, param: undefined });
    return { ...context, reason: this.reason, old, new: now, diff };
  }

  /** The stored state against the current one, computed on first use. */
  get state(): CycleState {
    if (this.madeState) return this.madeState;
    const { body, memory, deps } = this;
    const { old, now, diff } = this.#compare();
    const context = () => this.filterContext();
    const background = memory.background;
    this.madeState = {
      now,
      old,
      diff,
      match: { body, old, new: now, context },
      deleting: Boolean(body.metadata.deletionTimestamp),
      finalized: body.metadata.finalizers?.includes(deps.settings.persistence.finalizer) ?? false,
      // Daemons and timers that ended on their own for this object neither restart nor hold it.
      spawning: background
        ? backgroundHandlersFor(deps.backgroundHandlers, body, context).filter((h) => !background.finished(h.id))
        : [],
    };
    return this.madeState;
  }

  /**
   * The essences and their diff. A diff-base that holds sensitive values in clear (written by
   * Kopf, or before they were masked) is replaced in this cycle's patch, whatever else the cycle
   * does: its meaning stays the same.
   */
  #compare(): Pick<CycleState, "now" | "old" | "diff"> {
    if (this.essences) return this.essences;
    const { body, deps } = this;
    const { progressStorage, diffbaseStorage } = deps.settings.persistence;
    const salt = body.metadata.uid ?? "";
    // `essence()` and the masking written out, each asked only where it has work: once per cycle of
    // every object, where each distinct function costs (docs/performance/cpu.md, "Fewer functions, a
    // third pass").
    const essence = progressStorage.clear(diffbaseStorage.build(body, this.extraFields));
    const sensitive = deps.sensitive.length > 0;
    const now = sensitive ? maskSensitive(essence, deps.sensitive, salt) : essence;
    const stored = diffbaseStorage.fetch(body);
    const masked = sensitive ? maskSensitive(stored, deps.sensitive, salt) : stored;
    if (masked !== stored) diffbaseStorage.store(body, this.patch, masked!);
    // A fresh object has no diff-base, hence no digest of one to resolve.
    const old = masked === null ? null : resolveDiffBase(masked, now);
    return this.essences = { now, old, diff: diffOf(old, now) };
  }
}
