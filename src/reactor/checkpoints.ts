/**
 * Checkpoints of a slow cycle: while a handler is still running `settings.persistence.checkpointDelay`
 * seconds into a cycle, what the cycle recorded before it started (the results and progress of
 * the handlers finished so far) is written, so that a crash re-runs only the unfinished handlers.
 * Fast cycles never reach a checkpoint and keep their one patch; slow ones write at most one
 * checkpoint per `checkpointDelay`.
 *
 * @module
 */

import type { ApiClient } from "../api/client.ts";
import { applyPatch } from "../api/patching.ts";
import type { KubernetesObject } from "../model/body.ts";
import { patchHeld } from "../model/inconsistencies.ts";
import type { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import type { Checkpoint } from "../handling/cause_run.ts";
import { maskSensitive, type SensitiveFields } from "../state/sensitive.ts";

/** What checkpoints need to write. */
export interface CheckpointDeps {
  client: ApiClient;
  resource: Resource;
  signal: AbortSignal;
  /** The resource's fields whose values never reach the logs. */
  sensitive: SensitiveFields;
}

/**
 * The checkpoints of one cycle, sent one after another; the cycle's last patch waits for them.
 *
 * Its fields are declared and set in the constructor, not initialised in the class body nor
 * `#private`: V8 runs a class's field initialisers as a function of their own at every construction,
 * and every cycle with handlers makes one (docs/performance/cpu.md, "Fewer functions, a third pass").
 */
export class CycleCheckpoints implements Checkpoint {
  /** The object as the last checkpoint written left it, if any was written. */
  declare written: KubernetesObject | undefined;
  /**
   * Resolves when every checkpoint begun has been written (or has failed): awaited before the cycle's
   * own patch. `undefined` while none has begun (nearly every cycle): nothing to await then.
   */
  declare sending: Promise<void> | undefined;
  /**
   * The checkpoint for the handlers of the cycle (this object, whose `at` and `send` serve it: not a
   * literal with an accessor made per cycle); `undefined` when disabled. A field, not a getter: read
   * by every cycle with handlers, where each function run costs (docs/performance/cpu.md, "Fewer
   * functions, a second pass").
   */
  declare readonly checkpoint: Checkpoint | undefined;
  declare private readonly body: KubernetesObject;
  declare private readonly deps: CheckpointDeps;
  /** Seconds between checkpoints; `null`: none. */
  declare private readonly delay: number | null;
  /** When (ms since the epoch) the next checkpoint is due. */
  declare private next: number;
  /** The last checkpoint's merge-patch as sent: the same one is not sent again. */
  declare private last: string;

  /** @param delay seconds into the cycle (from now); `null`: no checkpoints. */
  constructor(body: KubernetesObject, delay: number | null, deps: CheckpointDeps) {
    this.written = this.sending = undefined;
    this.checkpoint = delay === null ? undefined : this;
    this.body = body;
    this.deps = deps;
    this.delay = delay;
    this.next = delay === null ? Infinity : Date.now() + delay * 1000;
    this.last = "";
  }

  /** When a handler still running makes the next checkpoint due. */
  get at(): number {
    return this.next;
  }

  /** Sends the patch taken for `due`, unless another checkpoint has been sent since. */
  send(patch: Patch, due: number): void {
    // At most one checkpoint per `delay`: a slow cycle with many handlers still writes rarely.
    if (due !== this.next || this.delay === null) return;
    this.next = Date.now() + this.delay * 1000;
    this.queue(patch);
  }

  private queue(patch: Patch): void {
    this.sending = (this.sending ?? Promise.resolve()).then(() => this.sendNow(patch));
  }

  private async sendNow(patch: Patch): Promise<void> {
    const wanted = patch.toMergePatch();
    const text = JSON.stringify(wanted);
    if (text === this.last || patchHeld(wanted, this.body)) return;
    this.last = text;
    const logger = new ObjectLogger(this.body, { local: true });
    const shown = maskSensitive(wanted, this.deps.sensitive, this.body.metadata.uid ?? "");
    logger.debug(`A handler is still running; recording the handlers finished so far: ${JSON.stringify(shown)}`);
    try {
      const { client, resource, signal } = this.deps;
      const result = await applyPatch(client, resource, this.body, patch, signal);
      if (result) this.written = result;
    } catch (error) {
      // Not fatal: the cycle's own patch carries the same records when the cycle ends.
      logger.warning(`Recording the handlers finished so far has failed; they are recorded at the end: ${error}`);
    }
  }
}
