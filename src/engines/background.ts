/**
 * The daemons and timers of one object: started when the object matches them, stopped when it
 * stops matching, is deleted, or the operator exits -- with the stages of a stop (a signal, a
 * `cancellationBackoff`, a `cancellationTimeout`, then leaving the daemon orphaned) -- and the
 * object's live body and change times that they read.
 *
 * JavaScript cannot interrupt a running function: a stop aborts the `stopped` signal at once, and
 * the stages only decide how long to wait for the daemon to notice it.
 *
 * @module
 */

import type { KubernetesObject } from "../model/body.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import type { BackgroundHandler } from "../handling/handlers.ts";
import { LiveBody } from "../handling/live_body.ts";
import { type StopCause, StopReason } from "../handling/stopping.ts";
import type { BackgroundSettings } from "../settings/background.ts";
import { sleep } from "../utils/sleep.ts";
import { type AttemptDeps, title } from "./background_attempt.ts";
import { runDaemon } from "./daemons.ts";
import { type ChangeTracker, runTimer } from "./timers.ts";
import { trackBackground } from "../observability/metrics.ts";

/** What the daemons and timers of an object need from the operator. */
export interface BackgroundDeps extends Omit<AttemptDeps, "live" | "logger"> {
  settings: BackgroundSettings;
  /** Asks for another look at the object: a daemon or timer ended, or a stop has settled. */
  wake: () => void;
}

interface Task {
  readonly handler: BackgroundHandler;
  readonly stopper: AbortController;
  /** Resolves when the function has returned (or thrown) for the last time. */
  readonly done: Promise<void>;
  exited: boolean;
  /** Left running after a stop that it ignored for longer than its cancellation settings allow. */
  abandoned: boolean;
  /** The stop in progress, once asked. */
  stopping?: Promise<void>;
}

/** The daemons and timers of one object. */
export class ObjectBackground implements ChangeTracker {
  /** The latest state of the object, as daemons and timers see it. */
  readonly live: LiveBody;
  readonly #deps: BackgroundDeps;
  readonly #tasks = new Map<string, Task>();
  /** Ids that ended on their own (returned, or failed for good): not started again in this process. */
  readonly #finished = new Set<string>();
  #lastChange = Date.now();
  #nextChange = new AbortController();
  #essence?: string;
  readonly #logger: ObjectLogger;

  constructor(body: KubernetesObject, deps: BackgroundDeps) {
    this.live = new LiveBody(body);
    this.#deps = deps;
    this.#logger = new ObjectLogger(body);
  }

  /** @inheritdoc */
  get lastChange(): number {
    return this.#lastChange;
  }

  /** @inheritdoc */
  get nextChange(): AbortSignal {
    return this.#nextChange.signal;
  }

