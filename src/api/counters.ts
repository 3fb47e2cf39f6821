/**
 * Counters of the requests an API client sent, by verb and resource, for tests and benchmarks.
 *
 * @module
 */

/** The Kubernetes verbs requests are counted by. */
export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection";

/** A running count of requests; every attempt counts, retries included. */
export class RequestCounters {
  readonly #counts = new Map<string, number>();

  /** Counts one request. */
  record(verb: Verb, resource: string): void {
    const key = `${verb} ${resource}`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  }

  /** Requests so far, optionally only of one verb and/or one resource (e.g. `"kopfexamples"`). */
  count(filter: { verb?: Verb; resource?: string } = {}): number {
    let total = 0;
    for (const [key, value] of this.#counts) {
      const [verb, resource] = key.split(" ", 2);
      if (filter.verb !== undefined && verb !== filter.verb) continue;
      if (filter.resource !== undefined && resource !== filter.resource) continue;
      total += value;
    }
    return total;
  }

  /** Requests so far by verb. */
  byVerb(): Partial<Record<Verb, number>> {
    const result: Partial<Record<Verb, number>> = {};
    for (const [key, value] of this.#counts) {
      const verb = key.split(" ", 1)[0] as Verb;
      result[verb] = (result[verb] ?? 0) + value;
    }
    return result;
  }

  /** A copy of all counts, keyed `"<verb> <resource>"`, sorted by key. */
  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.#counts].sort(([a], [b]) => a.localeCompare(b)));
  }
}
