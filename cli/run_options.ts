/**
 * Parsing the options of `kopf run` (command line, then `KOPF_RUN_<OPTION>`) into what the
 * operator needs.
 *
 * @module
 */

import type { LogFormat } from "@kopf/kopf/advanced";
import { DEV_PRIORITY } from "@kopf/kopf/peering";
import {
  checkPeeringName,
  type Environment,
  LOGGING_OPTIONS,
  optionName,
  type OptionSpec,
  parseCommand,
  type ParsedCommand,
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
  /** The metrics endpoint URL (`--metrics`), e.g. `http://0.0.0.0:9090/metrics`. */
  metrics?: string;
  /** Leader election (`--leader-elect` and its `--leader-elect-*` options); `undefined` when off. */
  leaderElection?: LeaderElectionOptions;
  /** Sharding (`--shard-group` and its `--shard-*` options); `undefined` when off. */
  sharding?: ShardingOptions;
  level: "debug" | "info" | "warning";
  format: LogFormat;
  prefix?: boolean;
  help: boolean;
}

/** What `--leader-elect-*` give; unset fields keep `settings.leaderElection`'s defaults. */
export interface LeaderElectionOptions {
  /** `--leader-elect-resource-name`: the Lease's name. */
  leaseName?: string;
  /** `--leader-elect-resource-namespace`: the Lease's namespace. */
  leaseNamespace?: string;
  /** `--leader-elect-lease-duration` in seconds. */
  leaseDuration?: number;
  /** `--leader-elect-renew-deadline` in seconds. */
  renewDeadline?: number;
  /** `--leader-elect-retry-period` in seconds. */
  retryPeriod?: number;
}

/** What `--shard-*` give; unset fields keep `settings.sharding`'s defaults. */
export interface ShardingOptions {
  /** `--shard-group`: the group's name. */
  group: string;
  /** `--shard-namespace`: the namespace of the group's Leases. */
  namespace?: string;
  /** `--shard-id`: this replica's identity in the group. */
  identity?: string;
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
  { long: "metrics", type: "string" },
  { long: "leader-elect", type: "boolean" },
  { long: "leader-elect-resource-name", type: "string" },
  { long: "leader-elect-resource-namespace", type: "string" },
  { long: "leader-elect-lease-duration", type: "string" },
  { long: "leader-elect-renew-deadline", type: "string" },
  { long: "leader-elect-retry-period", type: "string" },
  { long: "shard-group", type: "string" },
  { long: "shard-namespace", type: "string" },
  { long: "shard-id", type: "string" },
  { long: "context", type: "string" },
  ...LOGGING_OPTIONS,
];

/**
 * Parses the arguments after `run`; throws a {@linkcode UsageError} for anything it cannot accept.
 *
 * @param args The arguments after `run`.
 * @param env Where `KOPF_RUN_<OPTION>` defaults come from; the process environment by default.
 * @param embedded Whether handlers are embedded (a `kopf build` bundle): no file is needed then.
 */
export function parseRunOptions(
  args: string[],
  env: Environment = processEnvironment,
  embedded = false,
): RunOptions {
  const parsed = parseCommand("run", RUN_USAGE, RUN_OPTIONS, args, env);
  const values = parsed.values;
  const scope = resolveScope("run", parsed, env, RUN_USAGE);
  const logging = resolveLogging("run", parsed, env, RUN_USAGE);
  const liveness = values.liveness as string | undefined;
  if (liveness !== undefined && !parsed.help) checkEndpoint("--liveness", liveness, "/healthz");
  const metrics = values.metrics as string | undefined;
  if (metrics !== undefined && !parsed.help) checkEndpoint("--metrics", metrics, "/metrics");
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
    metrics,
    leaderElection: parsed.help ? undefined : resolveLeaderElection(parsed),
    sharding: parsed.help ? undefined : resolveSharding(parsed),
    ...logging,
    help: parsed.help,
  };
  if (options.leaderElection && options.sharding) {
    throw new UsageError(
      `${optionName("run", parsed, "shard-group")} and ${optionName("run", parsed, "leader-elect")} do not go ` +
        "together: choose one (leader election: one replica works, the others stand by; sharding: every replica " +
        "works on its share of the objects).",
      RUN_USAGE,
    );
  }
  if (!options.help && !embedded && options.files.length === 0 && options.modules.length === 0) {
    throw new UsageError("Nothing to run: give handler files or -m modules.", RUN_USAGE);
  }
  return options;
}

