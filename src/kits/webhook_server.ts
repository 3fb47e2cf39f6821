/**
 * `kopf.WebhookServer`: a local HTTPS server for admission and conversion reviews (`Deno.serve`),
 * with a self-signed CA and certificate made at start unless certificate files are given, or plain
 * HTTP for curl and tunnels. Each admission handler is served at `POST <path>/<handler id>`, each
 * CRD's converters at `POST <path>/conversion/<crd name>`.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import {
  type AdmissionServer,
  base64,
  type WebhookClientConfig,
  WebhookError,
  type WebhookFn,
} from "../model/admission.ts";
import { currentApi, runWithApi } from "../handling/current_api.ts";

const logger = getLogger(["kopf", "admission"]);

/** Options of a {@linkcode WebhookServer}. */
export interface WebhookServerOptions {
  /** The address to listen on; all interfaces (`0.0.0.0`) by default. */
  addr?: string;
  /** The port to listen on; a free one by default. */
  port?: number;
  /** The path under which handlers are served (`<path>/<id>`); `/` by default. */
  path?: string;
  /**
   * The host name or IP address in the URL given to the API server; by default the address
   * (`localhost` when none is given, `127.0.0.1` for `0.0.0.0`, `::1` for `::`).
   */
  host?: string;
  /** A PEM file with the serving certificate (chain); with `pkeyfile`. Generated when absent. */
  certfile?: string;
  /** A PEM file with the serving certificate's private key. */
  pkeyfile?: string;
  /** A PEM file with the CA that the API server must trust (the `caBundle`); the generated CA by default. */
  cafile?: string;
  /** A file to write the CA to (PEM), e.g. for `curl --cacert`. */
  cadump?: string;
  /** Serve plain HTTP: the API server does not accept it, but curl and tunnels do. */
  insecure?: boolean;
  /** More host names or IP addresses for the generated certificate. */
  extraSans?: readonly string[];
  /** The largest request body accepted, in bytes (16 MiB by default); larger ones get HTTP 413. */
  maxBodySize?: number;
}

const DEFAULT_MAX_BODY = 16 * 1024 * 1024;

/**
 * A webhook server listening locally; set it as `settings.admission.server`. It serves until the
 * operator stops, and reports its URL (and CA) once listening.
 *
 * Answers: the review response as JSON (200); 400 for bodies that are not JSON or not a usable
 * `AdmissionReview`; 404 for unknown resources or handler ids; 409 for ambiguous resources; 405 for
 * methods other than POST; 413 for bodies larger than `maxBodySize`. Client certificates are not
 * requested (Deno's server cannot), so handlers always get `sslpeer` as `{}`.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.startup(function configure({ settings }) {
 *   settings.admission.server = new kopf.WebhookServer({ addr: "127.0.0.1", port: 54321, cadump: "ca.pem" });
 *   settings.admission.managed = "auto.kopf.dev";
 * });
 * ```
 */
export class WebhookServer implements AdmissionServer {
  /** The options it was made with. */
  readonly options: Readonly<WebhookServerOptions>;
  #url: string | undefined;

  /**
   * Makes a server; nothing listens until the operator starts it.
   *
   * @param options where and how to listen.
   */
  constructor(options: WebhookServerOptions = {}) {
    if ((options.certfile === undefined) !== (options.pkeyfile === undefined)) {
      throw new TypeError("WebhookServer: give both certfile and pkeyfile, or neither (then one is generated).");
    }
    if (options.insecure && (options.certfile !== undefined || options.cafile !== undefined)) {
      throw new TypeError("WebhookServer: insecure (plain HTTP) cannot be combined with certfile/pkeyfile/cafile.");
    }
    if (options.port !== undefined && !(Number.isInteger(options.port) && options.port >= 0 && options.port < 65536)) {
      throw new TypeError(`WebhookServer: port must be an integer 0..65535, got ${options.port}.`);
    }
    this.options = { ...options };
  }

  /** The URL it serves at (with the actual port), once listening. */
  get url(): string | undefined {
    return this.#url;
  }

  /** The host in the reported URL. */
  get host(): string {
    const { host, addr } = this.options;
    if (host) return host;
    if (addr === undefined || addr === "") return "localhost";
    if (addr === "0.0.0.0") return "127.0.0.1";
    if (addr === "::") return "::1";
    return addr;
  }

