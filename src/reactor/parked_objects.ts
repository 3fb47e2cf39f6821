/**
 * Objects parked behind a closed gate (a replica standing by for the leadership): while it is
 * closed, the latest state of each object is kept instead of handled; when it opens, every parked
 * object is released as if listed anew.
 *
 * @module
 */

import type { KubernetesObject } from "../model/body.ts";
import type { Gate } from "../utils/gate.ts";

/**
 * The latest state of each object seen while a gate is closed, by uid.
 *
 * @example
 * ```ts
 * import { Gate } from "../utils/gate.ts";
 * import { ParkedObjects } from "./parked_objects.ts";
 * const gate = new Gate(false);
 * using parked = new ParkedObjects(gate, (uid) => console.log(`handle ${uid}`));
 * const object = { apiVersion: "v1", kind: "ConfigMap", metadata: { uid: "u1", name: "one" } };
 * if (parked.closed) parked.park("u1", "MODIFIED", object);
 * gate.set(true); // handle u1
 * ```
 */
export class ParkedObjects implements Disposable {
  readonly #gate: Gate | undefined;
  readonly #objects = new Map<string, KubernetesObject>();
  readonly #unsubscribe: (() => void) | undefined;

  /**
   * @param gate The gate; without one, nothing is ever parked.
   * @param release Takes each parked object when the gate opens.
   */
  constructor(gate: Gate | undefined, release: (uid: string, object: KubernetesObject) => void) {
    this.#gate = gate;
    this.#unsubscribe = gate?.subscribe((open) => {
      if (!open) return;
      const objects = [...this.#objects];
      this.#objects.clear();
      for (const [uid, object] of objects) release(uid, object);
    });
  }

  /** Whether objects are parked now, not handled: the gate is closed. */
  get closed(): boolean {
    return this.#gate !== undefined && !this.#gate.isOpen;
  }

  /** How many objects are parked. */
  get size(): number {
    return this.#objects.size;
  }

  /** Keeps the object's latest state till the gate opens; a deleted object is no longer kept. */
  park(uid: string, type: string | null, object: KubernetesObject): void {
    if (type === "DELETED") this.#objects.delete(uid);
    else this.#objects.set(uid, object);
  }

  /** Stops following the gate and drops the parked objects. */
  [Symbol.dispose](): void {
    this.#unsubscribe?.();
    this.#objects.clear();
  }
}
