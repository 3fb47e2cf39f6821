/**
 * Parsing the options of `kopf run` into what the operator needs.
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { LogFormat } from "@kopf/kopf";
import { RUN_USAGE, UsageError } from "./usage.ts";

/** The parsed command line of `kopf run`. */
export interface RunOptions {
  files: string[];
  modules: string[];
  namespaces: string[];
  clusterwide: boolean;
  standalone: boolean;
  context?: string;
  /** The liveness endpoint URL (`-L/--liveness`), e.g. `http://0.0.0.0:8080/healthz`. */
  liveness?: string;
  level: "debug" | "info" | "warning";
  format: LogFormat;
  prefix?: boolean;
  help: boolean;
}

const FORMATS: readonly LogFormat[] = ["plain", "full", "json"];

/** Parses the arguments after `run`; throws a {@linkcode UsageError} for anything it cannot accept. */
export function parseRunOptions(args: string[]): RunOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        module: { type: "string", short: "m", multiple: true },
        namespace: { type: "string", short: "n", multiple: true },
        "all-namespaces": { type: "boolean", short: "A" },
        standalone: { type: "boolean" },
        context: { type: "string" },
        liveness: { type: "string", short: "L" },
        verbose: { type: "boolean", short: "v" },
        debug: { type: "boolean", short: "d" },
        quiet: { type: "boolean", short: "q" },
        "log-format": { type: "string" },
        "log-prefix": { type: "boolean" },
        "no-log-prefix": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new UsageError(cleanParseError(error), RUN_USAGE);
  }
  const values = parsed.values;
  const format = (values["log-format"] ?? "full") as LogFormat;
  if (!FORMATS.includes(format)) {
    throw new UsageError(
      `--log-format must be one of ${FORMATS.join(", ")}, not "${values["log-format"]}".`,
      RUN_USAGE,
    );
  }
  const namespaces = values.namespace ?? [];
  if (namespaces.length && values["all-namespaces"]) {
    throw new UsageError("Either --namespace or --all-namespaces can be used, not both.", RUN_USAGE);
  }
  if (values["log-prefix"] && values["no-log-prefix"]) {
    throw new UsageError("Either --log-prefix or --no-log-prefix can be used, not both.", RUN_USAGE);
  }
  if (values.liveness !== undefined) checkLiveness(values.liveness);
  const options: RunOptions = {
    files: parsed.positionals,
    modules: values.module ?? [],
    namespaces,
    clusterwide: values["all-namespaces"] ?? false,
    standalone: values.standalone ?? false,
    context: values.context,
    liveness: values.liveness,
    level: values.verbose || values.debug ? "debug" : values.quiet ? "warning" : "info",
    format,
    prefix: values["log-prefix"] ? true : values["no-log-prefix"] ? false : undefined,
    help: values.help ?? false,
  };
  if (!options.help && options.files.length === 0 && options.modules.length === 0) {
    throw new UsageError("Nothing to run: give handler files or -m modules.", RUN_USAGE);
  }
  return options;
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

/** node's parseArgs messages carry a hint about `--` that does not apply here; keep the first sentence. */
function cleanParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split(". ")[0].replace(/\.$/, "") + ".";
}
