/**
 * Test helpers for the process's surroundings: a temporary folder and temporarily set environment
 * variables, both undone afterwards, a free loopback port, and a GET of a local JSON endpoint.
 *
 * @module
 */

import { freePorts } from "../../src/kits/local_cluster/ports.ts";

/** A loopback port that was free a moment ago (for a server the test starts on a URL it must know first). */
export function freePort(): number {
  return freePorts(1)[0];
}

/** GETs a local JSON endpoint (a probe, a metrics server): its status code and parsed body. */
export async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

/** Runs `fn` with a fresh temporary folder, removed afterwards. */
export async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "kopf-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Runs `fn` with environment variables set (`undefined`: unset), restoring them afterwards. Tests
 * using it must not run in parallel with others that read the same variables.
 */
export async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, Deno.env.get(name)]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
  };
  apply(vars);
  try {
    return await fn();
  } finally {
    apply(saved);
  }
}
