/**
 * `operator()`: runs the startup handlers, connects, and then (`running.ts`) serves the liveness
 * endpoint, discovers the resources the handlers select, runs one watch stream per resource and
 * namespace -- starting and stopping streams as namespaces and CRDs come and go (`orchestration.ts`,
 * `observation.ts`, `resources.ts`) and as peering or leader election allow (`activation.ts`) --
 * feeds the events into per-object queues (`serving.ts`), and stops cleanly: streams, queues,
 * cleanup handlers, Events.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { ApiClient } from "../api/client.ts";
import type { Credentials } from "../api/credentials.ts";
import { KubeApi } from "../api/kube_api.ts";
import type { Vault } from "../api/vault.ts";
import { OperatorIndexes } from "../engines/indexing.ts";
import { EventPoster } from "../engines/posting.ts";
import { runWithPoster } from "../engines/posting_context.ts";
import { postingSink } from "../engines/posting_sink.ts";
import { type LivenessEndpoint, parseLivenessEndpoint } from "../engines/probing.ts";
import { runActivity } from "../handling/activities.ts";
import type { Memo } from "../handling/context.ts";
import { runWithApi } from "../handling/current_api.ts";
import type { Lifecycle } from "../handling/lifecycles.ts";
import { openVault } from "../handling/login.ts";
import { defaultRegistry, type Registry } from "../handling/registry.ts";
import { configureDefaultLogging, flushLogging } from "../logging/configure.ts";
import type { Indices } from "../model/index_store.ts";
import { Settings } from "../settings/settings.ts";
import { checkSomethingToRun } from "./no_handlers.ts";
import { type Connection, runConnected, type RunningOperator } from "./running.ts";
import { type StopSignals, trapStopSignals } from "./stop_signals.ts";

export type { RunningOperator } from "./running.ts";

const logger = getLogger(["kopf", "operator"]);

/** Options of {@linkcode operator}. */
export interface OperatorOptions {
  /**
   * Namespaces to serve: exact names, or patterns of globs (`myapp-*,!*-pr-*`), or regular
   * expressions (matching whole names); ignored when `clusterwide`. Patterns other than exact
   * names make the operator list and watch namespaces, and serve the matching ones as they come
   * and go (unless `settings.scanning.disabled`).
   */
  namespaces?: (string | RegExp)[];
  /** Serve all namespaces. Also the mode when no namespaces are given. */
  clusterwide?: boolean;
  /**
   * Run without peering: no keep-alives, never paused by other operators
   * (`settings.peering.standalone`). Otherwise peering is used when its CRDs exist.
   */
  standalone?: boolean;
  /** The peering priority (`settings.peering.priority`; Kopf's `--priority`, `--dev` is 666). */
  priority?: number;
  /**
   * The peering object's name (`settings.peering.name`); giving it makes peering mandatory: the
   * operator stays paused while the peering CRD or the object is missing (Kopf's `--peering`).
   */
  peeringName?: string;
  /**
   * This operator's identity in peering records and in the leader-election Lease; by default
   * `POD_ID`, else `<user>@<host>/<time>/<3 random characters>`.
   */
  identity?: string;
  /** The handlers to run; the default registry otherwise. */
  registry?: Registry;
  /** Settings; Kopf's defaults otherwise. Startup handlers may change them. */
  settings?: Settings;
  /** The credentials; otherwise the kubeconfig (`kubeconfig`, `context`) or the in-cluster service account. */
  credentials?: Credentials;
  /** A kubeconfig file to use instead of `$KUBECONFIG` or `~/.kube/config`. */
  kubeconfig?: string;
  /** A kubeconfig context to use instead of the current one. */
  context?: string;
  /** Stops the operator when aborted; SIGINT and SIGTERM stop it too. */
  signal?: AbortSignal;
  /** Which due handlers run per cycle; {@linkcode allAtOnce} (all of them, one patch) by default. */
  lifecycle?: Lifecycle;
  /**
   * The operator's memo: activity handlers get it as `memo`, and each object's memo starts as a
   * shallow copy of it (taken when the operator first sees the object, so after startup).
   */
  memo?: Memo;
  /**
   * A liveness endpoint to serve once the startup handlers have succeeded, e.g.
   * `http://0.0.0.0:8080/healthz` (only `http`; port 0 picks a free one): see `on.probe`.
   */
  liveness?: string;
  /**
   * A Prometheus metrics endpoint to serve with the liveness endpoint, e.g. `http://0.0.0.0:9090/metrics`
   * (sets `settings.metrics.endpoint`; on the liveness server when host and port are the same).
   */
  metrics?: string;
  /**
   * Called once the startup handlers have succeeded and every stream has listed its objects -- or,
   * when peering pauses the operator from the start, once that is known.
   */
  ready?: (operator: RunningOperator) => void;
}

