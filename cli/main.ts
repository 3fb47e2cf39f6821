/**
 * The `kopf` command: `kopf run handlers.ts` runs an operator from handler files.
 *
 * @example
 * ```sh
 * deno run -A jsr:@kopf/cli run -A --standalone handlers.ts
 * ```
 *
 * @module
 */

import * as kopf from "@kopf/kopf";
import { loadHandlers, LoadingError } from "./loading.ts";
import { parseRunOptions } from "./run_options.ts";
import { MAIN_HELP, MAIN_USAGE, RUN_HELP, UsageError } from "./usage.ts";
import denoJson from "./deno.json" with { type: "json" };

/**
 * Exit codes: 0 success (also after a graceful stop by SIGINT/SIGTERM), 1 a failure while running
 * (e.g. a startup handler failed for good), 2 a usage error (as Click, which Kopf uses, does). A
 * second SIGINT/SIGTERM while stopping exits at once with 130/143, from within the operator.
 */
export type ExitCode = 0 | 1 | 2;

/**
 * Runs the command line and returns the exit code; prints errors as one line prefixed `kopf:`.
 *
 * @param args the arguments after the program name.
 */
export async function main(args: string[]): Promise<ExitCode> {
  try {
    const [command, ...rest] = args;
    if (command === undefined || command === "--help" || command === "-h") {
      console.log(MAIN_HELP);
      return command === undefined ? 2 : 0;
    }
    if (command === "--version") {
      console.log(`kopf ${denoJson.version}`);
      return 0;
    }
    if (command !== "run") throw new UsageError(`No such command: ${command}.`, MAIN_USAGE);
    const options = parseRunOptions(rest);
    if (options.help) {
      console.log(RUN_HELP);
      return 0;
    }
    await kopf.configureLogging({
      level: options.level,
      format: options.format,
      prefix: options.prefix,
      postingSink: kopf.postingSink,
    });
    await loadHandlers(options.files, options.modules);
    await kopf.operator({
      namespaces: options.namespaces,
      clusterwide: options.clusterwide,
      standalone: options.standalone,
      context: options.context,
      liveness: options.liveness,
    });
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(
        `${error.usage}\nTry 'kopf ${
          error.usage.includes(" run ") ? "run " : ""
        }--help' for help.\n\nError: ${error.message}`,
      );
      return 2;
    }
    if (error instanceof LoadingError) {
      console.error(`kopf: ${error.message}`);
      return 1;
    }
    console.error(`kopf: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
