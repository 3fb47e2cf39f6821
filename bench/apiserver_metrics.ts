/**
 * The API server's own view of the load, from its `/metrics`: requests by verb and resource
 * (`apiserver_request_total`, counted when a request ends, so an open watch is not counted yet)
 * and the watches open now (`apiserver_longrunning_requests`).
 *
 * @module
 */

import type { ApiClient } from "../src/api/client.ts";

/** Requests by `"VERB resource"` (e.g. `"PATCH kopfexamples"`), summed over codes and subresources. */
export type RequestTotals = Map<string, number>;

/** The API server's request totals so far, and its open watches by resource. */
export interface ApiserverMetrics {
  requests: RequestTotals;
  watches: Map<string, number>;
}

/** The API server's metrics as text (a stream's request: the answer is no JSON). */
export async function metricsText(client: ApiClient): Promise<string> {
  const reading = new AbortController();
  try {
    return await (await client.open({ path: "/metrics", accept: "text/plain", signal: reading.signal })).text();
  } finally {
    reading.abort();
  }
}

/** Reads the API server's metrics. */
export async function apiserverMetrics(client: ApiClient): Promise<ApiserverMetrics> {
  const text = await metricsText(client);
  const requests: RequestTotals = new Map();
  const watches = new Map<string, number>();
  for (const line of text.split("\n")) {
    const total = line.startsWith("apiserver_request_total{");
    const open = line.startsWith("apiserver_longrunning_requests{");
    if (!total && !open) continue;
    const resource = line.match(/resource="([^"]*)"/)?.[1];
    const verb = line.match(/verb="([A-Z]+)"/)?.[1];
    if (!resource || !verb) continue;
    const value = Number(line.split(" ").at(-1));
    if (total) add(requests, `${verb} ${resource}`, value);
    else if (verb === "WATCH") add(watches, resource, value);
  }
  return { requests, watches };
}

/** Write requests (POST, PUT, PATCH, DELETE) to one resource so far. */
export function writesOf(requests: RequestTotals, resource: string): number {
  return ["POST", "PUT", "PATCH", "DELETE"].reduce((sum, verb) => sum + (requests.get(`${verb} ${resource}`) ?? 0), 0);
}

/** What grew from `before` to `after`. */
export function difference(after: RequestTotals, before: RequestTotals): RequestTotals {
  const result: RequestTotals = new Map();
  for (const [key, value] of after) {
    const grown = value - (before.get(key) ?? 0);
    if (grown) result.set(key, grown);
  }
  return result;
}

/**
 * The API server's cache of one resource's recent events: its capacity and the watchers it has ended so far for falling
 * behind. The capacity starts at 100 events, doubles while a full cache's oldest event is less than 75 s old, and halves
 * on new events once its newest quarter reaches back further; each new watch request gets a buffer of a second's share
 * of it (capacity / 75, 10 to 100 events for a custom resource) for its life, and the server ends a watch whose buffer
 * stays full. A resource without recent events thus ends the watches of a burst's readers that fall behind by a few
 * events, until its cache has grown.
 */
export async function watchCacheOf(client: ApiClient, resource: string): Promise<{ capacity: number; ended: number }> {
  const text = await metricsText(client);
  const read = (name: string) => {
    const line = text.split("\n").find((line) =>
      line.startsWith(`${name}{`) && line.includes(`resource="${resource}"`)
    );
    return line === undefined ? 0 : Number(line.split(" ").at(-1));
  };
  return { capacity: read("watch_cache_capacity"), ended: read("apiserver_terminated_watchers_total") };
}

function add(map: Map<string, number>, key: string, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value);
}