/**
 * Runs an operator until the signal aborts or SIGINT/SIGTERM arrives.
 *
 * Starting: the startup handlers run first (before anything touches the API), then the
 * credentials are loaded, the liveness endpoint is served (if asked), the resources are
 * discovered and the watch streams start; `ready` is called once all of them have listed.
 *
 * Stopping (the first SIGINT/SIGTERM, or `signal`): the watch streams stop, the objects' queues
 * get `settings.batching.exitTimeout` to drain, the liveness endpoint closes, the cleanup handlers run (within
 * `settings.process.cleanupTimeout`), queued Events are posted, and the promise resolves.
 * Copies of the first signal within a second (a Ctrl+C under `deno task` arrives twice) are the
 * same stop; a SIGINT/SIGTERM after that -- or `settings.process.ultimateExitingTimeout` passing
 * after the first -- exits the process at once with code 130 (SIGINT) or 143 (SIGTERM), as a
 * shell reports a process killed by that signal (see `stop_signals.ts`).
 *
 * Logging: unless the program has configured LogTape itself, it is configured as `kopf run` does
 * (Kopf's `full` format on stderr, level info), so that the operator's and the handlers' messages show.
 * Several operators in one process share it: the first to start configures it, the others keep
 * it, and an operator that stops leaves it to the others.
 *
 * Rejects at once with a {@linkcode NoHandlersError} if the registry has nothing to run (no resource,
 * admission or startup handler). Rejects if the startup handlers fail for good (an
 * {@linkcode ActivityError}), or on a fatal error (credentials, discovery); the cleanup handlers
 * still run in the latter case.
 *
 * @example
 * ```ts ignore
 * import * as kopf from "@kopf/kopf";
 * kopf.on.create("kopfexamples", function createFn() { return { message: "hello" }; });
 * await kopf.operator({ clusterwide: true, standalone: true });
 * ```
 */
export async function operator(options: OperatorOptions = {}): Promise<void> {
  // Silence would hide even the handlers' own messages; a program with its own logging keeps it.
  await configureDefaultLogging({ postingSink });
  const registry = options.registry ?? defaultRegistry;
  checkSomethingToRun(registry);
  const settings = options.settings ?? new Settings();
  applyOptions(settings, options);
  const memo = options.memo ?? {};
  // The indexes exist (empty) from the start, so that every handler, even a startup one, sees them.
  const indexes = new OperatorIndexes(registry.handlers, { settings });
  const endpoint = options.liveness === undefined ? undefined : parseLivenessEndpoint(options.liveness);
  using stopping = trapStopSignals();
  if (options.signal?.aborted || stopping.signal.aborted) return;
  // The handlers' `api`: the operator's own client and discovery, once connected.
  const connection: Connection = {};
  const api = handlersApi(connection, settings);
  await using stack = new AsyncDisposableStack();
  // The last lines are out before the caller exits or prints its own (they go out in batches).
  stack.defer(flushLogging);
  const stop = stopFlag(options.signal, stopping, settings, stack);
  // Startup handlers first: nothing has touched the API yet, and they may change the settings.
  try {
    await runWithApi(api, () =>
      runActivity(registry.activities("startup"), {
        activity: "startup",
        settings,
        memo,
        indices: indexes.indices,
        signal: stop.signal,
      }));
  } catch (error) {
    if (!stop.signal.aborted) throw error;
    logger.warn(
      "The startup activity is only partially executed: the operator is stopping. " +
        "Cleanup handlers are not run.",
    );
    logger.info("Operator has stopped.");
    return;
  }
  await runWithApi(api, () => serve({ ...options, registry, settings, memo, endpoint, indexes, connection }, stop));
}

/** As Kopf does: the options override the settings before the startup handlers, which may change them. */
function applyOptions(settings: Settings, options: OperatorOptions): void {
  if (options.standalone !== undefined) settings.peering.standalone = options.standalone;
  if (options.priority !== undefined) settings.peering.priority = options.priority;
  if (options.peeringName !== undefined) {
    settings.peering.name = options.peeringName;
    settings.peering.mandatory = true;
  }
  settings.peering.clusterwide = options.clusterwide || !options.namespaces?.length;
  if (options.metrics !== undefined) settings.metrics.endpoint = options.metrics;
}

