/**
 * What one stream remembers of each of its objects between their events: the memories by uid, made
 * when an object is first seen (with its daemons and timers, if the resource has any), and forgotten
 * when it is deleted or leaves the stream's selection.
 *
 * @module
 */

import type { ObjectBackground } from "../engines/background.ts";
import type { Memo } from "../handling/context.ts";
import type { StopCause } from "../handling/stopping.ts";
import type { KubernetesObject } from "../model/body.ts";
import { newMemory, type ObjectMemory, type ObjectWork } from "./processing.ts";

/** Makes the daemons and timers of an object seen for the first time, for its new memory. */
export type BackgroundStarter = (uid: string, memory: ObjectMemory, object: KubernetesObject) => ObjectBackground;

/**
 * The memories of one stream's objects, by uid.
 *
 * @example
 * ```ts
 * import { ObjectMemories } from "./object_memories.ts";
 * const memories = new ObjectMemories({ team: "a" });
 * const object = { apiVersion: "v1", kind: "ConfigMap", metadata: { uid: "u1", name: "one" } };
 * const memory = memories.recall("u1", { kind: "event", type: null, object });
 * memories.forget("u1", memory);
 * ```
 */
export class ObjectMemories {
  readonly #memo: Memo;
  readonly #startBackground: BackgroundStarter | undefined;
  readonly #memories = new Map<string, ObjectMemory>();

  /**
   * @param memo The operator's memo: each object's memo starts as a shallow copy of it.
   * @param startBackground Makes each new memory's daemons and timers; none without it.
   */
  constructor(memo: Memo, startBackground?: BackgroundStarter) {
    this.#memo = memo;
    this.#startBackground = startBackground;
  }

  /** The memory of an object, if it is remembered. */
  get(uid: string): ObjectMemory | undefined {
    return this.#memories.get(uid);
  }

  /**
   * The memory of an object, made now if it is seen for the first time: an object first seen by
   * the initial listing (an event without a type) is marked so (it may be resumed).
   */
  recall(uid: string, work: ObjectWork): ObjectMemory {
    let memory = this.#memories.get(uid);
    if (!memory) {
      memory = newMemory(this.#memo, work.kind === "event" && work.type === null);
      this.#memories.set(uid, memory);
      if (this.#startBackground) memory.background = this.#startBackground(uid, memory, work.object);
    }
    return memory;
  }

  /** The uids of the remembered objects. */
  keys(): IterableIterator<string> {
    return this.#memories.keys();
  }

  /** Whether this memory is still the object's (not forgotten, nor replaced by a newer one). */
  holds(uid: string, memory: ObjectMemory): boolean {
    return this.#memories.get(uid) === memory;
  }

  /** Forgets an object; with `memory`, only if that is still its memory. Its daemons and timers are not stopped here. */
  forget(uid: string, memory?: ObjectMemory): void {
    if (memory === undefined || this.holds(uid, memory)) this.#memories.delete(uid);
  }

  /**
   * Tells the daemons and timers of every remembered object to stop for the cause (those without
   * their own `cancellationTimeout` get `grace` seconds); settles when all have stopped.
   */
  async shutdown(cause: StopCause, grace: number): Promise<void> {
    await Promise.all([...this.#memories.values()].map((memory) => memory.background?.shutdown(cause, grace)));
  }

  /** Forgets every object. */
  clear(): void {
    this.#memories.clear();
  }
}
