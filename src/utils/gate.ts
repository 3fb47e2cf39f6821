/**
 * A gate that work waits at: open or closed, with waiters released when it opens and listeners
 * told of every change. It knows nothing of what it guards.
 *
 * @module
 */

/**
 * An open/closed state to wait for and to follow.
 *
 * @example
 * ```ts
 * import { Gate } from "./gate.ts";
 * const gate = new Gate(false);
 * const passed = gate.whenOpen().then(() => "passed");
 * gate.set(true);
 * await passed;
 * ```
 */
export class Gate {
  #open: boolean;
  readonly #waiters = new Set<() => void>();
  readonly #listeners = new Set<(open: boolean) => void>();

  /** @param open Whether the gate starts open. */
  constructor(open = true) {
    this.#open = open;
  }

  /** Whether the gate is open now. */
  get isOpen(): boolean {
    return this.#open;
  }

  /** Opens or closes the gate; waiters pass and listeners learn of it only when the state changes. */
  set(open: boolean): void {
    if (this.#open === open) return;
    this.#open = open;
    if (open) {
      const waiters = [...this.#waiters];
      this.#waiters.clear();
      for (const release of waiters) release();
    }
    for (const listener of [...this.#listeners]) listener(open);
  }

  /** Resolves once the gate is open (at once if it is); rejects with the signal's reason if it aborts first. */
  whenOpen(signal?: AbortSignal): Promise<void> {
    if (this.#open) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const release = () => {
        signal?.removeEventListener("abort", abort);
        resolve();
      };
      const abort = () => {
        this.#waiters.delete(release);
        reject(signal!.reason);
      };
      this.#waiters.add(release);
      signal?.addEventListener("abort", abort, { once: true });
    });
  }

  /** Calls the listener on every change of state; returns the function that stops it. */
  subscribe(listener: (open: boolean) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
