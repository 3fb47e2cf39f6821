/**
 * A scripted Kubernetes API server for bench/operator_path.ts: HTTPS (HTTP/2 where the client
 * offers it) on loopback, serving the discovery of kopfexamples, and for one namespace at a time a
 * list, watches (a streamed list first where one asks, as client-go's informers do), merge-patches
 * of the objects and of their status (each bumps the resourceVersion and goes to every watch as
 * MODIFIED), and objects added by the bench (ADDED to every watch).
 * Its answers cost next to nothing, so that what an operator spends per object is measured
 * without kube-apiserver's and etcd's share of two cores and their noise. Its sockets have
 * `TCP_NODELAY`, as kube-apiserver's have (bench/no_delay.ts).
 *
 * @module
 */

import { join } from "node:path";
import { createSelfSignedCertificates } from "../src/kits/certificates.ts";
import { renderKubeconfig } from "../src/kits/local_cluster/kubeconfig.ts";
import { mergePatch } from "../tests/support/fake_api.ts";
import { noDelayOnSockets } from "./no_delay.ts";
import { type Contestant, type ContestantName, contestants } from "./compare_contestants.ts";
import type { Peers } from "./compare_peers.ts";

type Body = Record<string, unknown> & { metadata: Record<string, unknown> };

const GROUP = "kopf.dev";
const COLLECTION = /^\/apis\/kopf\.dev\/v1\/namespaces\/([^/]+)\/kopfexamples(?:\/([^/]+)(\/status)?)?$/;

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

const DISCOVERY: Record<string, unknown> = {
  "/api": { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [] },
  "/apis": {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: [{
      name: GROUP,
      versions: [{ groupVersion: `${GROUP}/v1`, version: "v1" }],
      preferredVersion: { groupVersion: `${GROUP}/v1`, version: "v1" },
    }],
  },
  "/api/v1": {
    kind: "APIResourceList",
    groupVersion: "v1",
    resources: [
      { name: "events", singularName: "event", namespaced: true, kind: "Event", verbs: ["create", "list", "watch"] },
      { name: "namespaces", singularName: "namespace", namespaced: false, kind: "Namespace", verbs: ["get", "list"] },
    ],
  },
  [`/apis/${GROUP}/v1`]: {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: `${GROUP}/v1`,
    resources: [
      {
        name: "kopfexamples",
        singularName: "kopfexample",
        namespaced: true,
        kind: "KopfExample",
        verbs: ["delete", "get", "list", "patch", "create", "update", "watch"],
        shortNames: ["kex"],
      },
      { name: "kopfexamples/status", singularName: "", namespaced: true, kind: "KopfExample", verbs: ["get", "patch"] },
    ],
  },
};

/** The scripted server: its kubeconfig, and the objects of the namespace served now. */
export class ScriptedApi implements AsyncDisposable {
  readonly server: string;
  readonly token = "scripted";
  /**
   * Milliseconds each write's response is held back (after the watches have been told): the wait
   * of a busy API server, during which a client has its writes in flight.
   */
  latency = 0;
  /**
   * Milliseconds after a write's response that its watch event goes out; `undefined`: before the response. As
   * kube-apiserver does it: the response once etcd has the write, the event after the watch cache has it.
   */
  eventDelay: number | undefined;
  readonly ca: string;
  /**
   * Milliseconds from each object's ADDED event to the first write of it that arrives, in the order
   * of the writes (the namespace's objects only): how long an object waits in the contestant.
   */
  readonly waits: number[] = [];
  /** Requests that the script does not know, by method and path (a contestant asking for more than it should). */
  readonly unknown = new Map<string, number>();
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #noDelay: Disposable;
  readonly #encoder = new TextEncoder();
  #namespace = "";
  #objects = new Map<string, Body>();
  /** When each object not yet written was added (`performance.now()`). */
  #addedAt = new Map<string, number>();
  #watches = new Set<ReadableStreamDefaultController<Uint8Array>>();
  #version = 1;
  #watched = Promise.withResolvers<void>();
  #writes = 0;
  readonly #idle = new Set<ReadableStreamDefaultController<Uint8Array>>();
  #done = 0;
  #waiting?: { count: number; resolve: () => void; promise: Promise<void> };

