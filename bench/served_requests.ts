/**
 * What the API server served while a benchmark's work ran, less the benchmark's own requests:
 * `apiserver_request_total` before and after, minus the bench client's counters, without the API
 * server's own Leases. A watch counts when it ends (an open one is not counted yet).
 *
 * @module
 */

import type { ApiClient } from "../src/api/client.ts";
import { apiserverMetrics, difference, type RequestTotals } from "./apiserver_metrics.ts";

/** Runs `work` and returns what the API server served meanwhile, less `client`'s own requests. */
export async function measure<T>(
  client: ApiClient,
  work: () => Promise<T>,
): Promise<{ value: T; requests: RequestTotals }> {
  const before = (await apiserverMetrics(client)).requests;
  const ownBefore = ownRequests(client);
  const value = await work();
  const after = (await apiserverMetrics(client)).requests;
  const served = difference(after, before);
  for (const [key, count] of difference(ownRequests(client), ownBefore)) {
    const left = (served.get(key) ?? 0) - count;
    if (left > 0) served.set(key, left);
    else served.delete(key);
  }
  for (const key of served.keys()) if (key.endsWith(" leases")) served.delete(key);
  return { value, requests: served };
}

/** All requests of some totals. */
export function total(requests: RequestTotals): number {
  return [...requests.values()].reduce((sum, count) => sum + count, 0);
}

const VERBS: Record<string, string> = {
  get: "GET",
  list: "LIST",
  watch: "WATCH",
  create: "POST",
  update: "PUT",
  patch: "PATCH",
  delete: "DELETE",
  deletecollection: "DELETECOLLECTION",
};

/** The client's own requests so far, keyed like the API server's metrics (`"PATCH kopfexamples"`). */
function ownRequests(client: ApiClient): RequestTotals {
  const totals: RequestTotals = new Map();
  for (const [key, count] of Object.entries(client.counters.snapshot())) {
    const [verb, resource] = key.split(" ", 2);
    if (verb === "watch") continue; // the API server counts a watch when it ends, after the measurement
    const served = `${VERBS[verb]} ${resource.split("/")[0]}`;
    totals.set(served, (totals.get(served) ?? 0) + count);
  }
  return totals;
}
