/**
 * What the commands' option parsers share: the command line parsed strictly, defaults from the
 * environment (`KOPF_<COMMAND>_<OPTION>`, the command line wins), and the options that several
 * commands have -- scope, logging, priority, peering name, context.
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { LogFormat } from "@kopf/kopf/advanced";
import { UsageError } from "./usage.ts";

/** Reads an environment variable; `Deno.env.get` in the CLI, a plain object in tests. */
export type Environment = (name: string) => string | undefined;

/** The process environment (`undefined` for everything without `--allow-env`). */
export const processEnvironment: Environment = (name) => {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
};

/** One option of a command. */
export interface OptionSpec {
  /** The long name without dashes, e.g. `log-format`. */
  long: string;
  /** The one-letter short name, e.g. `n`. */
  short?: string;
  /** A flag or an option with a value. */
  type: "boolean" | "string";
  /** Repeatable: the values are collected in order. */
  multiple?: boolean;
  /** Whether `KOPF_<COMMAND>_<OPTION>` gives a default; true unless said otherwise. */
  env?: boolean;
}

/** A parsed value: a flag, a string, or the strings of a repeatable option. */
export type OptionValue = boolean | string | string[] | undefined;

/** A command line parsed with its environment defaults. */
export interface ParsedCommand {
  /** The values by long name; from the command line, else from the environment. */
  values: Record<string, OptionValue>;
  /** The arguments that are not options. */
  positionals: string[];
  /** Which values came from the environment (long names), for messages. */
  fromEnvironment: Set<string>;
  /** Whether `--help`/`-h` is given: nothing else is validated then. */
  help: boolean;
}

/**
 * The environment variable of an option: `KOPF_<COMMAND>_<OPTION>` in upper case with dashes as
 * underscores, e.g. `KOPF_RUN_LOG_FORMAT`.
 *
 * @param command The command, e.g. `run`.
 * @param long The option's long name, e.g. `log-format`.
 */
export function envName(command: string, long: string): string {
  return `KOPF_${command}_${long}`.toUpperCase().replaceAll("-", "_");
}

const TRUE = new Set(["1", "true", "t", "yes", "y", "on"]);
const FALSE = new Set(["0", "false", "f", "no", "n", "off"]);

/**
 * Reads a boolean environment variable: `1/true/yes/on` or `0/false/no/off` (any case); an empty
 * or unset variable is `undefined`; anything else is a usage error naming the variable.
 */
export function envFlag(env: Environment, name: string, usage: string): boolean | undefined {
  const raw = env(name)?.trim();
  if (!raw) return undefined;
  const value = raw.toLowerCase();
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  throw new UsageError(`${name} must be true or false (or 1/0, yes/no, on/off), not "${raw}".`, usage);
}

/**
 * Reads a list environment variable: values separated by whitespace (commas belong to a value,
 * as in a namespace pattern `app-*,!app-test`); unset or empty -> `undefined`.
 */
export function envList(env: Environment, name: string): string[] | undefined {
  const raw = env(name)?.trim();
  if (!raw) return undefined;
  const values = raw.split(/\s+/).filter(Boolean);
  return values.length ? values : undefined;
}

/**
 * Parses a command line strictly (unknown options are usage errors), then fills what it does not
 * give from `KOPF_<COMMAND>_<OPTION>`. Nothing is read from the environment with `--help`.
 *
 * @param command The command, for the environment variables' names.
 * @param usage The command's usage line, for errors.
 * @param specs The command's options (`help` is added).
 * @param args The arguments after the command.
 * @param env Where environment variables come from.
 */
