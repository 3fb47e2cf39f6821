/**
 * Sends the framework's log records to the console in Kopf's formats. The CLI calls it; an
 * embedding program may call it, or configure LogTape itself (the records' category is `kopf`);
 * `operator()` calls it with the defaults when the program has done neither.
 *
 * @module
 */

import {
  type Config,
  configure,
  getConfig,
  getLogger,
  type LogLevel,
  type LogRecord,
  type Sink,
} from "@logtape/logtape";
import type { ObjectRef } from "./object_ref.ts";
import { activeTraceIds } from "../observability/tracing.ts";
import { immediateSink, isImmediateSink } from "./immediate_sink.ts";
import { flushStderrLines, stderrLines } from "./line_buffer.ts";
import { processGlobal } from "../utils/process_global.ts";

/** How log lines look: `full` (time, logger, level, message), `plain` (message only), `json` (one object per line). */
export type LogFormat = "full" | "plain" | "json";

/** Options of {@linkcode configureLogging}. */
export interface LoggingOptions {
  /** The lowest level shown; `info` by default. */
  level?: LogLevel;
  /** The line format; `full` by default. */
  format?: LogFormat;
  /** Prefix object-related messages with `[namespace/name]`; on by default except for `json`. */
  prefix?: boolean;
  /** Where lines go; stderr by default, in batches written asynchronously (see `line_buffer.ts`). */
  write?: (line: string) => void;
  /**
   * A sink that receives every object-related record whatever the console level: the operator's
   * `postingSink`, which posts them as Kubernetes Events when `settings.posting.loggers` is on.
   */
  postingSink?: Sink;
}

const LEVELS: readonly LogLevel[] = ["trace", "debug", "info", "warning", "error", "fatal"];

const LEVEL_NAMES: Record<LogLevel, string> = {
  trace: "DEBUG",
  debug: "DEBUG",
  info: "INFO",
  warning: "WARNING",
  error: "ERROR",
  fatal: "CRITICAL",
};

const SEVERITIES: Record<LogLevel, string> = {
  trace: "debug",
  debug: "debug",
  info: "info",
  warning: "warn",
  error: "error",
  fatal: "fatal",
};

/** Waits until the log lines written to stderr so far are out: before the process exits or prints on its own. */
export function flushLogging(): Promise<void> {
  return flushStderrLines();
}

/**
 * The changes of the configuration made here, one after another. LogTape refuses to be configured
 * while it is being configured, and several operators in one process configure the default logging
 * at the same moment: each change waits for the previous one. Once per process, as LogTape's own
 * configuration is, also when two copies of this library are loaded.
 */
const changes = processGlobal("logging-changes", 1, () => ({ last: Promise.resolve() as Promise<unknown> }));

/**
 * The configuration applied here last and its console's level: while LogTape still holds that
 * configuration, a record that is never posted (`local`) is shown only at that level or above.
 * Once per process, as LogTape's configuration is.
 */
const applied = processGlobal("logging-applied", 1, () => ({ config: null as unknown, lowest: "info" as LogLevel }));

/**
 * The sinks that the configuration made here last sends the records of objects' loggers to (category
 * `kopf.objects`): the console, and the posting sink if there is one and it reads records at once.
 * Once per process, as LogTape's configuration is; `null` sinks when that configuration cannot be served
 * without LogTape (see {@linkcode emitObjectRecord}). Its own `config`, not `applied`'s: an older copy of
 * the library that configures logging sets `applied` alone, and its configuration then goes through LogTape.
 */
const routes = processGlobal("logging-routes", 1, () => ({
  config: null as unknown,
  console: null as Sink | null,
  posting: null as Sink | null,
}));

const OBJECTS_CATEGORY: readonly string[] = ["kopf", "objects"];

