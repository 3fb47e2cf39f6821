/**
 * Activities: handlers of the operator's own life rather than of objects — startup (before any
 * object is handled; a failure stops the operator), cleanup (when it stops), login (where the
 * credentials come from) and probes (what the liveness endpoint reports).
 *
 * The operator keeps a background task per pod it sees, reports them in its probes, and stops
 * them all when it exits.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

/** The background tasks by "namespace/name", each with the controller that stops it. */
type Tasks = Map<string, AbortController>;

// The operator's memo is given to activities; each object's memo is a shallow copy of it made
// when the object is first seen — after startup — so all of them share this one Map.
function tasksOf(memo: kopf.AnyMemo): Tasks {
  return memo.tasks as Tasks;
}

// Startup handlers are also where settings are changed: here, the probes' results are reused for
// 1 s instead of 10 s, so that the liveness endpoint follows the pods closely.
kopf.on.startup(function startupFnSimple({ memo, settings, logger }) {
  logger.info("Initialising the task registry...");
  memo.tasks = new Map() satisfies Tasks;
  settings.process.probingMaxAge = 1;
});

// Startup handlers are retried like object handlers; nothing is watched until all have succeeded.
kopf.on.startup(function startupFnRetried({ retry, logger }) {
  if (retry < 3) throw new kopf.TemporaryError(`Going to succeed in ${3 - retry} s.`, { delay: 1 });
  logger.info("Starting retried...");
});

kopf.on.cleanup(function cleanupFn({ memo, logger }) {
  logger.info("Cleaning up...");
  for (const stopper of tasksOf(memo).values()) stopper.abort();
  logger.info("All pod tasks are requested to stop.");
});

// A login handler replaces the ready-made logins; it runs after the startup handlers. Here it is the kubeconfig's anyway; a real one
// would fetch a token from a vault. Its `errors: "permanent"` makes a failed login fatal at once.
kopf.on.login({ errors: "permanent" }, async function loginFn({ logger }) {
  logger.info("Logging in with the kubeconfig...");
  return await kopf.loginWithKubeconfig();
});

// Probe results are served as JSON by `--liveness`, keyed by the probe's id.
kopf.on.probe(function tasksCount({ memo }) {
  return tasksOf(memo).size;
});

kopf.on.probe(function monitoredObjects({ memo }) {
  const byNamespace: Record<string, string[]> = {};
  for (const key of [...tasksOf(memo).keys()].sort()) {
    const [namespace, name] = key.split("/");
    (byNamespace[namespace] ??= []).push(name);
  }
  return byNamespace;
});

kopf.on.event("pods", function podTask({ type, namespace, name, memo, logger }) {
  const tasks = tasksOf(memo);
  const key = `${namespace}/${name}`;
  if (type === "DELETED") {
    tasks.get(key)?.abort();
    tasks.delete(key);
  } else if (!tasks.has(key)) {
    const stopper = new AbortController();
    tasks.set(key, stopper);
    serve(logger, stopper.signal); // Not awaited: the task outlives this call of the handler.
  }
});

/** The background task of one pod: it runs until its signal aborts (pod deleted or operator stopping). */
async function serve(logger: kopf.HandlerLogger, signal: AbortSignal): Promise<void> {
  while (!await kopf.sleep(1 + Math.random() * 2, signal)) {
    logger.info("Served by the background task.");
  }
  logger.info("Serving is finished by request.");
}
