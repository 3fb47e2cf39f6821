/**
 * Samples a liveness endpoint once a second for the fault suite: every answer's status (0 when
 * nothing answers, e.g. while the operator is down) and when, to ask afterwards whether it was
 * non-200 during a fault and 200 after it.
 *
 * @module
 */

/** One answer of the endpoint. */
export interface LivenessSample {
  /** When it was asked (ms since the epoch). */
  at: number;
  /** The HTTP status; 0 when nothing answered within 2 s. */
  status: number;
  /** The body of a non-200 answer (which stream and why), for reports. */
  body?: string;
}

/** A running sampler; see the module's description. */
export class LivenessSampler implements AsyncDisposable {
  /** Every sample so far, in order. */
  readonly samples: LivenessSample[] = [];
  readonly #stop = new AbortController();
  readonly #running: Promise<void>;

  constructor(url: string) {
    this.#running = this.#sample(url);
  }

  /** Whether a non-200 answer (or none) was seen in `[from, to)`. */
  unhealthyWithin(from: number, to: number): boolean {
    return this.samples.some((sample) => sample.at >= from && sample.at < to && sample.status !== 200);
  }

  /** The first moment at or after `from` from which on every sample is 200; `null` if the last is not. */
  healthySince(from: number): number | null {
    let since: number | null = null;
    for (const sample of this.samples) {
      if (sample.at < from) continue;
      if (sample.status !== 200) since = null;
      else since ??= sample.at;
    }
    return since;
  }

  /** Waits until the endpoint has answered 200 since `from` (or the bound passes); see healthySince. */
  async healthyAfter(from: number, seconds: number): Promise<number | null> {
    const bound = Date.now() + seconds * 1000;
    while (Date.now() < bound) {
      const since = this.healthySince(from);
      if (since !== null && this.samples.at(-1)!.at > since) return since;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return this.healthySince(from);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }

  async #sample(url: string): Promise<void> {
    while (!this.#stop.signal.aborted) {
      const at = Date.now();
      try {
        const response = await fetch(url, { signal: AbortSignal.any([this.#stop.signal, AbortSignal.timeout(2000)]) });
        const body = await response.text();
        this.samples.push({ at, status: response.status, ...(response.status === 200 ? {} : { body }) });
      } catch {
        if (this.#stop.signal.aborted) return;
        this.samples.push({ at, status: 0 });
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - at))));
    }
  }
}