/** The liveness and metrics endpoints must be `http://` URLs with a host (as in Kopf), e.g. `http://0.0.0.0:8080/healthz`. */
function checkEndpoint(option: string, value: string, path: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${option} must be a URL like http://0.0.0.0:8080${path}, not "${value}".`, RUN_USAGE);
  }
  if (url.protocol !== "http:") {
    throw new UsageError(`${option} supports only http:// URLs, not "${value}".`, RUN_USAGE);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new UsageError(`${option} takes a host, a port and a path only, not "${value}".`, RUN_USAGE);
  }
}

/** The `--leader-elect-*` options need `--leader-elect`; durations are positive seconds, in controller-runtime's order. */
function resolveLeaderElection(parsed: ParsedCommand): LeaderElectionOptions | undefined {
  const values = parsed.values;
  const given = RUN_OPTIONS.filter((spec) => spec.long.startsWith("leader-elect-") && values[spec.long] !== undefined);
  if (values["leader-elect"] !== true) {
    if (given.length) {
      const name = optionName("run", parsed, given[0].long);
      throw new UsageError(`${name} needs --leader-elect (or KOPF_RUN_LEADER_ELECT=true).`, RUN_USAGE);
    }
    return undefined;
  }
  const options: LeaderElectionOptions = {
    leaseName: values["leader-elect-resource-name"] as string | undefined,
    leaseNamespace: values["leader-elect-resource-namespace"] as string | undefined,
    leaseDuration: seconds(parsed, "leader-elect-lease-duration"),
    renewDeadline: seconds(parsed, "leader-elect-renew-deadline"),
    retryPeriod: seconds(parsed, "leader-elect-retry-period"),
  };
  for (const long of ["leader-elect-resource-name", "leader-elect-resource-namespace"]) {
    const value = values[long] as string | undefined;
    if (value !== undefined && !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(value)) {
      throw new UsageError(
        `${optionName("run", parsed, long)} must be an object name (lower-case letters, digits, "-" and "."), ` +
          `not "${value}".`,
        RUN_USAGE,
      );
    }
  }
  return options;
}

/** The `--shard-*` options need `--shard-group`; the group and namespace are object names. */
function resolveSharding(parsed: ParsedCommand): ShardingOptions | undefined {
  const values = parsed.values;
  const group = values["shard-group"] as string | undefined;
  if (group === undefined) {
    const given = ["shard-namespace", "shard-id"].find((long) => values[long] !== undefined);
    if (given) throw new UsageError(`${optionName("run", parsed, given)} needs --shard-group NAME.`, RUN_USAGE);
    return undefined;
  }
  for (const long of ["shard-group", "shard-namespace"]) {
    const value = values[long] as string | undefined;
    if (value !== undefined && !/^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/.test(value)) {
      throw new UsageError(
        `${optionName("run", parsed, long)} must be a name of lower-case letters, digits, "-" and "." (at most 63), ` +
          `not "${value}".`,
        RUN_USAGE,
      );
    }
  }
  const identity = values["shard-id"] as string | undefined;
  if (identity !== undefined && identity.trim() === "") {
    throw new UsageError(`${optionName("run", parsed, "shard-id")} must not be empty.`, RUN_USAGE);
  }
  return { group, namespace: values["shard-namespace"] as string | undefined, identity };
}

/** A duration in seconds: a positive number, fractions allowed. */
function seconds(parsed: ParsedCommand, long: string): number | undefined {
  const raw = parsed.values[long] as string | undefined;
  if (raw === undefined) return undefined;
  const value = Number(raw.trim());
  if (raw.trim() === "" || !Number.isFinite(value) || value <= 0) {
    throw new UsageError(
      `${optionName("run", parsed, long)} must be a positive number of seconds, not "${raw}".`,
      RUN_USAGE,
    );
  }
  return value;
}
