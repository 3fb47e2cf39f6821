/**
 * The `kopf` command: `kopf run handlers.ts` runs an operator from handler files; `kopf freeze`
 * and `kopf resume` pause and resume the operators of a peering.
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

import * as kopf from "@kopf/kopf";
import { freeze, resume } from "@kopf/kopf/peering";
import { loadHandlers, LoadingError } from "./loading.ts";
import type { Logging } from "./options.ts";
import { parseFreezeOptions, parseResumeOptions } from "./peering_options.ts";
import { parseRunOptions } from "./run_options.ts";
import { FREEZE_HELP, MAIN_HELP, MAIN_USAGE, RESUME_HELP, RUN_HELP, UsageError } from "./usage.ts";
import denoJson from "./deno.json" with { type: "json" };

/**
 * Exit codes: 0 success (also after a graceful stop by SIGINT/SIGTERM), 1 a failure while running
 * (e.g. a startup handler failed for good, a peering object is missing), 2 a usage error (as
 * Click, which Kopf uses, does). A second SIGINT/SIGTERM
 * while stopping exits at once with 130/143, from within the operator.
 */
export type ExitCode = 0 | 1 | 2;

/**
 * Runs the command line and returns the exit code; prints errors as one line prefixed `kopf:`
 * (usage errors as the usage, a hint, and the one-line reason).
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
    if (command === "--version" || command === "-V") {
      console.log(`kopf ${denoJson.version}`);
      return 0;
    }
    switch (command) {
      case "run":
        return await run(rest);
      case "freeze":
        return await freezeCommand(rest);
      case "resume":
        return await resumeCommand(rest);
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

async function run(args: string[]): Promise<ExitCode> {
  const options = parseRunOptions(args);
  if (options.help) {
    console.log(RUN_HELP);
    return 0;
  }
  await configure(options);
  await loadHandlers(options.files, options.modules);
  const settings = new kopf.Settings();
  if (options.leaderElection) {
    const { leaseName, leaseNamespace, leaseDuration, renewDeadline, retryPeriod } = options.leaderElection;
    const election = settings.leaderElection;
    election.enabled = true;
    election.leaseName = leaseName ?? election.leaseName;
    election.leaseNamespace = leaseNamespace ?? election.leaseNamespace;
    election.leaseDuration = leaseDuration ?? election.leaseDuration;
    election.renewDeadline = renewDeadline ?? election.renewDeadline;
    election.retryPeriod = retryPeriod ?? election.retryPeriod;
  }
  await kopf.operator({
    namespaces: options.namespaces,
    clusterwide: options.clusterwide,
    standalone: options.standalone,
    priority: options.priority,
    peeringName: options.peering,
    settings,
    context: options.context,
    liveness: options.liveness,
    metrics: options.metrics,
  });
  return 0;
}

async function freezeCommand(args: string[]): Promise<ExitCode> {
  const options = parseFreezeOptions(args);
  if (options.help) {
    console.log(FREEZE_HELP);
    return 0;
  }
  await configure(options);
  await freeze({
    peering: options.peering,
    clusterwide: options.clusterwide && !options.scopeDefaulted,
    namespaces: options.namespaces,
    id: options.id,
    context: options.context,
    lifetime: options.lifetime,
    priority: options.priority,
    message: options.message,
  });
  return 0;
}

async function resumeCommand(args: string[]): Promise<ExitCode> {
  const options = parseResumeOptions(args);
  if (options.help) {
    console.log(RESUME_HELP);
    return 0;
  }
  await configure(options);
  await resume({
    peering: options.peering,
    clusterwide: options.clusterwide && !options.scopeDefaulted,
    namespaces: options.namespaces,
    id: options.id,
    context: options.context,
  });
  return 0;
}

function configure(logging: Logging): Promise<void> {
  return kopf.configureLogging({
    level: logging.level,
    format: logging.format,
    prefix: logging.prefix,
    postingSink: kopf.postingSink,
  });
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
