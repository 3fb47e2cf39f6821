/**
 * Settings of daemons and timers when they stop (Kopf's `background` group).
 *
 * @module
 */

/** How stopping daemons and timers are waited for. */
export class BackgroundSettings {
  /**
   * Seconds between re-checks of a daemon that was asked to stop and has not exited yet, while
   * the object's deletion waits for it (a daemon's `cancellationPolling` option overrides it).
   */
  cancellationPolling: number = 60;
  /**
   * Seconds to wait for a stopped daemon to exit before deciding that it does not exit at once
   * (and scheduling re-checks); `null`: a few turns of the event loop (`instantExitZeroTimeCycles`).
   */
  instantExitTimeout: number | null = null;
  /** Turns of the event loop a stopped daemon gets to exit at once, when `instantExitTimeout` is `null`. */
  instantExitZeroTimeCycles: number = 10;
}
