/**
 * What bench/compare.ts sees of the objects of a namespace (or of all namespaces): one list+watch
 * stream, the latest version of each object, and the moment a condition first holds for enough of them.
 *
 * @module
 */

import type { ApiClient } from "../src/api/client.ts";
import { Watcher } from "../src/api/watching.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { KOPFEXAMPLES } from "../tests/support/cluster.ts";

/** A condition on one object. */
export type Condition = (object: KubernetesObject) => boolean;

/** The objects of one namespace (or of all), as the watch stream shows them; keyed by namespace and name. */
export class Tracker implements AsyncDisposable {
  readonly #objects = new Map<string, KubernetesObject>();
  readonly #abort = new AbortController();
  readonly #running: Promise<void>;
  /** The objects changed since the last check (their latest version, or undefined when deleted). */
  #recent = new Map<string, KubernetesObject | undefined>();
  #changed: () => void = () => {};
  /** The time limit of the wait under way. */
  #timer: ReturnType<typeof setTimeout> | undefined;

  private constructor(client: ApiClient, namespace: string | null, listed: () => void) {
    const watcher = new Watcher(client, KOPFEXAMPLES, { namespace, signal: this.#abort.signal });
    this.#running = (async () => {
      try {
        for await (const event of watcher) {
          if (event.type === "LISTED") {
            listed();
            continue;
          }
          const name = `${event.object.metadata.namespace}/${event.object.metadata.name}`;
          if (event.type === "DELETED") this.#objects.delete(name);
          else this.#objects.set(name, event.object);
          this.#recent.set(name, this.#objects.get(name));
          this.#changed();
        }
      } catch (error) {
        if (!this.#abort.signal.aborted) throw error;
      }
    })();
  }

  /** Starts watching a namespace (`null`: all) and returns once the first listing is done. */
  static async start(client: ApiClient, namespace: string | null): Promise<Tracker> {
    const { promise, resolve } = Promise.withResolvers<void>();
    const tracker = new Tracker(client, namespace, resolve);
    await promise;
    return tracker;
  }

  /**
   * Waits until `condition` holds for `count` objects at once (for at most `seconds`); returns
   * when it first did (`performance.now()`). Objects are re-checked as their changes arrive.
   * `first`, if given, is told when the condition first holds for any object.
   */
  until(condition: Condition, count: number, seconds = 1800, first?: (at: number) => void): Promise<number> {
    const holding = new Set<string>();
    for (const [name, object] of this.#objects) if (condition(object)) holding.add(name);
    let told = false;
    return this.#wait(
      () => {
        for (const [name, object] of this.#recent) {
          if (object && condition(object)) holding.add(name);
          else holding.delete(name);
        }
        if (!told && holding.size > 0) {
          told = true;
          first?.(performance.now());
        }
        return holding.size >= count;
      },
      `${count} objects to match`,
      seconds,
    );
  }

  /** How many objects the condition holds for now. */
  count(condition: Condition): number {
    let count = 0;
    for (const object of this.#objects.values()) if (condition(object)) count++;
    return count;
  }

  /** Waits until no object is left; returns when (`performance.now()`). */
  untilEmpty(seconds = 1800): Promise<number> {
    return this.#wait(() => this.#objects.size === 0, "every object to be gone", seconds);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    // A wait given up by its caller (its contestant died) leaves no timer keeping the bench alive.
    clearTimeout(this.#timer);
    this.#changed = () => {};
    this.#abort.abort();
    await this.#running;
  }

  #wait(check: () => boolean, what: string, seconds: number): Promise<number> {
    const { promise, resolve, reject } = Promise.withResolvers<number>();
    this.#recent = new Map();
    clearTimeout(this.#timer);
    const timer = setTimeout(() => {
      this.#changed = () => {};
      reject(new Error(`Timed out after ${seconds} s waiting for ${what}.`));
    }, seconds * 1000);
    this.#timer = timer;
    const evaluate = () => {
      const done = check();
      this.#recent = new Map();
      if (!done) return;
      clearTimeout(timer);
      this.#changed = () => {};
      resolve(performance.now());
    };
    this.#changed = evaluate;
    evaluate();
    return promise;
  }
}
