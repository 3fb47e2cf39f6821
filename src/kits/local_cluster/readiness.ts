/**
 * Waiting until a control-plane component answers its health endpoint, and failing early, with
 * the component's own log, if it exits instead.
 *
 * @module
 */

import type { ManagedProcess } from "./processes.ts";

/** How long a component may take to become ready: generous, a first start on 2 busy cores is slow. */
export const DEFAULT_READY_TIMEOUT_MS = 60_000;

const POLL_INTERVAL_MS = 200;
const REQUEST_TIMEOUT_MS = 5_000;

/** How to probe a component. */
export interface ReadinessProbe {
  /** The URL that answers 200 once the component is ready. */
  readonly url: string;
  /** The TLS client trusting the component's CA, for https URLs. */
  readonly client?: Deno.HttpClient;
  /** How long to wait in total. */
  readonly timeoutMs?: number;
}

/**
 * Polls `probe.url` until it answers 200. Rejects with an Error carrying the tail of the
 * process's log if the process exits first or the time runs out.
 */
export async function waitUntilReady(process: ManagedProcess, probe: ReadinessProbe): Promise<void> {
  const timeoutMs = probe.timeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  while (true) {
    if (!process.running) {
      throw await process.failure(`exited with code ${process.status?.code} before it became ready`);
    }
    if (Date.now() > deadline) {
      throw await process.failure(
        `did not become ready within ${timeoutMs / 1000} s (${probe.url}: ${last})`,
      );
    }
    const answer = await probeOnce(probe, Math.min(REQUEST_TIMEOUT_MS, deadline - Date.now()));
    if (answer === true) return;
    last = answer;
    await pause(POLL_INTERVAL_MS, process.exited);
  }
}

/** One request: `true` if it answered 200, else a description of what happened. */
async function probeOnce(probe: ReadinessProbe, timeoutMs: number): Promise<true | string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.max(timeoutMs, 1));
  try {
    const response = await fetch(probe.url, { client: probe.client, signal: controller.signal });
    const body = await response.text();
    return response.status === 200 ? true : `HTTP ${response.status} ${body.slice(0, 200)}`;
  } catch (error) {
    return String(error instanceof Error ? error.message : error);
  } finally {
    clearTimeout(timer);
  }
}

/** Sleeps, but wakes up early when `until` settles; leaves no timer behind either way. */
async function pause(ms: number, until: Promise<unknown>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    until,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}