export function parseCommand(
  command: string,
  usage: string,
  specs: readonly OptionSpec[],
  args: string[],
  env: Environment,
): ParsedCommand {
  const options: Record<string, { type: "boolean" | "string"; short?: string; multiple?: boolean }> = {
    help: { type: "boolean", short: "h" },
  };
  for (const spec of specs) {
    options[spec.long] = {
      type: spec.type,
      ...(spec.short ? { short: spec.short } : {}),
      ...(spec.multiple ? { multiple: true } : {}),
    };
  }
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, strict: true, options });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_")) {
      throw new UsageError(cleanParseError(error), usage);
    }
    throw error;
  }
  const values = { ...parsed.values } as Record<string, OptionValue>;
  const help = Boolean(values.help);
  delete values.help;
  const fromEnvironment = new Set<string>();
  if (!help) {
    for (const spec of specs) {
      if (spec.env === false || values[spec.long] !== undefined) continue;
      const name = envName(command, spec.long);
      const value = spec.type === "boolean"
        ? envFlag(env, name, usage)
        : spec.multiple
        ? envList(env, name)
        : env(name)?.trim() || undefined;
      if (value === undefined) continue;
      values[spec.long] = value;
      fromEnvironment.add(spec.long);
    }
  }
  return { values, positionals: parsed.positionals, fromEnvironment, help };
}

/** How an option is named in messages: `--lifetime`, or `KOPF_FREEZE_LIFETIME` when it came from there. */
export function optionName(command: string, parsed: ParsedCommand, long: string): string {
  return parsed.fromEnvironment.has(long) ? envName(command, long) : `--${long}`;
}

/** The options of the scope: `-n/--namespace` (repeatable) and `-A/--all-namespaces`. */
export const SCOPE_OPTIONS: readonly OptionSpec[] = [
  { long: "namespace", short: "n", type: "string", multiple: true, env: false },
  { long: "all-namespaces", short: "A", type: "boolean", env: false },
];

/** The logging options, on every command. */
export const LOGGING_OPTIONS: readonly OptionSpec[] = [
  { long: "verbose", short: "v", type: "boolean" },
  { long: "debug", short: "d", type: "boolean" },
  { long: "quiet", short: "q", type: "boolean" },
  { long: "log-format", type: "string" },
  { long: "log-prefix", type: "boolean", env: false },
  { long: "no-log-prefix", type: "boolean", env: false },
];

/** The resolved scope. */
export interface Scope {
  /** The namespaces (`-n`, plus `KOPF_<COMMAND>_NAMESPACE`). */
  namespaces: string[];
  /** All namespaces (`-A`, or `KOPF_<COMMAND>_ALL_NAMESPACES`). */
  clusterwide: boolean;
}

/**
 * Resolves the scope. `KOPF_<COMMAND>_NAMESPACE` holds extra namespaces (space-separated) added
 * to those of `-n`, as Kopf's legacy variable does; `KOPF_<COMMAND>_ALL_NAMESPACES` is the
 * default of `-A`. The command line wins: `-A` ignores the variable's namespaces, `-n` ignores
 * `..._ALL_NAMESPACES`. `-n` with `-A` on the command line (or both variables) is a usage error.
 */
export function resolveScope(command: string, parsed: ParsedCommand, env: Environment, usage: string): Scope {
  const given = (parsed.values.namespace as string[] | undefined) ?? [];
  const all = parsed.values["all-namespaces"] === true;
  if (given.length && all) {
    throw new UsageError("Either --namespace or --all-namespaces can be used, not both.", usage);
  }
  if (parsed.help) return { namespaces: given, clusterwide: all };
  if (all) return { namespaces: [], clusterwide: true };
  const extraName = envName(command, "namespace");
  const extra = envList(env, extraName) ?? [];
  const namespaces = [...new Set([...given, ...extra])];
  if (given.length) return { namespaces, clusterwide: false };
  const allName = envName(command, "all-namespaces");
  const allFromEnv = envFlag(env, allName, usage) ?? false;
  if (extra.length && allFromEnv) {
    throw new UsageError(`Either ${extraName} or ${allName} can be set, not both.`, usage);
  }
  return { namespaces, clusterwide: allFromEnv };
}

/** The resolved logging options. */
export interface Logging {
  level: "debug" | "info" | "warning";
  format: LogFormat;
  prefix?: boolean;
}

const FORMATS: readonly LogFormat[] = ["plain", "full", "json"];

