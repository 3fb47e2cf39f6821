/**
 * The bodies of the `kopf` commands, with everything they import (the whole framework). The entry
 * point imports this module only once it has trapped the stop signals, so that a SIGINT/SIGTERM
 * while the framework loads is a graceful stop too.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";
import { postingSink } from "@kopf/kopf/advanced";
import { freeze, resume } from "@kopf/kopf/peering";
import { getLogger } from "@logtape/logtape";
import { loadHandlers, LoadingError } from "./loading.ts";
import type { Logging } from "./options.ts";
import { parseFreezeOptions, parseResumeOptions } from "./peering_options.ts";
import { parseRunOptions } from "./run_options.ts";
import { FREEZE_HELP, RESUME_HELP, RUN_HELP } from "./usage.ts";

const logger = getLogger(["kopf", "operator"]);

/**
 * `kopf run`: loads the handler files and modules, then runs the operator until `stopping`
 * aborts (the process's stop signals) -- also while the files are still being imported.
 *
 * @param args The arguments after `run`.
 * @param stopping Aborted at the first SIGINT/SIGTERM.
 * @param embedded The handlers are registered already (a bundle of `kopf build`): no file is needed.
 * @returns The exit code: 0 also after a graceful stop.
 */
export async function run(args: string[], stopping: AbortSignal, embedded = false): Promise<0> {
  const options = parseRunOptions(args, undefined, embedded);
  if (options.help) {
    console.log(RUN_HELP);
    return 0;
  }
  return await logged(options, async (): Promise<0> => {
    if (stopping.aborted) return stoppedWhileStarting("before loading the handlers");
    // An import cannot be interrupted: a stop abandons it (the process exits without waiting).
    const loading = loadHandlers(options.files, options.modules);
    const stopped = new Promise<true>((resolve) => stopping.addEventListener("abort", () => resolve(true)));
    if (await Promise.race([loading.then(() => false), stopped])) {
      loading.catch(() => {});
      return stoppedWhileStarting("while importing the handlers");
    }
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
    if (options.sharding) {
      settings.sharding.group = options.sharding.group;
      settings.sharding.namespace = options.sharding.namespace ?? settings.sharding.namespace;
      settings.sharding.identity = options.sharding.identity ?? settings.sharding.identity;
    }
    try {
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
    } catch (error) {
      if (!(error instanceof kopf.NoHandlersError)) throw error;
      const loaded = [...options.files, ...options.modules.map((specifier) => `-m ${specifier}`)];
      throw new LoadingError(
        `${error.message} Loaded: ${loaded.join(", ") || "nothing (no handler files or -m modules are given)"}.`,
      );
    }
    return 0;
  });
}

function stoppedWhileStarting(when: string): 0 {
  logger.info(`The operator is stopped ${when}: nothing has run yet, nothing to clean up.`);
  return 0;
}

/**
 * `kopf freeze`: pauses the operators of a peering.
 *
 * @param args The arguments after `freeze`.
 * @returns The exit code.
 */
export async function freezeCommand(args: string[]): Promise<0> {
  const options = parseFreezeOptions(args);
  if (options.help) {
    console.log(FREEZE_HELP);
    return 0;
  }
  return await logged(options, async (): Promise<0> => {
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
  });
}

/**
 * `kopf resume`: resumes the operators of a peering.
 *
 * @param args The arguments after `resume`.
 * @returns The exit code.
 */
export async function resumeCommand(args: string[]): Promise<0> {
  const options = parseResumeOptions(args);
  if (options.help) {
    console.log(RESUME_HELP);
    return 0;
  }
  return await logged(options, async (): Promise<0> => {
    await resume({
      peering: options.peering,
      clusterwide: options.clusterwide && !options.scopeDefaulted,
      namespaces: options.namespaces,
      id: options.id,
      context: options.context,
    });
    return 0;
  });
}

/**
 * Runs a command's body after its logging is configured; its log lines are written out before it
 * returns or throws, so that the CLI's own last words (an error line) come after them.
 */
async function logged<T>(logging: Logging, body: () => Promise<T>): Promise<T> {
  await configure(logging);
  try {
    return await body();
  } finally {
    await kopf.flushLogging();
  }
}

function configure(logging: Logging): Promise<void> {
  return kopf.configureLogging({
    level: logging.level,
    format: logging.format,
    prefix: logging.prefix,
    postingSink,
    // JSON lines go to stdout, alone: what else is printed (the "Task kopf ..." line of `deno task`,
    // Deno's download notes, the CLI's own errors) goes to stderr, so a consumer parses stdout as is.
    ...(logging.format === "json" ? { write: (line: string) => console.log(line) } : {}),
  });
}