/** The handlers' `api`: the operator's own client and discovery once connected, an error before. */
function handlersApi(connection: Connection, settings: Settings): KubeApi {
  return new KubeApi({
    client: () => {
      if (connection.client) return connection.client;
      throw new Error(
        "The operator's API client is not connected yet: startup and login handlers run before the operator " +
          "logs in. Use `await kopf.connect()` there, or move the call to a resource or cleanup handler.",
      );
    },
    discovery: () => connection.discovery,
    watching: () => settings.watching,
  });
}

/**
 * The operator's stop, raised by the caller's `signal` or by the first SIGINT/SIGTERM -- which also
 * starts `settings.process.ultimateExitingTimeout`. The listeners and that timer end with the stack.
 */
function stopFlag(
  signal: AbortSignal | undefined,
  stopping: StopSignals,
  settings: Settings,
  stack: AsyncDisposableStack,
): AbortController {
  const stop = new AbortController();
  let ultimate: ReturnType<typeof setTimeout> | undefined;
  const onStopSignal = () => {
    const timeout = settings.process.ultimateExitingTimeout;
    if (timeout !== null) {
      const code = stopping.exitCode;
      ultimate = setTimeout(() => {
        logger.error(
          "The operator has not stopped within {timeout} s (settings.process.ultimateExitingTimeout); " +
            "exiting at once (code {code}).",
          { timeout, code },
        );
        Deno.exit(code);
      }, timeout * 1000);
      Deno.unrefTimer(ultimate);
    }
    stop.abort(stopping.signal.reason);
  };
  stopping.signal.addEventListener("abort", onStopSignal, { once: true });
  stack.defer(() => stopping.signal.removeEventListener("abort", onStopSignal));
  const onAbort = () => {
    if (stop.signal.aborted) return;
    logger.info("Stop-flag is raised. Operator is stopping.");
    stop.abort(signal?.reason);
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  stack.defer(() => signal?.removeEventListener("abort", onAbort));
  stack.defer(() => clearTimeout(ultimate));
  return stop;
}

/** What `serve` needs: the options, with the defaults resolved. */
type Resolved = OperatorOptions & {
  registry: Registry;
  settings: Settings;
  memo: Memo;
  endpoint?: LivenessEndpoint;
  indexes: OperatorIndexes;
  connection: Connection;
};

/**
 * Everything after the startup handlers: connecting, serving until the stop, stopping, and the
 * cleanup handlers -- also after a fatal error, with the poster and client still open for them.
 */
async function serve(options: Resolved, stop: AbortController): Promise<void> {
  const { registry, settings, memo } = options;
  let client: ApiClient | undefined;
  let poster: EventPoster | undefined;
  try {
    // After the startup handlers, before any request: they may prepare what the login handlers use.
    let failure: unknown;
    let vault: Vault;
    try {
      const { kubeconfig, context } = options;
      vault = await openVault(
        { registry, settings, memo, indices: options.indexes.indices, signal: stop.signal, kubeconfig, context },
        options.credentials,
        (error) => {
          failure ??= error;
          stop.abort(error);
        },
      );
    } catch (error) {
      if (!stop.signal.aborted) throw error;
      logger.warn("The initial authentication is interrupted: the operator is stopping.");
      return;
    }
    client = new ApiClient(vault, { networking: settings.networking });
    options.connection.client = client;
    // Explicit events and posted log lines of everything started below find this operator's poster.
    poster = new EventPoster(client, settings.posting);
    await runWithPoster(poster, () => runConnected(options, client!, stop));
    if (failure !== undefined) throw failure;
  } finally {
    try {
      const clean = () => cleanup(registry, settings, memo, options.indexes.indices);
      await (poster ? runWithPoster(poster, clean) : clean());
    } finally {
      await poster?.close();
      client?.[Symbol.dispose]();
      // Failures before connecting (e.g. credentials) are reported by the caller alone.
      if (client) logger.info("Operator has stopped.");
    }
  }
}

/** Runs the cleanup handlers; their failures are logged, never raised. */
async function cleanup(registry: Registry, settings: Settings, memo: Memo, indices: Indices): Promise<void> {
  const handlers = registry.activities("cleanup");
  if (handlers.length === 0) return;
  try {
    await runActivity(handlers, {
      activity: "cleanup",
      settings,
      memo,
      indices,
      timeout: settings.process.cleanupTimeout,
    });
  } catch (error) {
    logger.error("The cleanup activity has failed; the operator stops anyway: {error}", { error });
  }
}