  /** Listens, yields the client config, and serves until the signal aborts. */
  async *serve(fn: WebhookFn, signal: AbortSignal): AsyncIterable<WebhookClientConfig> {
    const { addr, insecure } = this.options;
    const maxBody = this.options.maxBodySize ?? DEFAULT_MAX_BODY;
    const prefix = "/" + (this.options.path ?? "/").replace(/^\/+|\/+$/g, "");
    let tls: { cert: string; key: string } | undefined;
    let ca: string | undefined;
    if (!insecure) {
      if (this.options.certfile !== undefined) {
        tls = {
          cert: await Deno.readTextFile(this.options.certfile),
          key: await Deno.readTextFile(this.options.pkeyfile!),
        };
      } else {
        const names = [this.host];
        if (addr && addr !== "0.0.0.0" && addr !== "::") names.push(addr);
        // Loaded only here: the X.509 library and its dependencies cost ~0.4 s of start-up to every operator otherwise.
        const { createSelfSignedCertificates } = await import("./certificates.ts");
        const generated = await createSelfSignedCertificates([...names, ...(this.options.extraSans ?? [])]);
        tls = { cert: generated.cert, key: generated.key };
        ca = generated.ca;
      }
      if (this.options.cafile !== undefined) ca = await Deno.readTextFile(this.options.cafile);
      if (this.options.cadump !== undefined && ca !== undefined) await Deno.writeTextFile(this.options.cadump, ca);
    }
    signal.throwIfAborted();

    // Deno.serve's handlers do not inherit the asynchronous context: the admission handlers' `api` is carried over.
    const api = currentApi();
    const handler = (request: Request): Promise<Response> =>
      runWithApi(api, () => answer(request, { fn, prefix, maxBody }));
    const server = Deno.serve({
      hostname: addr || "0.0.0.0",
      port: this.options.port ?? 0,
      ...(tls ?? {}),
      onListen: () => {},
      handler,
    });
    try {
      const host = this.host.includes(":") ? `[${this.host}]` : this.host;
      const base = `${insecure ? "http" : "https"}://${host}:${server.addr.port}`;
      this.#url = base + (prefix === "/" ? "" : prefix);
      logger.info("Serving admission webhooks at {url}.", { url: this.#url });
      const config: WebhookClientConfig = { url: this.#url };
      if (ca !== undefined) config.caBundle = base64(ca);
      yield config;
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
    } finally {
      await server.shutdown();
      this.#url = undefined;
    }
  }
}

function plain(status: number, message: string): Response {
  return new Response(message + "\n", { status, headers: { "Content-Type": "text/plain; charset=utf-8" } });
}

/** Reads a body up to a size; `undefined` when it is larger. */
async function readLimited(request: Request, limit: number): Promise<Uint8Array | undefined> {
  const declared = Number(request.headers.get("Content-Length") ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    await request.body?.cancel();
    return undefined;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel();
        return undefined;
      }
      chunks.push(value);
    }
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

async function answer(
  request: Request,
  deps: { fn: WebhookFn; prefix: string; maxBody: number },
): Promise<Response> {
  const { pathname } = new URL(request.url);
  const base = deps.prefix === "/" ? "" : deps.prefix;
  if (pathname !== base && pathname !== base + "/" && !pathname.startsWith(base + "/")) {
    return plain(404, `Nothing is served at ${pathname}; admission reviews go to ${base}/<handler id>.`);
  }
  if (request.method !== "POST") return plain(405, "Admission reviews are POSTed.");
  const rest = pathname.slice(base.length).replace(/^\/+|\/+$/g, "");
  let webhook: string | undefined;
  try {
    webhook = rest === "" ? undefined : decodeURIComponent(rest);
  } catch {
    return plain(400, `The handler id in ${pathname} is not properly URL-encoded.`);
  }
  let body: Uint8Array | undefined;
  try {
    body = await readLimited(request, deps.maxBody);
  } catch (error) {
    return plain(400, `The request body could not be read: ${(error as Error).message}`);
  }
  if (body === undefined) return plain(413, `The admission review is larger than ${deps.maxBody} bytes.`);
  let review: unknown;
  try {
    review = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch (error) {
    return plain(400, `The admission review is not valid JSON: ${(error as Error).message}`);
  }
  try {
    const response = await deps.fn(review, { webhook, headers: request.headers, sslpeer: {} });
    return Response.json(response);
  } catch (error) {
    if (error instanceof WebhookError) return plain(error.status, error.message);
    logger.error("An admission review failed unexpectedly: {error}", { error });
    return plain(500, `The admission review failed: ${(error as Error)?.message ?? error}`);
  }
}

/**
 * A {@linkcode WebhookServer} for K3d/K3s clusters (also in a VM): the API server reaches the
 * host at `host.k3d.internal`, which is the default `host` (and is in the generated certificate).
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.startup(function configure({ settings }) {
 *   settings.admission.server = new kopf.WebhookK3dServer({ port: 54321 });
 *   settings.admission.managed = "auto.kopf.dev";
 * });
 * ```
 */
export class WebhookK3dServer extends WebhookServer {
  /**
   * Makes a server whose URL names `host.k3d.internal` unless `host` is given.
   *
   * @param options where and how to listen.
   */
  constructor(options: WebhookServerOptions = {}) {
    super({ ...options, host: options.host ?? "host.k3d.internal" });
  }
}

/**
 * A {@linkcode WebhookServer} for Minikube clusters (also in a VM): the API server reaches the host
 * at `host.minikube.internal`, which is the default `host` (and is in the generated certificate).
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.startup(function configure({ settings }) {
 *   settings.admission.server = new kopf.WebhookMinikubeServer({ port: 54321 });
 *   settings.admission.managed = "auto.kopf.dev";
 * });
 * ```
 */
export class WebhookMinikubeServer extends WebhookServer {
  /**
   * Makes a server whose URL names `host.minikube.internal` unless `host` is given.
   *
   * @param options where and how to listen.
   */
  constructor(options: WebhookServerOptions = {}) {
    super({ ...options, host: options.host ?? "host.minikube.internal" });
  }
}

/**
 * A {@linkcode WebhookServer} for Docker Desktop's Kubernetes (and kind on Docker Desktop): the API
 * server reaches the host at `host.docker.internal`, which is the default `host`.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.startup(function configure({ settings }) {
 *   settings.admission.server = new kopf.WebhookDockerDesktopServer({ port: 54321 });
 * });
 * ```
 */
export class WebhookDockerDesktopServer extends WebhookServer {
  /**
   * Makes a server whose URL names `host.docker.internal` unless `host` is given.
   *
   * @param options where and how to listen.
   */
  constructor(options: WebhookServerOptions = {}) {
    super({ ...options, host: options.host ?? "host.docker.internal" });
  }
}