  private constructor(ca: string, cert: string, key: string) {
    this.ca = ca;
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, cert, key, onListen: () => {} },
      (request) => this.#answer(request),
    );
    this.server = `https://127.0.0.1:${this.#server.addr.port}`;
    this.#noDelay = noDelayOnSockets();
  }

  /** Starts a server on a free loopback port with a fresh self-signed certificate. */
  static async start(): Promise<ScriptedApi> {
    const { ca, cert, key } = await createSelfSignedCertificates(["127.0.0.1"]);
    return new ScriptedApi(ca, cert, key);
  }

  /** The kubeconfig of this server as JSON text. */
  kubeconfig(): string {
    return renderKubeconfig({ server: this.server, caCert: this.ca, token: this.token });
  }

  /** Serves a new, empty namespace from now on (the watches of the previous one end). */
  serve(namespace: string): void {
    closeAll(this.#watches);
    this.#namespace = namespace;
    this.#objects = new Map();
    this.#addedAt = new Map();
    this.waits.length = 0;
    this.#watched = Promise.withResolvers();
    this.#done = 0;
    this.#waiting = undefined;
  }

  /** Resolves once a watch of the namespace's kopfexamples is open. */
  get watched(): Promise<void> {
    return this.#watched.promise;
  }

  /** Adds an object (listed from now on, and ADDED to every watch). */
  add(name: string, spec: Record<string, unknown>): void {
    const body: Body = {
      apiVersion: `${GROUP}/v1`,
      kind: "KopfExample",
      metadata: {
        name,
        namespace: this.#namespace,
        uid: crypto.randomUUID(),
        resourceVersion: String(++this.#version),
        generation: 1,
        creationTimestamp: now(),
        managedFields: [managedEntry("bench", undefined, { spec })],
      },
      spec,
    };
    this.#objects.set(name, body);
    this.#addedAt.set(name, performance.now());
    this.#broadcast("ADDED", body);
  }

  /** The merge-patches answered so far (of objects and of their status). */
  get writes(): number {
    return this.#writes;
  }

  /** Resolves once so many objects of the namespace have a result at `status.done`. */
  untilDone(count: number): Promise<void> {
    if (this.#done >= count) return Promise.resolve();
    this.#waiting = { count, ...Promise.withResolvers<void>() };
    return this.#waiting.promise;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.serve("");
    closeAll(this.#idle);
    await this.#server.shutdown();
    this.#noDelay[Symbol.dispose]();
  }

  async #answer(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const discovery = DISCOVERY[url.pathname];
    if (discovery && request.method === "GET") return json(discovery);
    if (url.pathname === CRDS && request.method === "GET") {
      // The operator watches the CRDs for resources that come and go: there are none to tell of.
      if (url.searchParams.get("watch") !== "true") {
        return json({ kind: "List", metadata: { resourceVersion: "1" }, items: [] });
      }
      return stream(this.#idle);
    }
    const match = COLLECTION.exec(url.pathname);
    if (!match || match[1] !== this.#namespace) return this.#unknown(request, url);
    const [, , name, status] = match;
    if (!name && request.method === "GET") {
      if (url.searchParams.get("watch") !== "true") return json(this.#list());
      this.#watched.resolve();
      return stream(this.#watches, url.searchParams.get("sendInitialEvents") === "true" ? this.#initialEvents() : []);
    }
    const body = name ? this.#objects.get(name) : undefined;
    if (!body) return this.#unknown(request, url);
    if (request.method === "GET") return json(body);
    if (request.method !== "PATCH") return this.#unknown(request, url);
    const added = this.#addedAt.get(name);
    if (added !== undefined) {
      this.waits.push(performance.now() - added);
      this.#addedAt.delete(name);
    }
    // As with a status subresource: the object's endpoint leaves the status alone, the status's only changes it.
    const { status: statusPatch, ...rest } = await request.json() as Body;
    const part = status ? { status: statusPatch } : rest;
    const patched = mergePatch(body, part) as Body;
    // One entry per manager and subresource, as the API server keeps them (their size is part of every body).
    const manager = request.headers.get("user-agent") ?? "unknown";
    const subresource = status ? "status" : undefined;
    const entries = (body.metadata.managedFields as Record<string, unknown>[] | undefined ?? [])
      .filter((entry) => entry.manager !== manager || entry.subresource !== subresource);
    entries.push(managedEntry(manager, subresource, part));
    patched.metadata = { ...patched.metadata, resourceVersion: String(++this.#version), managedFields: entries };
    this.#objects.set(name, patched);
    this.#writes++;
    if (doneOf(patched) !== undefined && doneOf(body) === undefined) this.#done++;
    if (this.#waiting && this.#done >= this.#waiting.count) this.#waiting.resolve();
    if (this.eventDelay === undefined) this.#broadcast("MODIFIED", patched);
    if (this.latency > 0) await new Promise((resolve) => setTimeout(resolve, this.latency));
    if (this.eventDelay !== undefined) setTimeout(() => this.#broadcast("MODIFIED", patched), this.eventDelay);
    return json(patched);
  }

  #list(): unknown {
    return {
      apiVersion: `${GROUP}/v1`,
      kind: "KopfExampleList",
      metadata: { resourceVersion: String(this.#version) },
      items: [...this.#objects.values()],
    };
  }

  /**
   * A streamed list's start (client-go's reflectors, controller-runtime's cache, ask for one): every
   * object as ADDED, then the bookmark that marks the end of the initial events.
   */
  #initialEvents(): Uint8Array[] {
    const end = {
      kind: "KopfExample",
      apiVersion: `${GROUP}/v1`,
      metadata: { resourceVersion: String(this.#version), annotations: { "k8s.io/initial-events-end": "true" } },
    };
    return [...[...this.#objects.values()].map((object) => this.#line("ADDED", object)), this.#line("BOOKMARK", end)];
  }

  #broadcast(type: string, object: Body): void {
    const line = this.#line(type, object);
    for (const watch of this.#watches) watch.enqueue(line);
  }

  /** One event of a watch response, as its line. */
  #line(type: string, object: unknown): Uint8Array {
    return this.#encoder.encode(JSON.stringify({ type, object }) + "\n");
  }

  #unknown(request: Request, url: URL): Response {
    const key = `${request.method} ${url.pathname}`;
    this.unknown.set(key, (this.unknown.get(key) ?? 0) + 1);
    return json({ kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404 }, 404);
  }
}

/**
 * A streamed response kept in `streams` until it ends (the client cancelled it, or it was closed),
 * beginning with `first`.
 */
function stream(streams: Set<ReadableStreamDefaultController<Uint8Array>>, first: Uint8Array[] = []): Response {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      for (const chunk of first) c.enqueue(chunk);
      streams.add(controller = c);
    },
    cancel: () => void streams.delete(controller),
  });
  return new Response(body, { headers: { "content-type": "application/json" } });
}

function closeAll(streams: Set<ReadableStreamDefaultController<Uint8Array>>): void {
  for (const controller of streams) controller.close();
  streams.clear();
}

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}

/** A `managedFields` entry of a write: its fields as the API server spells them (`f:` keys, `{}` leaves). */
function managedEntry(manager: string, subresource: string | undefined, written: unknown): Record<string, unknown> {
  const fields = (value: unknown): unknown =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [`f:${key}`, fields(inner)]))
      : {};
  return {
    apiVersion: `${GROUP}/v1`,
    fieldsType: "FieldsV1",
    fieldsV1: fields(written),
    manager,
    operation: "Update",
    ...(subresource ? { subresource } : {}),
    time: now(),
  };
}

function doneOf(body: Body): unknown {
  return (body.status as Record<string, unknown> | undefined)?.done;
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/**
 * bench/compare.ts's contestants, started against a scripted server: its kubeconfig and CA are
 * written into `folder`, where the contestants' logs go too; `before` is another checkout's CLI.
 */
export async function scriptedContestants(
  api: ScriptedApi,
  folder: string,
  before?: string,
  built: Pick<Peers, "controllerRuntime" | "kubeRs"> = {},
  denoFlags: readonly string[] = [],
): Promise<Record<ContestantName, Contestant>> {
  const kubeconfig = join(folder, "kubeconfig.json");
  const caFile = join(folder, "ca.pem");
  await Deno.writeTextFile(kubeconfig, api.kubeconfig());
  await Deno.writeTextFile(caFile, api.ca);
  return contestants({
    cluster: { kubeconfig, server: api.server, token: api.token },
    caFile,
    root: new URL("../", import.meta.url),
    before,
    controllerRuntime: built.controllerRuntime,
    kubeRs: built.kubeRs,
    denoFlags,
  });
}