  /**
   * Takes a newer state of the object. `essence` is what counts as a change (not status, not the
   * operator's own annotations): when it differs from the last one, idle timers start over.
   */
  update(body: KubernetesObject, essence?: string): void {
    this.live.replace(body);
    if (essence === undefined || essence === this.#essence) return;
    const first = this.#essence === undefined;
    this.#essence = essence;
    if (first) return;
    this.#lastChange = Date.now();
    this.#nextChange.abort();
    this.#nextChange = new AbortController();
  }

  /** Whether a handler has ended on its own for this object (so it needs no finalizer and never restarts). */
  finished(id: string): boolean {
    return this.#finished.has(id);
  }

  /** The ids of daemons and timers asked to stop that have neither exited nor been abandoned. */
  get stopping(): string[] {
    return [...this.#tasks.values()].filter((task) => task.stopping && !task.exited && !task.abandoned)
      .map((task) => task.handler.id);
  }

  /** Whether anything is still running (also orphaned daemons do not count). */
  get idle(): boolean {
    return [...this.#tasks.values()].every((task) => task.exited || task.abandoned);
  }

  /**
   * Starts the handlers that match and are not running (nor finished), and stops the running ones
   * that no longer match; a stopped one starts again once it matches after its stop has settled.
   */
  adjust(matching: readonly BackgroundHandler[]): void {
    const wanted = new Set(matching.map((handler) => handler.id));
    for (const [id, task] of this.#tasks) {
      if (!wanted.has(id) && !task.stopping) void this.#stop(task, "filtersMismatch", Infinity);
    }
    for (const handler of matching) {
      if (this.#tasks.has(handler.id) || this.#finished.has(handler.id)) continue;
      this.#spawn(handler);
    }
  }

  /**
   * Stops everything for a cause and waits for the daemons to exit at once (a few turns of the
   * event loop, or `instantExitTimeout`): returns whether all have. Those that have not go on
   * through their stop stages in the background, and `wake` is called when they have settled.
   */
  async stop(cause: StopCause): Promise<boolean> {
    const stops = [...this.#tasks.values()].map((task) => this.#stop(task, cause, Infinity));
    const { instantExitTimeout, instantExitZeroTimeCycles } = this.#deps.settings;
    if (instantExitTimeout !== null) {
      await within(Promise.all(stops), instantExitTimeout);
    } else {
      // Turns of the event loop (timers), not microtasks: a daemon's exit takes a few of them.
      for (let cycle = 0; cycle < instantExitZeroTimeCycles && !this.idle; cycle++) {
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    }
    return this.idle;
  }

  /**
   * Stops everything for a cause and waits until each has exited, or has been abandoned after its
   * cancellation settings (at most `grace` seconds for daemons without a `cancellationTimeout`):
   * for the operator's exit, when nothing waits on the object any more.
   */
  async shutdown(cause: StopCause, grace: number): Promise<void> {
    const tasks = [...this.#tasks.values()];
    const stops = tasks.map((task) => this.#stop(task, cause, grace));
    // A stop begun earlier (e.g. for a deletion) may be waiting without a deadline: exiting has one.
    const limit = Math.max(0, ...tasks.map((task) => deadlineOf(task.handler, grace)));
    await within(Promise.all(stops), limit);
    for (const task of tasks) if (!task.exited && !task.abandoned) this.#abandon(task);
  }

  #spawn(handler: BackgroundHandler): void {
    const stopper = new AbortController();
    const deps = { ...this.#deps, live: this.live, logger: this.#logger };
    const run = handler.kind === "daemon"
      ? runDaemon(handler, stopper.signal, deps)
      : runTimer(handler, stopper.signal, this, deps);
    trackBackground(handler.kind, run);
    const task: Task = {
      handler,
      stopper,
      exited: false,
      abandoned: false,
      done: run.then((ownExit) => {
        task.exited = true;
        if (!ownExit) return;
        this.#finished.add(handler.id);
        new ObjectLogger(this.live.current).debug(
          `${title(handler)} '${handler.id}' has exited on its own ` +
            "and will not be retried or restarted.",
        );
        this.#tasks.delete(handler.id);
        this.#deps.wake();
      }, (error) => {
        // The attempts catch the handler's errors: only a framework bug gets here.
        task.exited = true;
        this.#tasks.delete(handler.id);
        new ObjectLogger(this.live.current).exception(`${title(handler)} '${handler.id}' has crashed.`, error);
      }),
    };
    this.#tasks.set(handler.id, task);
  }

  /** Leaves a daemon or timer that ignores its stop running, and stops waiting for it. */
  #abandon(task: Task): void {
    if (task.abandoned) return;
    const reason = task.stopper.signal.reason;
    if (reason instanceof StopReason) reason.add("daemonAbandoned");
    task.abandoned = true;
    new ObjectLogger(this.live.current, { local: true }).warning(
      `${title(task.handler)} '${task.handler.id}' did not exit in time. Leaving it orphaned.`,
    );
  }

  /** The stages of one stop; settles when the task has exited or has been abandoned. */
  #stop(task: Task, cause: StopCause, grace: number): Promise<void> {
    if (task.stopping) {
      const reason = task.stopper.signal.reason;
      if (reason instanceof StopReason) reason.add(cause);
      return task.stopping;
    }
    const reason = new StopReason(cause);
    task.stopper.abort(reason);
    const { handler } = task;
    const waitExit = async (seconds: number) => {
      if (!task.exited) await within(task.done, seconds);
      return task.exited;
    };
    task.stopping = (async () => {
      const options = handler.kind === "daemon" ? handler.options : {};
      const { cancellationBackoff: backoff, cancellationTimeout: timeout } = options;
      if (backoff !== undefined && !task.exited) {
        reason.add("daemonSignalled");
        await waitExit(backoff);
      }
      if (timeout !== undefined && !task.exited) {
        reason.add("daemonCancelled");
        await waitExit(timeout);
      }
      if (!task.exited && timeout === undefined) {
        // Without a deadline of its own, a daemon is waited for as long as the caller allows.
        if (grace === Infinity) await task.done;
        else await waitExit(grace);
      }
      if (!task.exited) this.#abandon(task);
      if (this.#tasks.get(handler.id) === task) this.#tasks.delete(handler.id);
      this.#deps.wake();
    })();
    return task.stopping;
  }
}

/** Seconds a stop waits at most: the daemon's cancellation stages, or `grace` without a timeout. */
function deadlineOf(handler: BackgroundHandler, grace: number): number {
  if (handler.kind !== "daemon") return grace;
  const { cancellationBackoff = 0, cancellationTimeout } = handler.options;
  return cancellationBackoff + (cancellationTimeout ?? grace);
}

/** Waits for the promise, but at most so many seconds; the timer never outlives the wait. */
async function within(promise: Promise<unknown>, seconds: number): Promise<void> {
  const done = new AbortController();
  try {
    await Promise.race([promise, sleep(seconds, done.signal)]);
  } finally {
    done.abort();
  }
}
