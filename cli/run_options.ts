/**
 * Parsing the options of `kopf run` (command line, then `KOPF_RUN_<OPTION>`) into what the
 * operator needs.
 *
 * @module
 */

import type { LogFormat } from "@kopf/kopf";
import { DEV_PRIORITY } from "@kopf/kopf/peering";
import {
  checkPeeringName,
  type Environment,
  LOGGING_OPTIONS,
  type OptionSpec,
  parseCommand,
  processEnvironment,
  resolveLogging,
  resolvePriority,
  resolveScope,
  SCOPE_OPTIONS,
} from "./options.ts";
import { RUN_USAGE, UsageError } from "./usage.ts";

/** The parsed command line of `kopf run`. */
export interface RunOptions {
  /** Handler files, imported first, in order. */
  files: string[];
  /** Module specifiers (`-m`), imported after the files, in order. */
  modules: string[];
  namespaces: string[];
  clusterwide: boolean;
  standalone: boolean;
  /** The priority (`-p/--priority N`, or 666 with `--dev`); `undefined` when not given. */
  priority?: number;
  /** The peering name (`-P/--peering NAME`): peering is mandatory then; `undefined` when not given. */
  peering?: string;
  /** Whether `--dev` is given (priority 666). */
  dev: boolean;
  context?: string;
  /** The liveness endpoint URL (`-L/--liveness`), e.g. `http://0.0.0.0:8080/healthz`. */
  liveness?: string;
  level: "debug" | "info" | "warning";
  format: LogFormat;
  prefix?: boolean;
  help: boolean;
}

/** The options of `kopf run`, each with its `KOPF_RUN_<OPTION>` default unless said otherwise. */
export const RUN_OPTIONS: readonly OptionSpec[] = [
  { long: "module", short: "m", type: "string", multiple: true },
  ...SCOPE_OPTIONS,
  { long: "standalone", type: "boolean" },
  { long: "priority", short: "p", type: "string" },
  { long: "peering", short: "P", type: "string" },
  { long: "dev", type: "boolean" },
  { long: "liveness", short: "L", type: "string" },
  { long: "context", type: "string" },
  ...LOGGING_OPTIONS,
];

/**
 * Parses the arguments after `run`; throws a {@linkcode UsageError} for anything it cannot accept.
 *
 * @param args The arguments after `run`.
 * @param env Where `KOPF_RUN_<OPTION>` defaults come from; the process environment by default.
 */
export function parseRunOptions(args: string[], env: Environment = processEnvironment): RunOptions {
  const parsed = parseCommand("run", RUN_USAGE, RUN_OPTIONS, args, env);
  const values = parsed.values;
  const scope = resolveScope("run", parsed, env, RUN_USAGE);
  const logging = resolveLogging("run", parsed, env, RUN_USAGE);
  const liveness = values.liveness as string | undefined;
  if (liveness !== undefined && !parsed.help) checkLiveness(liveness);
  const options: RunOptions = {
    files: parsed.positionals,
    modules: (values.module as string[] | undefined) ?? [],
    ...scope,
    standalone: values.standalone === true,
    priority: parsed.help ? undefined : resolvePriority("run", parsed, RUN_USAGE, DEV_PRIORITY),
    peering: parsed.help ? undefined : checkPeeringName("run", parsed, RUN_USAGE),
    dev: values.dev === true,
    context: values.context as string | undefined,
    liveness,
    ...logging,
    help: parsed.help,
  };
  if (!options.help && options.files.length === 0 && options.modules.length === 0) {
    throw new UsageError("Nothing to run: give handler files or -m modules.", RUN_USAGE);
  }
  return options;
}

/**
 * The peering options that this version cannot honour without `--standalone`: the operator has no
 * peering yet. Returns the one-line reason, or `undefined` when the options are fine.
 *
 * @param options The parsed options.
 */
export function peeringUnavailable(options: RunOptions): string | undefined {
  if (options.standalone) return undefined;
  const asked: string[] = [];
  if (options.peering !== undefined) asked.push(`--peering=${options.peering}`);
  if (options.dev) asked.push("--dev");
  else if (options.priority !== undefined) asked.push(`--priority=${options.priority}`);
  if (!asked.length) return undefined;
  return `Peering is not available yet in this version of kopf, but ${asked.join(" and ")} ` +
    `${asked.length > 1 ? "ask" : "asks"} for it: run with --standalone (or KOPF_RUN_STANDALONE=true), ` +
    `or without the peering options.`;
}

/** The liveness endpoint must be an `http://` URL with a host (as in Kopf), e.g. `http://0.0.0.0:8080/healthz`. */
function checkLiveness(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--liveness must be a URL like http://0.0.0.0:8080/healthz, not "${value}".`, RUN_USAGE);
  }
  if (url.protocol !== "http:") {
    throw new UsageError(`--liveness supports only http:// URLs, not "${value}".`, RUN_USAGE);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new UsageError(`--liveness takes a host, a port and a path only, not "${value}".`, RUN_USAGE);
  }
}
