/**
 * The HTTP clients that requests go through, per credentials: a pooled HTTP/2 client for requests
 * and streams alike, more clients (connections) for the streams beyond what one connection should
 * carry, and -- where the kubeconfig turns TLS verification off and Deno cannot do that per
 * client -- a bridge that does the TLS itself. A client whose connection stopped answering is
 * replaced; clients of credentials that left the vault close once no request is being sent with
 * them.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { Credentials } from "./credentials.ts";
import { InsecureBridge } from "./insecure_bridge.ts";

const logger = getLogger(["kopf", "api"]);

/**
 * Streams (watches) that the shared connection carries before the next ones go over connections
 * of their own. kube-apiserver allows 100 concurrent streams per HTTP/2 connection, and Deno's
 * client queues a request beyond that until a stream ends -- behind watches, which do not end: an
 * operator watching 100 namespaces had its requests time out. So the shared connection keeps room
 * for the requests (`settings.networking.concurrentRequests`, 32 by default).
 */
export const SHARED_STREAMS = 32;

/** Streams per connection of streams only, below the server's limit with room to spare. */
export const LANE_STREAMS = 64;

/** One HTTP client (one HTTP/2 connection) and the streams open over it. */
export interface Lane {
  http?: Deno.HttpClient;
  /** Streams open over `http`, from their request until their signal aborts. */
  streams: number;
  /** When a request through `http` last got its answer's headers (`performance.now()`, ms); 0: never. */
  answeredAt: number;
  /** The probe of a silent stream's connection under way (see `ApiClient.stalled`). */
  probe?: Promise<void>;
}

/** The HTTP clients of one set of credentials, and how many requests are between sending and the headers. */
export interface Transport {
  /** The client of the requests, and of the first {@linkcode SHARED_STREAMS} streams. */
  shared: Lane;
  /** The clients of the streams beyond those, {@linkcode LANE_STREAMS} each at most. */
  lanes: Lane[];
  /** Without TLS verification: the bridge that requests go through (see `insecure_bridge.ts`). */
  bridge?: Promise<InsecureBridge>;
  pending: number;
  /** The credentials have left the vault: close once no request is being sent. */
  dropped: boolean;
}

/** The transports of an API client, by credentials. */
export class Transports {
  readonly #transports = new Map<Credentials, Transport>();
  /**
   * By credentials, checked once to be a URL: their server without trailing slashes, and whether
   * requests go through a bridge (asked by every request: a lookup, no regular expression or call).
   */
  readonly #servers = new WeakMap<Credentials, { base: string; bridging: boolean }>();

  /** The transport of these credentials, made (and its bridge opened) on first use. */
  of(credentials: Credentials): Transport {
    let transport = this.#transports.get(credentials);
    if (!transport) {
      transport = { shared: { streams: 0, answeredAt: 0 }, lanes: [], pending: 0, dropped: false };
      this.#transports.set(credentials, transport);
      if (bridged(credentials)) {
        const server = new URL(credentials.server);
        const { cert, key, serverName } = credentials.tls;
        transport.bridge = InsecureBridge.open(server, { cert, key, serverName });
        logger.info("TLS verification of {server} is off, as {source} asks.", {
          server: credentials.server,
          source: credentials.source,
        });
      } else if (credentials.tls.insecure && new URL(credentials.server).protocol === "https:") {
        logger.warn(
          "{source} asks to skip TLS verification, which this platform cannot do per client; " +
            "run Deno with --unsafely-ignore-certificate-errors={host} or add the server's CA.",
          { source: credentials.source, host: new URL(credentials.server).hostname },
        );
      }
    }
    return transport;
  }

  /**
   * The transport's client, made on first use. Streams share it with requests: a watch's events and
   * the answers to the writes they cause then come over one HTTP/2 connection, often in one read
   * (less CPU per object: see docs/performance/cpu.md, "Fewer reads: the watch on the writes'
   * connection").
   */
  async client(transport: Transport, credentials: Credentials): Promise<Deno.HttpClient> {
    const existing = transport.shared.http;
    if (existing) return existing;
    let client: Deno.HttpClient;
    if (transport.bridge) {
      // The bridge speaks plain HTTP/1.1 on its socket and does the TLS itself.
      const bridge = await transport.bridge;
      client = transport.shared.http ??
        Deno.createHttpClient({ proxy: { transport: "unix", path: bridge.path }, http2: false });
    } else {
      client = httpClient(credentials);
    }
    transport.shared.http = client;
    return client;
  }

  /**
   * The lane of a stream about to be opened, counted in it until `signal` aborts: the shared one
   * while it carries fewer than {@linkcode SHARED_STREAMS} streams (and always through a bridge,
   * whose HTTP/1.1 gives each request a connection of its own), else one of the lanes of streams,
   * a new one when each carries {@linkcode LANE_STREAMS}. A lane of streams closes with its last.
   */
  streamLane(transport: Transport, credentials: Credentials, signal: AbortSignal): Lane {
    signal.throwIfAborted();
    let lane = transport.shared;
    if (!transport.bridge && lane.streams >= SHARED_STREAMS) {
      lane = transport.lanes.find((each) => each.streams < LANE_STREAMS) ?? this.#newLane(transport, credentials);
    }
    lane.streams++;
    signal.addEventListener("abort", () => {
      lane.streams--;
      if (lane.streams > 0 || lane === transport.shared) return;
      const index = transport.lanes.indexOf(lane);
      if (index >= 0) transport.lanes.splice(index, 1);
      lane.http?.close();
      lane.http = undefined;
    }, { once: true });
    return lane;
  }