/**
 * Hands a record of an object's logger (category `kopf.objects`, a literal message) straight to the
 * sinks that the configuration made here sends it to, while that is LogTape's configuration: the
 * console, at its level, then the posting sink, at every level (it applies `settings.posting.level`
 * itself) -- the record and the order that LogTape's dispatch gives them under that configuration,
 * which has no filters, implicit contexts or category prefixes. LogTape's dispatch runs some 25
 * functions per record: one created object's cycles run 158 distinct functions this way, 194 through
 * it. At a LocalCluster's pace, where a cycle costs the code it runs from cold caches, the lean preset
 * spent 6-10% less CPU per object on the scripted server in paired rounds (docs/performance/cpu.md,
 * "The log lines without LogTape's dispatch").
 *
 * @returns `false` when the program has configured LogTape itself: the caller logs through LogTape then.
 */
export function emitObjectRecord(level: LogLevel, message: string, properties: Record<string, unknown>): boolean {
  if (getConfig() !== routes.config || routes.config === null) return false;
  const shown = LEVELS.indexOf(level) >= LEVELS.indexOf(applied.lowest);
  if (!shown && !routes.posting) return true;
  const record: LogRecord = {
    category: OBJECTS_CATEGORY,
    level,
    message: [message],
    rawMessage: [message] as unknown as TemplateStringsArray,
    timestamp: Date.now(),
    properties,
  };
  // Each sink in a `try` of its own, as LogTape gives them the record; not through a helper, a call
  // more per record.
  if (shown) {
    try {
      routes.console!(record);
    } catch (error) {
      sinkFailed(routes.console!, record, error);
    }
  }
  if (routes.posting) {
    try {
      routes.posting(record);
    } catch (error) {
      sinkFailed(routes.posting, record, error);
    }
  }
  return true;
}

/** A sink that failed, reported as LogTape reports it: to its meta logger. */
function sinkFailed(sink: Sink, record: LogRecord, error: unknown): void {
  getLogger(["logtape", "meta"]).fatal("Failed to emit a log record to sink {sink}: {error}", { sink, error, record });
}

/**
 * Whether a record that is never posted as an Event (marked `local`) at `level` reaches any sink,
 * so that one nobody reads is not made at all (its properties can cost more than the line:
 * a masked copy of a patch, per written object). Under the configuration made here, only the
 * console's level decides; when the program has configured LogTape itself, it may reach a sink.
 */
export function localRecordShown(level: LogLevel): boolean {
  if (getConfig() !== applied.config) return true;
  return LEVELS.indexOf(level) >= LEVELS.indexOf(applied.lowest);
}

/** Runs a change of the LogTape configuration after those already queued. */
function inTurn<T>(change: () => Promise<T>): Promise<T> {
  const result = changes.last.then(change);
  changes.last = result.catch(() => {});
  return result;
}

/**
 * Routes the `kopf` log category to the console; replaces an earlier configuration made here.
 * Calls made at the same time (e.g. by several operators in one process) take effect one after
 * another, in the order of the calls.
 */
export function configureLogging(options: LoggingOptions = {}): Promise<void> {
  return inTurn(() => applyLogging(options));
}

async function applyLogging(options: LoggingOptions): Promise<void> {
  const format = options.format ?? "full";
  const prefix = options.prefix ?? format !== "json";
  const write = options.write;
  // The process's stderr found once, not at every line: each function a line runs costs at a
  // LocalCluster's pace (docs/performance/cpu.md, "Fewer functions, a second pass").
  const lines = write === undefined ? stderrLines() : undefined;
  const posting = options.postingSink;
  const lowest = options.level ?? "info";
  // The console checks its own level: records reach it also through the posting logger's lower one.
  const consoleSink = immediateSink((record: LogRecord) => {
    if (LEVELS.indexOf(record.level) < LEVELS.indexOf(lowest)) return;
    const line = formatRecord(record, format, prefix);
    if (lines !== undefined) lines.write(line);
    else write!(line);
  });
  const config: Config<string, string> = {
    reset: true,
    sinks: { console: consoleSink, ...(posting ? { posting } : {}) },
    loggers: [
      { category: ["kopf"], lowestLevel: lowest, sinks: ["console"] },
      ...(posting ? [{ category: ["kopf", "objects"], lowestLevel: "trace" as const, sinks: ["posting"] }] : []),
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: ["console"] },
    ],
  };
  await configure(config);
  applied.config = config;
  applied.lowest = lowest;
  // A posting sink that keeps records for later needs LogTape's copy of each: such a configuration goes through LogTape.
  const direct = !posting || isImmediateSink(posting);
  routes.config = direct ? config : null;
  routes.console = direct ? consoleSink : null;
  routes.posting = direct ? posting ?? null : null;
}

