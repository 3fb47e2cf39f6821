/**
 * A steady churn of kopfexamples for the fault suite (tests/faults_test.ts, bench/faults.ts), and
 * the truth about what the operator did with it.
 *
 * Each object lives as a user's object would: it is created; once its create handler has
 * succeeded (the ledger of tests/fixtures/faults_handlers.ts says so) and it is `updateAfter`
 * seconds old, its `spec.field` changes; once that change is handled and it is `deleteAfter`
 * seconds old, it is deleted. A step waits for the previous one to be handled because Kopf's
 * semantics skip the create handler of an object already being deleted, and fold a change made
 * before the creation was handled into the creation: a churn that ignored that would count
 * correct behaviour as missed handlers.
 *
 * The churn's own requests go straight to the API server (never through a fault proxy) and are
 * retried until they succeed, so that an API server outage pauses the churn instead of ending it.
 *
 * @module
 */

import type { ApiClient } from "../../src/api/client.ts";
import { ApiConflictError, ApiNotFoundError } from "../../src/api/errors.ts";
import { resourcePath } from "../../src/api/paths.ts";
import type { KubernetesObject } from "../../src/model/body.ts";
import { KOPFEXAMPLES } from "./cluster.ts";

/** One object of the churn and when each of its steps happened (ms since the epoch). */
export interface ChurnedObject {
  name: string;
  uid: string;
  created: number;
  updated?: number;
  deleted?: number;
}

/** What the operator has done so far, counted from the ledger and the cluster. */
export interface ChurnTally {
  /** Objects created so far. */
  objects: number;
  /** Objects whose create handler has not succeeded (yet). */
  unhandledCreations: number;
  /** Objects changed whose update handler has not succeeded (yet). */
  unhandledUpdates: number;
  /** Objects deleted that still exist (a finalizer holds them). */
  undeleted: number;
  /** Objects whose create handler succeeded more than once. */
  duplicatedCreations: number;
}

/** One success of a handler, as the ledger has it: which operator process, and when (ms since the epoch). */
export interface Completion {
  pid: number;
  at: number;
}

/** The successes of an object's create and update handlers. */
interface Marks {
  created: Completion[];
  updated: Completion[];
}

/** How a churn paces its objects. */
export interface ChurnOptions {
  /** The namespace of the objects. */
  namespace: string;
  /** Names are `<prefix>-<n>`. */
  prefix: string;
  /** The ledger file that the operator's handlers append to. */
  ledger: string;
  /** How many objects to create; endless (until {@linkcode Churn.stop}) if absent. */
  objects?: number;
  /** Seconds between two creations. */
  interval: number;
  /** The least age, in seconds, at which an object is changed. */
  updateAfter: number;
  /** The least age, in seconds, at which an object is deleted. */
  deleteAfter: number;
}

/** A running churn; see the module's description. */
export class Churn implements AsyncDisposable {
  /** Every object created so far, in order of creation. */
  readonly objects: ChurnedObject[] = [];
  readonly #client: ApiClient;
  readonly #options: ChurnOptions;
  readonly #stop = new AbortController();
  readonly #lifecycles: Promise<void>[] = [];
  readonly #creating: Promise<void>;
  /** The ledger's `created` and `updated` lines per uid, and the names present, as last read. */
  #marks = new Map<string, Marks>();
  #present = new Set<string>();
  #observed = 0;

  /** Starts creating objects at once. */
  constructor(client: ApiClient, options: ChurnOptions) {
    this.#client = client;
    this.#options = options;
    this.#creating = this.#create();
  }

  /** Resolves when every object is created (never for an endless churn until it is stopped). */
  get created(): Promise<void> {
    return this.#creating;
  }