  #newLane(transport: Transport, credentials: Credentials): Lane {
    const lane: Lane = { http: httpClient(credentials), streams: 0, answeredAt: 0 };
    transport.lanes.push(lane);
    logger.debug("More than {count} streams to {server}: the next go over another connection.", {
      count: SHARED_STREAMS + LANE_STREAMS * (transport.lanes.length - 1),
      server: credentials.server,
    });
    return lane;
  }

  /**
   * A request or stream sent with `client` over `lane` got no answer in time (a timeout, a stalled
   * stream): its connection may be dead while still open, and every request would queue behind it.
   * If `client` is still the lane's, it is closed and the next request makes a new one (a new
   * connection); responses under way keep the old connection until they end or time out. A
   * client already replaced is left alone, so that the many requests a dead connection fails at
   * once replace it once. So is a client that answered other requests after `since` (ms, as
   * `performance.now()`): requests do not queue behind it, only the silent stream waited (say, for
   * a bookmark late on a busy server), and its caller resumes it over the same connection.
   *
   * @returns whether the connection was kept because it answered after `since`.
   */
  suspect(
    transport: Transport,
    lane: Lane,
    client: Deno.HttpClient,
    credentials: Credentials,
    why: string,
    since?: number,
  ): boolean {
    if (lane.http !== client) return false;
    if (since !== undefined && lane.answeredAt > since) {
      logger.debug("A stream got {why}, but the connection to {server} answered meanwhile: kept.", {
        why,
        server: credentials.server,
      });
      return true;
    }
    // The streams still open over it count in the lane they were opened in, which is left behind.
    if (lane === transport.shared) transport.shared = { streams: 0, answeredAt: 0 };
    else transport.lanes.splice(transport.lanes.indexOf(lane), 1);
    lane.http = undefined;
    client.close();
    logger.info("The connection to {server} stopped answering ({why}): the next requests open a new one.", {
      server: credentials.server,
      why,
    });
    return false;
  }

  /**
   * The last request sent with a dropped transport is done (its sender counts them in `pending`):
   * it closes now. A response already under way keeps its connection after its client is closed.
   */
  finished(transport: Transport): void {
    if (transport.dropped && transport.pending === 0) closeTransport(transport);
  }

  /** The credentials have left the vault: their clients close once no request is being sent with them. */
  drop(credentials: Credentials): void {
    const transport = this.#transports.get(credentials);
    if (!transport) return;
    this.#transports.delete(credentials);
    transport.dropped = true;
    if (transport.pending === 0) closeTransport(transport);
  }

  /** Closes every client and bridge. */
  close(): void {
    for (const [credentials, transport] of this.#transports) {
      this.#transports.delete(credentials);
      closeTransport(transport);
    }
  }

  /**
   * The request's URL as text: `fetch` parses it anyway, and an own `URL` object per request was
   * parsed, serialised and parsed again (visible in the profiles). A `URL` is made only where the
   * text must change (a bridge's port and scheme, a path with a query of its own).
   */
  url(
    credentials: Credentials,
    path: string,
    query: Record<string, string | number | boolean | undefined> | undefined,
  ): string {
    let server = this.#servers.get(credentials);
    if (server === undefined) {
      // A server that is no URL fails here, as before the request, not as a connection error retried.
      new URL(credentials.server);
      server = { base: credentials.server.replace(/\/+$/, ""), bridging: bridged(credentials) };
      this.#servers.set(credentials, server);
    }
    let text = server.base + path;
    // The query is joined once: each `searchParams.set()` re-serialises the whole URL (per request,
    // that showed in the profiles). A path with its own query keeps the key-by-key replacement.
    const joined = !query || !path.includes("?");
    if (query && joined) {
      const params = new URLSearchParams();
      for (const key in query) {
        const value = query[key];
        if (value !== undefined) params.append(key, String(value));
      }
      const search = params.toString();
      if (search) text += "?" + search;
    }
    const bridging = server.bridging;
    if (joined && !bridging) return text;
    const url = new URL(text);
    if (bridging) {
      // Plain HTTP into the bridge, which does the TLS: the port must survive the scheme change.
      const port = url.port || "443";
      url.protocol = "http:";
      url.port = port;
    }
    if (!joined) {
      for (const [key, value] of Object.entries(query)) {
        if (value !== undefined) url.searchParams.set(key, String(value));
      }
    }
    return url.href;
  }
}

/** Whether requests with these credentials go through an {@linkcode InsecureBridge}. */
function bridged(credentials: Credentials): boolean {
  return credentials.tls.insecure && InsecureBridge.supported && credentials.server.startsWith("https:");
}

/** A pooled client of the credentials' server, with their TLS material and proxy. */
function httpClient(credentials: Credentials): Deno.HttpClient {
  const tls = credentials.tls;
  const options: Deno.CreateHttpClientOptions = {};
  if (tls.caCerts?.length) options.caCerts = tls.caCerts;
  if (tls.proxyUrl) options.proxy = { url: tls.proxyUrl };
  return tls.cert && tls.key
    ? Deno.createHttpClient({ ...options, cert: tls.cert, key: tls.key })
    : Deno.createHttpClient(options);
}

function closeTransport(transport: Transport): void {
  for (const lane of [transport.shared, ...transport.lanes.splice(0)]) {
    lane.http?.close();
    lane.http = undefined;
  }
  transport.bridge?.then((bridge) => bridge.close(), () => {});
  transport.bridge = undefined;
}
