/**
 * The pause before a failed watch stream tries again: jittered and exponential, so that a server
 * in trouble is not stormed, yet bounded by the outage's own length, so that a stream resumes
 * soon after a short outage instead of sleeping through the server's return.
 *
 * @module
 */

/** What the pause depends on. */
export interface BackoffTiming {
  /** The first pause's ceiling, in seconds; it doubles with each failure of the run. */
  failureBackoff: number;
  /** The longest pause, in seconds. */
  reconnectBackoffMax: number;
}

/**
 * Seconds to wait after the `failures`-th failure of a run that began `failingFor` seconds ago:
 * a random half to all of `min(max, first·2^n^-¹, max(first, failingFor/2))`.
 *
 * The last term is what makes recovery quick: a pause never exceeds half of the outage so far,
 * so after an outage of T seconds the stream tries again at most T/2 seconds (and at most
 * `reconnectBackoffMax`) after the server is back, while the attempts still thin out
 * exponentially during a long outage.
 */
export function reconnectDelay(
  failures: number,
  failingFor: number,
  timing: BackoffTiming,
  random: () => number = Math.random,
): number {
  const first = Math.max(timing.failureBackoff, 0.01);
  const exponential = first * 2 ** Math.min(Math.max(failures - 1, 0), 30);
  const ceiling = Math.min(timing.reconnectBackoffMax, exponential, Math.max(first, failingFor / 2));
  return ceiling / 2 + random() * ceiling / 2;
}
