/**
 * Daemons: a long-running function per object, started when the object appears (or when the
 * operator starts) and stopped when it is deleted, stops matching the filters, or the operator
 * exits. A daemon is told to stop through its `stopped` signal: JavaScript cannot interrupt a
 * function from outside, so a daemon that ignores the signal is left running ("orphaned") after
 * its `cancellationTimeout`.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

// A daemon that fails a few times before it works (retried like any handler: after a TemporaryError's
// `delay`, or `backoff` seconds after other errors), accompanies its object for a while, and then
// exits by itself: it is not restarted.
// Its `patch` is applied when each attempt ends, so the status tells how the attempts went.
kopf.daemon("kopfexamples", { backoff: 3 }, async function accompany({ retry, spec, patch, stopped, logger }) {
  if (retry < 3) {
    patch.status.message = `Failed ${retry + 1} times.`;
    throw new kopf.TemporaryError("Simulated failure.", { delay: 1 });
  }
  const until = Date.now() + 30_000;
  while (!stopped.aborted && Date.now() < until) {
    logger.info(`=> Ping from a daemon: field=${JSON.stringify(spec.field)}, retry=${retry}`);
    await kopf.sleep(5, stopped); // Returns early when the daemon is asked to stop.
  }
  patch.status.message = "Accompanying is finished.";
});

// A daemon that runs until it is stopped, for annotated objects only. Every wait is given the
// `stopped` signal, so the daemon notices its stop at once; `stopped.reason` says why it stops.
// Were it ever stuck, the operator would give it 1 s to exit on its own (`cancellationBackoff`) and
// 0.5 s more once cancelled (`cancellationTimeout`), then leave it orphaned and go on: without a
// timeout, the object's deletion would wait for it.
kopf.daemon(
  "kopfexamples",
  { annotations: { someannotation: "somevalue" }, cancellationBackoff: 1, cancellationTimeout: 0.5 },
  async function watchdog({ spec, stopped, logger }) {
    while (!stopped.aborted) {
      logger.info(`=> Ping from a watchdog: field=${JSON.stringify(spec.field)}`);
      await kopf.sleep(5, stopped);
    }
    const causes = stopped.reason instanceof kopf.StopReason ? stopped.reason.causes.join(", ") : "unknown";
    logger.info(`=> The watchdog is stopped: ${causes}.`);
  },
);