  /**
   * Resolves when every object is created and has lived its life to its deletion (or the churn is
   * stopped); never if the operator misses one, so wait for it with a bound.
   */
  async finished(): Promise<void> {
    await this.#creating;
    await Promise.all(this.#lifecycles);
  }

  /** Stops creating, changing and deleting objects; what is under way is left as it is. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#creating;
    await Promise.all(this.#lifecycles);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /**
   * Reads the ledger and lists the namespace again (at most every 0.5 s; concurrent callers share
   * the reading), then counts. With `before`, only the steps taken before that moment count.
   */
  async tally(before = Infinity): Promise<ChurnTally> {
    await this.#observe();
    let unhandledCreations = 0, unhandledUpdates = 0, undeleted = 0, duplicatedCreations = 0;
    let objects = 0;
    for (const object of this.objects) {
      if (object.created >= before) continue;
      objects++;
      const marks = this.#marks.get(object.uid);
      if (!marks?.created.length) unhandledCreations++;
      if ((marks?.created.length ?? 0) > 1) duplicatedCreations++;
      if (object.updated !== undefined && object.updated < before && !marks?.updated.length) unhandledUpdates++;
      if (object.deleted !== undefined && object.deleted < before && this.#present.has(object.name)) undeleted++;
    }
    return { objects, unhandledCreations, unhandledUpdates, undeleted, duplicatedCreations };
  }

  /** The objects whose create handler succeeded more than once, with those successes (as last read). */
  duplicates(): { object: ChurnedObject; completions: Completion[] }[] {
    return this.objects
      .map((object) => ({ object, completions: this.#marks.get(object.uid)?.created ?? [] }))
      .filter(({ completions }) => completions.length > 1);
  }

  /** Waits until every step taken before `before` is handled; resolves with the moment, or `null` at the bound. */
  async settled(before: number, seconds: number): Promise<number | null> {
    const bound = Date.now() + seconds * 1000;
    for (;;) {
      const tally = await this.tally(before);
      if (!tally.unhandledCreations && !tally.unhandledUpdates && !tally.undeleted) return Date.now();
      if (Date.now() > bound) return null;
      await sleep(0.5);
    }
  }

  #reading: Promise<void> | undefined;
  #observe(): Promise<void> {
    if (Date.now() - this.#observed < 500) return this.#reading ?? Promise.resolve();
    this.#observed = Date.now();
    this.#reading = (async () => {
      const marks = new Map<string, Marks>();
      let text = "";
      try {
        text = await Deno.readTextFile(this.#options.ledger);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
      for (const line of text.split("\n")) {
        // A line cut short by a SIGKILL in the middle of its write is no completion.
        if (!line.endsWith("}")) continue;
        const { handler, uid, pid, at } = JSON.parse(line) as { handler: string; uid: string } & Completion;
        const entry = marks.get(uid) ?? { created: [], updated: [] };
        if (handler === "created") entry.created.push({ pid, at });
        if (handler === "updated") entry.updated.push({ pid, at });
        marks.set(uid, entry);
      }
      const list = await retried(() =>
        this.#client.request<{ items: KubernetesObject[] }>({
          path: resourcePath(KOPFEXAMPLES, { namespace: this.#options.namespace }),
        })
      );
      this.#marks = marks;
      this.#present = new Set(list!.items.map((item) => item.metadata.name!));
    })();
    return this.#reading;
  }

  /**
   * Creates one more object (retried until the API server takes it) and starts its life; used for
   * the churn's own objects and for probes created at the end of a fault.
   */
  async add(name: string): Promise<ChurnedObject> {
    const { namespace } = this.#options;
    const body = await retried(async () => {
      try {
        return await this.#client.request<KubernetesObject>({
          method: "POST",
          path: resourcePath(KOPFEXAMPLES, { namespace }),
          body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name }, spec: { field: "initial" } },
        });
      } catch (error) {
        // An earlier attempt reached the server although its answer was lost.
        if (!(error instanceof ApiConflictError)) throw error;
        return await this.#client.request<KubernetesObject>({ path: resourcePath(KOPFEXAMPLES, { namespace, name }) });
      }
    });
    if (!body) throw new Error(`Cannot create ${name}: the namespace ${namespace} does not exist.`);
    const object: ChurnedObject = { name, uid: body.metadata.uid!, created: Date.now() };
    this.objects.push(object);
    this.#lifecycles.push(this.#live(object));
    return object;
  }

  async #create(): Promise<void> {
    const { objects = Infinity, interval } = this.#options;
    for (let index = 0; index < objects && !this.#stop.signal.aborted; index++) {
      const started = Date.now();
      await this.add(`${this.#options.prefix}-${index}`);
      await sleep(Math.max(0, interval - (Date.now() - started) / 1000), this.#stop.signal);
    }
  }

  async #live(object: ChurnedObject): Promise<void> {
    const { namespace, updateAfter, deleteAfter } = this.#options;
    const path = resourcePath(KOPFEXAMPLES, { namespace, name: object.name });
    if (!await this.#until(object.created + updateAfter * 1000, () => this.#marks.get(object.uid)?.created.length)) {
      return;
    }
    await retried(() =>
      this.#client.request({
        method: "PATCH",
        path,
        body: { spec: { field: "changed" } },
        contentType: "application/merge-patch+json",
      })
    );
    object.updated = Date.now();
    if (!await this.#until(object.created + deleteAfter * 1000, () => this.#marks.get(object.uid)?.updated.length)) {
      return;
    }
    await retried(() => this.#client.request({ method: "DELETE", path }));
    object.deleted = Date.now();
  }

  /** Waits until a moment has passed and the check holds; false if the churn stops first. */
  async #until(moment: number, check: () => unknown): Promise<boolean> {
    await sleep(Math.max(0, (moment - Date.now()) / 1000), this.#stop.signal);
    while (!this.#stop.signal.aborted) {
      await this.#observe();
      if (check()) return true;
      await sleep(1, this.#stop.signal);
    }
    return false;
  }
}

/**
 * Repeats a request of the churn's own until it succeeds: the API server may be down for a while.
 * A change or deletion whose object is gone is done (an earlier attempt may have deleted it).
 */
async function retried<T>(request: () => Promise<T>): Promise<T | undefined> {
  for (let attempt = 0;; attempt++) {
    try {
      return await request();
    } catch (error) {
      if (error instanceof ApiNotFoundError) return undefined;
      if (attempt > 600) throw error;
      await sleep(1);
    }
  }
}

function sleep(seconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, seconds * 1000);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