/**
 * Configures logging as the CLI does (Kopf's `full` format on stderr, level info) unless the
 * program has configured LogTape itself: an embedded operator (`kopf.operator()`) then prints its
 * own and its handlers' messages as `kopf run` would, and a program with its own logging keeps it.
 *
 * Idempotent for the process: the check and the change are one step in the queue of
 * {@linkcode configureLogging}'s changes, so of several operators starting at once, the first one
 * configures and the others keep what it has configured. Nothing undoes it when an operator stops:
 * the others, and the program, go on logging.
 *
 * @param options As for {@linkcode configureLogging}.
 * @returns Whether it has configured logging.
 */
export function configureDefaultLogging(options: LoggingOptions = {}): Promise<boolean> {
  return inTurn(async () => {
    if (getConfig() !== null) return false;
    await applyLogging(options);
    return true;
  });
}

/** Renders one record as a line of the given format. */
export function formatRecord(record: LogRecord, format: LogFormat, prefix: boolean): string {
  const ref = record.properties.object as ObjectRef | undefined;
  // The object loggers' records are one literal text: no parts to render.
  let message = record.message.length === 1 ? String(record.message[0]) : renderMessage(record.message);
  const error = record.properties.error;
  // An exception's stack goes below the line; any other value only when the message does not show it already.
  if (error instanceof Error) message += `\n${error.stack ?? error.message}`;
  else if (error !== undefined && !record.message.includes(error)) message += `\n${String(error)}`;
  if (prefix && ref?.name) message = `[${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}] ${message}`;
  if (format === "json") {
    const line: Record<string, unknown> = {
      message,
      timestamp: new Date(record.timestamp).toISOString(),
      severity: SEVERITIES[record.level],
      logger: record.category.join("."),
    };
    if (ref) line.object = ref;
    const ids = activeTraceIds();
    if (ids) Object.assign(line, ids);
    return JSON.stringify(line);
  }
  if (format === "plain") return message;
  // The helpers called only when what they make is not at hand: every line of every object is formatted here.
  // The time as Python's logging prints it (`2026-11-22 01:23:45,678`, local time).
  const { timestamp: ms, category } = record;
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond.second) formatSecond(second);
  const millis = ms - second * 1000;
  const time = `${lastSecond.text},${millis < 10 ? "00" : millis < 100 ? "0" : ""}${Math.floor(millis)}`;
  const column = CATEGORY_COLUMNS.get(category) ?? columnOf(category);
  return `[${time}] ${column} [${LEVEL_COLUMNS[record.level]}] ${message}`;
}

/** The logger's column of a `full` line, made once per logger (each keeps its category array). */
function columnOf(category: readonly string[]): string {
  const column = category.join(".").padEnd(20).slice(0, 20);
  CATEGORY_COLUMNS.set(category, column);
  return column;
}

const CATEGORY_COLUMNS = new WeakMap<readonly string[], string>();

const LEVEL_COLUMNS = Object.fromEntries(
  LEVELS.map((level) => [level, LEVEL_NAMES[level].padEnd(8).slice(0, 8)]),
) as Record<LogLevel, string>;

function renderMessage(parts: readonly unknown[]): string {
  return parts.map((part, index) => index % 2 === 0 ? String(part) : renderValue(part)).join("");
}

function renderValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof Error) return value.message;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * `2026-11-22 01:23:45` in local time, for lines within that second (since the epoch). Lines come in
 * runs within the same second: the date and time are formatted once per second.
 */
function formatSecond(second: number): void {
  const date = new Date(second * 1000);
  lastSecond.second = second;
  lastSecond.text = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

const lastSecond = { second: NaN, text: "" };

function pad(value: number): string {
  return String(value).padStart(2, "0");
}
