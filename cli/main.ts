/**
 * The `kopf` command: `kopf run handlers.ts` runs an operator from handler files; `kopf freeze`
 * and `kopf resume` pause and resume the operators of a peering; `kopf init`, `kopf build` and
 * `kopf generate` make a project, a bundle, manifests and types.
 *
 * @example
 * ```sh
 * deno run -A jsr:@kopf/cli run -A --standalone handlers.ts
 * deno run -A jsr:@kopf/cli freeze -A --peering=default --lifetime=600
 * deno run -A jsr:@kopf/cli resume -A --peering=default
 * ```
 *
 * @module
 */

// Only what it takes to trap the stop signals: the framework is imported after (commands.ts).
import { trapStopSignals } from "@kopf/kopf/signals";
import { LoadingError } from "./loading.ts";
import { warmUpTls } from "./tls_warmup.ts";
import { MAIN_HELP, MAIN_USAGE, UsageError } from "./usage.ts";
import denoJson from "./deno.json" with { type: "json" };

/**
 * Exit codes: 0 success (also after a graceful stop by SIGINT/SIGTERM), 1 a failure while running
 * (e.g. a startup handler failed for good, a peering object is missing, the handler files register
 * no handlers), 2 a usage error (as Click, which Kopf uses, does). A SIGINT/SIGTERM more than a
 * second after the first (a deliberate one, not a copy of the same Ctrl+C) exits at once with
 * 130/143, from within the operator.
 */
export type ExitCode = 0 | 1 | 2;

/** Options of {@linkcode main}. */
export interface MainOptions {
  /**
   * The handlers are registered already (a bundle made by `kopf build` imports them before the
   * CLI): `kopf run` needs no handler file then.
   */
  embedded?: boolean;
}

/**
 * Runs the command line and returns the exit code; prints errors as one line prefixed `kopf:`
 * (usage errors as the usage, a hint, and the one-line reason).
 *
 * @param args the arguments after the program name.
 * @param options how the CLI is started.
 */
export async function main(args: string[], options: MainOptions = {}): Promise<ExitCode> {
  try {
    const [command, ...rest] = args;
    if (command === undefined || command === "--help" || command === "-h") {
      console.log(MAIN_HELP);
      return command === undefined ? 2 : 0;
    }
    if (command === "--version" || command === "-V") {
      console.log(`kopf ${denoJson.version}`);
      return 0;
    }
    switch (command) {
      case "run": {
        // The first thing `kopf run` does: a stop while the framework and the handlers load is graceful.
        using stopping = trapStopSignals();
        warmUpTls();
        const { run } = await import("./commands.ts");
        return await run(rest, stopping.signal, options.embedded ?? false);
      }
      case "build":
        await (await import("./build.ts")).build(rest);
        return 0;
      case "init":
        await (await import("./init.ts")).init(rest);
        return 0;
      case "freeze":
        return await (await import("./commands.ts")).freezeCommand(rest);
      case "resume":
        return await (await import("./commands.ts")).resumeCommand(rest);
      case "generate":
        await (await import("./generate.ts")).generate(rest);
        return 0;
      default:
        throw new UsageError(`No such command: ${command}.`, MAIN_USAGE);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      const command = error.command ? `${error.command} ` : "";
      console.error(`${error.usage}\nTry 'kopf ${command}--help' for help.\n\nError: ${error.message}`);
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