/**
 * Resolves the logging options: `-v`/`-d` (debug), `-q` (warnings), `--log-format`, and
 * `--log-prefix`/`--no-log-prefix` (`KOPF_<COMMAND>_LOG_PREFIX=true|false` when neither is given).
 */
export function resolveLogging(command: string, parsed: ParsedCommand, env: Environment, usage: string): Logging {
  const values = parsed.values;
  const raw = values["log-format"] as string | undefined;
  const format = (raw ?? "full") as LogFormat;
  if (!FORMATS.includes(format)) {
    throw new UsageError(
      `${optionName(command, parsed, "log-format")} must be one of ${FORMATS.join(", ")}, not "${raw}".`,
      usage,
    );
  }
  if (values["log-prefix"] && values["no-log-prefix"]) {
    throw new UsageError("Either --log-prefix or --no-log-prefix can be used, not both.", usage);
  }
  const prefix = values["log-prefix"]
    ? true
    : values["no-log-prefix"]
    ? false
    : parsed.help
    ? undefined
    : envFlag(env, envName(command, "log-prefix"), usage);
  const level = values.verbose || values.debug ? "debug" : values.quiet ? "warning" : "info";
  return { level, format, prefix };
}

/**
 * An integer option (`--priority`, `--lifetime`): decimal digits with an optional sign.
 *
 * @returns The number, or `undefined` when the option is not given.
 */
export function integerOption(
  command: string,
  parsed: ParsedCommand,
  long: string,
  usage: string,
  { min }: { min?: number } = {},
): number | undefined {
  const raw = parsed.values[long] as string | undefined;
  if (raw === undefined) return undefined;
  const name = optionName(command, parsed, long);
  if (!/^[+-]?\d+$/.test(raw.trim())) throw new UsageError(`${name} must be an integer, not "${raw}".`, usage);
  const value = Number(raw.trim());
  if (!Number.isSafeInteger(value)) throw new UsageError(`${name} is out of range: ${raw}.`, usage);
  if (min !== undefined && value < min) throw new UsageError(`${name} must be at least ${min}, not ${raw}.`, usage);
  return value;
}

/**
 * The priority from `-p/--priority N` or `--dev` (666): both on the command line is a usage
 * error; the command line wins over `KOPF_<COMMAND>_PRIORITY`/`_DEV`.
 *
 * @returns The priority, or `undefined` when neither is given.
 */
export function resolvePriority(
  command: string,
  parsed: ParsedCommand,
  usage: string,
  devPriority: number,
): number | undefined {
  const priorityFromEnv = parsed.fromEnvironment.has("priority");
  const devFromEnv = parsed.fromEnvironment.has("dev");
  const priorityGiven = parsed.values.priority !== undefined;
  const dev = parsed.values.dev === true;
  if (priorityGiven && dev) {
    if (priorityFromEnv && !devFromEnv) return devPriority; // --dev on the command line wins.
    if (devFromEnv && !priorityFromEnv) return integerOption(command, parsed, "priority", usage);
    const [a, b] = [optionName(command, parsed, "priority"), optionName(command, parsed, "dev")];
    throw new UsageError(`Either ${a} or ${b} can be used, not both.`, usage);
  }
  if (dev) return devPriority;
  return integerOption(command, parsed, "priority", usage);
}

/** A peering name must be a valid object name (a DNS subdomain: lower-case letters, digits, `-` and `.`). */
export function checkPeeringName(command: string, parsed: ParsedCommand, usage: string): string | undefined {
  const name = parsed.values.peering as string | undefined;
  if (name === undefined) return undefined;
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name)) {
    throw new UsageError(
      `${optionName(command, parsed, "peering")} must be the name of a peering object ` +
        `(lower-case letters, digits, "-" and "."), not "${name}".`,
      usage,
    );
  }
  return name;
}

/** node's parseArgs messages carry a hint about `--` that does not apply here; keep the first sentence. */
export function cleanParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split(". ")[0].replace(/\.$/, "") + ".";
}
