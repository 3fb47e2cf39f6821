/**
 * The process's stop signals, SIGINT and SIGTERM, shared by everything in the process that stops
 * on them: the `kopf run` command from its first line (before the handler files are imported) and
 * every running `operator()`. The listeners exist once per process, however many hold them.
 *
 * One stop, however many copies of the signal: a terminal's Ctrl+C reaches every process of the
 * foreground group, so an operator under `deno task kopf run` gets it from the terminal and again
 * from `deno task`, which forwards it; `timeout` and `kill -- -PGID` signal the whole group the
 * same way. A repeat within {@linkcode REPEAT_WINDOW} seconds of the first signal is therefore
 * the same stop. A signal after that window is deliberate: the process exits at once, with the
 * code a shell reports for a process killed by that signal (130 for SIGINT, 143 for SIGTERM).
 *
 * @example
 * ```ts ignore
 * import { trapStopSignals } from "@kopf/kopf/signals";
 * using stopping = trapStopSignals(); // from the first line: a SIGTERM now stops gracefully
 * const { run } = await import("./heavy_start.ts");
 * await run(stopping.signal);
 * ```
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { processGlobal } from "../utils/process_global.ts";

const logger = getLogger(["kopf", "operator"]);

/**
 * Seconds after the first SIGINT/SIGTERM during which more of them are copies of the same stop,
 * not a request to exit at once. Copies come within milliseconds (a group's signal, `deno task`'s
 * forwarding); a person who means "exit now" presses Ctrl+C again after a moment.
 */
export const REPEAT_WINDOW = 1;

/** The signals that stop the operator. */
const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** Exit codes a shell reports for a process killed by these signals (128 + the signal number). */
const KILLED_BY: Record<(typeof STOP_SIGNALS)[number], number> = { SIGINT: 130, SIGTERM: 143 };

/** A hold on the process's stop signals; disposing of the last hold removes the listeners. */
export interface StopSignals extends Disposable {
  /** Aborted at the first SIGINT/SIGTERM (the reason names it); never reset while held. */
  readonly signal: AbortSignal;
  /** The first stop signal received, once it has been. */
  readonly received: Deno.Signal | undefined;
  /**
   * The exit code a shell reports for a process killed by the received signal (130, 143), for
   * an exit forced later (e.g. `settings.process.ultimateExitingTimeout`); 1 before any signal.
   */
  readonly exitCode: number;
}

/** The listeners and the state of the process's stop, while anything holds them. */
class Trap {
  readonly controller = new AbortController();
  holders = 0;
  first: { name: (typeof STOP_SIGNALS)[number]; at: number } | undefined;
  readonly #listeners = STOP_SIGNALS.map((name) => [name, () => this.#receive(name)] as const);

  install(): void {
    for (const [name, listener] of this.#listeners) Deno.addSignalListener(name, listener);
  }

  uninstall(): void {
    for (const [name, listener] of this.#listeners) Deno.removeSignalListener(name, listener);
  }

  #receive(name: (typeof STOP_SIGNALS)[number]): void {
    const now = performance.now();
    if (!this.first) {
      this.first = { name, at: now };
      logger.info("Signal {name} is received. Operator is stopping.", { name });
      this.controller.abort(new Error(`${name} received`));
      return;
    }
    const milliseconds = Math.round(now - this.first.at);
    if (milliseconds < REPEAT_WINDOW * 1000) {
      logger.info(
        "Signal {name} is received again {milliseconds} ms after the first: the same stop " +
          "(a terminal's Ctrl+C or a signal to the process group reaches the operator twice under `deno task`). " +
          "Signal again after {window} s to exit at once.",
        { name, milliseconds, window: REPEAT_WINDOW },
      );
      return;
    }
    const code = KILLED_BY[name];
    logger.warn("Signal {name} is received again while stopping. Operator is exiting at once (code {code}).", {
      name,
      code,
    });
    Deno.exit(code);
  }
}

/** The trap while anything holds it: once per process, also when two copies of the library are loaded. */
const current = processGlobal("stop-signals", 1, () => ({ trap: undefined as Trap | undefined }));

/**
 * Holds the process's SIGINT/SIGTERM listeners (installing them if nothing holds them yet) and
 * returns the shared stop: its `signal` aborts at the first signal. Dispose of the hold when done;
 * the last one removes the listeners, so that a program ends by itself afterwards, and the next
 * hold starts a fresh stop.
 *
 * @returns The hold: the stop's signal, the signal received, and the exit code it means.
 */
export function trapStopSignals(): StopSignals {
  if (!current.trap) {
    current.trap = new Trap();
    current.trap.install();
  }
  const trap = current.trap;
  trap.holders++;
  let disposed = false;
  return {
    signal: trap.controller.signal,
    get received() {
      return trap.first?.name;
    },
    get exitCode() {
      return trap.first ? KILLED_BY[trap.first.name] : 1;
    },
    [Symbol.dispose]() {
      if (disposed) return;
      disposed = true;
      if (--trap.holders > 0) return;
      trap.uninstall();
      if (current.trap === trap) current.trap = undefined;
    },
  };
}
