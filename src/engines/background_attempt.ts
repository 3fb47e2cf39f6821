/**
 * One call of a daemon or timer: its context with live views of the object, the retry rules of
 * handlers (timeout, retries, errors modes, backoff), and the delivery of its result and `patch`
 * right after the call -- unless they would change nothing, in which case nothing is sent.
 *
 * @module
 */

import type { ApiClient } from "../api/client.ts";
import { applyPatch } from "../api/patching.ts";
import type { KubernetesObject } from "../model/body.ts";
import type { Indices } from "../model/index_store.ts";
import { patchHeld, patchInconsistencies } from "../model/inconsistencies.ts";
import { maskDiff, type SensitiveFields } from "../state/sensitive.ts";
import { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import type { ObjectLogger } from "../logging/object_logger.ts";
import { type BackgroundContext, contextMemo, type Memo } from "../handling/context.ts";
import { currentApi } from "../handling/current_api.ts";
import { runWithObject } from "../handling/current_object.ts";
import { runWithDeadline } from "../handling/deadlines.ts";
import { HandlerRetriesError, HandlerTimeoutError } from "../handling/errors.ts";
import { judgeFailure } from "../handling/failures.ts";
import { storeResult } from "../handling/results.ts";
import type { BackgroundHandler } from "../handling/handlers.ts";
import type { LiveBody } from "../handling/live_body.ts";

/** What a call needs besides the handler. */
export interface AttemptDeps {
  client: ApiClient;
  resource: Resource;
  live: LiveBody;
  memo: Memo;
  indices: Indices;
  defaultBackoff: number;
  /** The `timeout` of timers that set none (`settings.execution.handlerTimeout`); daemons run unbounded by default. */
  handlerTimeout?: number | null;
  /** The object's logger (one for all calls: the object's identity does not change). */
  logger: ObjectLogger;
  /** The resource's fields whose values never reach the logs. */
  sensitive: SensitiveFields;
}

/** How a call ended: done (success or ignored error), to be retried after `delay` seconds, or failed for good. */
export type AttemptOutcome =
  | { kind: "success" }
  | { kind: "retry"; delay: number }
  | { kind: "failed" };

/** The word that names a handler of this kind in log lines. */
export function title(handler: BackgroundHandler): string {
  return handler.kind === "daemon" ? "Daemon" : "Timer";
}

/**
 * Calls the handler once (or gives it up first if its timeout or retries are used up), delivers
 * its result and patch, and says what comes next.
 *
 * @param retry failed calls since the last success.
 * @param started when the first of those calls started.
 */
export async function attemptBackground(
  handler: BackgroundHandler,
  stopped: AbortSignal,
  retry: number,
  started: Date,
  deps: AttemptDeps,
): Promise<AttemptOutcome> {
  const { id } = handler;
  const fallback = handler.kind === "timer" ? deps.handlerTimeout ?? undefined : undefined;
  const options = { ...handler.options, timeout: handler.options.timeout ?? fallback };
  const label = `${title(handler)} '${id}'`;
  const body = deps.live.current;
  const logger = deps.logger;
  const patch = new Patch();
  const runtime = Date.now() - started.getTime();
  let error: unknown;
  let result: unknown;
  if (options.timeout !== undefined && runtime >= options.timeout * 1000) {
    error = new HandlerTimeoutError(`${label} has timed out after ${(runtime / 1000).toFixed(1)} s.`);
  } else if (options.retries !== undefined && retry >= options.retries) {
    error = new HandlerRetriesError(`${label} has exceeded ${options.retries} retries.`);
  } else {
    const extra = { patch, logger, param: options.param, stopped, retry, started, runtime };
    const { timeout } = options;
    const deadline = timeout === undefined ? undefined : started.getTime() + timeout * 1000;
    try {
      result = await runWithDeadline(
        (signal) => runWithObject(body, () => handler.fn(backgroundContext(deps, { ...extra, signal: signal() }))),
        { label, deadline, timeout, signal: stopped, logger },
      );
      if (result !== undefined && result !== null) storeResult(patch, id, result);
    } catch (caught) {
      error = caught;
    }
  }
  await deliver(patch, logger, deps);

  if (error === undefined) {
    logger.info(`${label} succeeded.`);
    return { kind: "success" };
  }
  const verdict = judgeFailure(error, {
    label,
    options,
    logger,
    defaultBackoff: deps.defaultBackoff,
    retries: retry,
    elapsed: Date.now() - started.getTime(),
  });
  return verdict.kind === "ignored" ? { kind: "success" } : verdict;
}

/** The context of a call: the object's fields are live views, so long-running code sees fresh values. */
function backgroundContext(
  deps: AttemptDeps,
  extra: Pick<BackgroundContext, "patch" | "logger" | "param" | "stopped" | "signal" | "retry" | "started" | "runtime">,
): BackgroundContext {
  const { live } = deps;
  const meta = live.current.metadata;
  return {
    ...live.views,
    uid: meta.uid,
    name: meta.name,
    namespace: meta.namespace,
    memo: contextMemo(deps.memo),
    resource: deps.resource,
    indices: deps.indices,
    api: currentApi(),
    ...extra,
  };
}

/** Sends the call's patch, unless the object already has everything in it. */
async function deliver(patch: Patch, logger: ObjectLogger, deps: AttemptDeps): Promise<void> {
  if (patch.empty) return;
  const body: KubernetesObject = deps.live.current;
  const wanted = patch.toMergePatch();
  if (patchHeld(wanted, body)) return;
  try {
    const result = await applyPatch(deps.client, deps.resource, body, patch);
    const inconsistencies = result && !patchHeld(wanted, result) ? patchInconsistencies(wanted, result) : [];
    if (inconsistencies.length) {
      const shown = maskDiff(inconsistencies, deps.sensitive, body.metadata.uid ?? "");
      logger.warning(`Patching failed with inconsistencies: ${JSON.stringify(shown)}`);
    }
  } catch (error) {
    logger.exception("Failed to patch the object with the results of a daemon or timer.", error);
  }
}
