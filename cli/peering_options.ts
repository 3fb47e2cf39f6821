/**
 * Parsing the options of `kopf freeze` and `kopf resume` (command line, then
 * `KOPF_FREEZE_<OPTION>` / `KOPF_RESUME_<OPTION>`).
 *
 * @module
 */

import type { LogFormat } from "@kopf/kopf/advanced";
import { DEV_PRIORITY, FREEZE_PRIORITY } from "@kopf/kopf/peering";
import {
  checkPeeringName,
  type Environment,
  integerOption,
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
import { FREEZE_USAGE, RESUME_USAGE, UsageError } from "./usage.ts";

/** The parsed command line of `kopf resume` (and the common part of `kopf freeze`). */
export interface ResumeOptions {
  /** The peering name (`-P/--peering`, required). */
  peering: string;
  namespaces: string[];
  clusterwide: boolean;
  /** The identity of the record (`-i/--id`); `POD_ID` or `<user>@<host>` when absent. */
  id?: string;
  context?: string;
  level: "debug" | "info" | "warning";
  format: LogFormat;
  prefix?: boolean;
  help: boolean;
  /** Neither `-n` nor `-A` is given: cluster-wide, and the command warns about it. */
  scopeDefaulted?: boolean;
}

/** The parsed command line of `kopf freeze`. */
export interface FreezeOptions extends ResumeOptions {
  /** Seconds the freeze lasts (`-t/--lifetime`, required). */
  lifetime: number;
  /** The priority (`-p/--priority`, default 100; `--dev` = 666). */
  priority: number;
  /** A message (`-m/--message`): logged, not stored (as in Kopf). */
  message?: string;
}

/** The options of `kopf resume`, each with its `KOPF_RESUME_<OPTION>` default unless said otherwise. */
export const RESUME_OPTIONS: readonly OptionSpec[] = [
  ...SCOPE_OPTIONS,
  { long: "id", short: "i", type: "string" },
  { long: "peering", short: "P", type: "string" },
  { long: "context", type: "string" },
  ...LOGGING_OPTIONS,
];

/** The options of `kopf freeze`, each with its `KOPF_FREEZE_<OPTION>` default unless said otherwise. */
export const FREEZE_OPTIONS: readonly OptionSpec[] = [
  ...RESUME_OPTIONS,
  { long: "dev", type: "boolean" },
  { long: "priority", short: "p", type: "string" },
  { long: "lifetime", short: "t", type: "string" },
  { long: "message", short: "m", type: "string" },
];

/**
 * Parses the arguments after `freeze`; throws a {@linkcode UsageError} for anything it cannot accept.
 *
 * @param args The arguments after `freeze`.
 * @param env Where `KOPF_FREEZE_<OPTION>` defaults come from; the process environment by default.
 */
export function parseFreezeOptions(args: string[], env: Environment = processEnvironment): FreezeOptions {
  const parsed = parseCommand("freeze", FREEZE_USAGE, FREEZE_OPTIONS, args, env);
  const common = parseCommon("freeze", parsed, env, FREEZE_USAGE);
  if (parsed.help) return { ...common, lifetime: 0, priority: FREEZE_PRIORITY };
  const lifetime = integerOption("freeze", parsed, "lifetime", FREEZE_USAGE, { min: 1 });
  if (lifetime === undefined) {
    throw new UsageError("Missing option '-t' / '--lifetime' (seconds the freeze lasts).", FREEZE_USAGE);
  }
  const priority = resolvePriority("freeze", parsed, FREEZE_USAGE, DEV_PRIORITY) ?? FREEZE_PRIORITY;
  const message = parsed.values.message as string | undefined;
  return { ...common, lifetime, priority, message };
}

/**
 * Parses the arguments after `resume`; throws a {@linkcode UsageError} for anything it cannot accept.
 *
 * @param args The arguments after `resume`.
 * @param env Where `KOPF_RESUME_<OPTION>` defaults come from; the process environment by default.
 */
export function parseResumeOptions(args: string[], env: Environment = processEnvironment): ResumeOptions {
  const parsed = parseCommand("resume", RESUME_USAGE, RESUME_OPTIONS, args, env);
  return parseCommon("resume", parsed, env, RESUME_USAGE);
}

function parseCommon(command: string, parsed: ParsedCommand, env: Environment, usage: string): ResumeOptions {
  const scope = resolveScope(command, parsed, env, usage);
  const logging = resolveLogging(command, parsed, env, usage);
  const base = {
    ...scope,
    ...logging,
    id: parsed.values.id as string | undefined,
    context: parsed.values.context as string | undefined,
    help: parsed.help,
  };
  if (parsed.help) return { peering: "", ...base };
  if (parsed.positionals.length) {
    throw new UsageError(`Got unexpected extra argument (${parsed.positionals.join(" ")}).`, usage);
  }
  const peering = checkPeeringName(command, parsed, usage);
  if (peering === undefined) throw new UsageError("Missing option '-P' / '--peering' (the peering name).", usage);
  if (!scope.clusterwide && !scope.namespaces.length) {
    // As `kopf run` (and Kopf): neither -n nor -A means cluster-wide, with a warning.
    return { peering, ...base, clusterwide: true, scopeDefaulted: true };
  }
  if (base.id !== undefined && !base.id.trim()) {
    throw new UsageError(`${optionName(command, parsed, "id")} must not be empty.`, usage);
  }
  return { peering, ...base };
}
