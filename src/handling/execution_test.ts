// runCause's checkpoints and deadlines: what a slow cycle offers to write while a handler still
// runs, and how a handler past its timeout is recorded.

import assert from "node:assert/strict";
import type { KubernetesObject } from "../model/body.ts";
import { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import { Selector } from "../model/selector.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import { AnnotationsProgressStorage } from "../state/annotations_progress.ts";
import { decodeProgressRecord } from "../state/progress.ts";
import { parseTimestamp } from "../state/timestamps.ts";
import { sleep } from "../utils/sleep.ts";
import type { CauseOutcome, Checkpoint } from "./cause_run.ts";
import { runCause } from "./execution.ts";
import type { ChangeFn, ChangeHandler, ChangeHandlerOptions } from "./handlers.ts";
import { allAtOnce } from "./lifecycles.ts";

const RESOURCE: Resource = {
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
  singular: "kopfexample",
  namespaced: true,
  preferred: true,
  shortcuts: [],
  categories: [],
  verbs: [],
  subresources: ["status"],
};

function handler(id: string, fn: ChangeFn, options: ChangeHandlerOptions = {}): ChangeHandler {
  return {
    kind: "change",
    reason: "create",
    id,
    selector: new Selector("kopfexamples"),
    fn,
    options,
    field: undefined,
    requiresFinalizer: false,
    initial: false,
    deleted: false,
  };
}

async function cycle(
  handlers: ChangeHandler[],
  extra: { checkpoint?: Checkpoint; handlerTimeout?: number },
): Promise<{ outcome: CauseOutcome; patch: Patch }> {
  const body: KubernetesObject = { metadata: { name: "kex", namespace: "ns", uid: "u1" }, spec: {} };
  const patch = new Patch();
  const outcome = await runCause(handlers, {
    reason: "create",
    body,
    old: null,
    new: { spec: {} },
    diff: [],
    patch,
    logger: new ObjectLogger(body, { local: true }),
    memo: {},
    indices: {},
    resource: RESOURCE,
    storage: new AnnotationsProgressStorage({ v1: false }),
    lifecycle: allAtOnce,
    defaultBackoff: 60,
    ...extra,
  });
  return { outcome, patch };
}

function recorder(delay: number, first = delay): { checkpoint: Checkpoint; sent: Patch[] } {
  const sent: Patch[] = [];
  let next = Date.now() + first;
  const checkpoint: Checkpoint = {
    get at() {
      return next;
    },
    send: (patch, due) => {
      if (due !== next) return;
      next = Date.now() + delay;
      sent.push(patch);
    },
  };
  return { checkpoint, sent };
}

Deno.test("execution: a handler still running at the checkpoint offers the outcomes of those finished before it", async () => {
  const { checkpoint, sent } = recorder(20);
  const fastFn = handler("fastFn", () => ({ fast: true }));
  const slowFn = handler("slowFn", async () => {
    await sleep(0.2);
    return { slow: true };
  });
  const { outcome, patch } = await cycle([fastFn, slowFn], { checkpoint });
  assert.equal(outcome.done, true);
  assert.equal(sent.length, 1);
  const offered = sent[0].toMergePatch() as { metadata: { annotations: Record<string, string> }; status: unknown };
  assert.deepEqual(offered.status, { fastFn: { fast: true } });
  const offeredRecord = decodeProgressRecord(offered.metadata.annotations["kopf.zalando.org/fastFn"]);
  assert.equal(offeredRecord?.success, true);
  assert.ok(offeredRecord?.started && offeredRecord.stopped, "a checkpoint's success carries its times");
  assert.equal(offered.metadata.annotations["kopf.zalando.org/slowFn"], undefined, "the running one has no outcome");
  assert.deepEqual(patch.status, { fastFn: { fast: true }, slowFn: { slow: true } });
});

Deno.test("execution: a fast cycle offers no checkpoint; a slow one with many handlers, one per period", async () => {
  const fast = recorder(1000);
  await cycle([handler("a", () => {}), handler("b", async () => await sleep(0.01))], { checkpoint: fast.checkpoint });
  assert.equal(fast.sent.length, 0);

  // Due at once: the second handler's attempt sends one; the next ones end before the next period.
  const slow = recorder(1000, 0);
  const handlers = ["a", "b", "c", "d", "e"].map((id) => handler(id, async () => await sleep(0.01)));
  await cycle(handlers, { checkpoint: slow.checkpoint });
  assert.equal(slow.sent.length, 1);
  assert.deepEqual(Object.keys(slow.sent[0].metadata.annotations), ["kopf.zalando.org/a"]);
});

Deno.test("execution: a handler past its deadline fails for good with HandlerTimeoutError; the cycle goes on", async () => {
  const calls: string[] = [];
  let aborted: unknown;
  const hungFn = handler("hungFn", async ({ signal }) => {
    calls.push("hungFn");
    await sleep(600, signal);
    aborted = signal.reason;
  });
  const nextFn = handler("nextFn", () => {
    calls.push("nextFn");
  });
  const { outcome, patch } = await cycle([hungFn, nextFn], { handlerTimeout: 0.05 });
  assert.deepEqual(calls, ["hungFn", "nextFn"]);
  assert.deepEqual({ done: outcome.done, succeeded: outcome.succeeded, failed: outcome.failed }, {
    done: true,
    succeeded: 1,
    failed: 1,
  });
  assert.equal((aborted as Error).name, "HandlerTimeoutError");
  const record = decodeProgressRecord(patch.metadata.annotations["kopf.zalando.org/hungFn"] as string);
  assert.equal(record?.failure, true);
  assert.equal(record?.message, "Handler 'hungFn' has timed out after 0.05 s.");
});

Deno.test("execution: a cause finished in one cycle puts no records into the patch; one left unfinished keeps its successes'", async () => {
  const done = await cycle([handler("a", () => ({ a: 1 })), handler("b", () => {})], {});
  assert.equal(done.outcome.done, true);
  assert.deepEqual(done.patch.metadata.annotations, {}, "records that the cause's end would purge at once");
  assert.deepEqual(done.patch.status, { a: { a: 1 } });

  const left = await cycle([
    handler("a", () => ({ a: 1 })),
    handler("b", () => {
      throw new Error("not yet");
    }),
  ], {});
  assert.equal(left.outcome.done, false);
  const annotations = left.patch.metadata.annotations as Record<string, string>;
  const succeeded = decodeProgressRecord(annotations["kopf.zalando.org/a"]);
  assert.equal(succeeded?.success, true, "the next cycle must skip a");
  // A success's times are formatted only when its record is stored: both there, in Kopf's form, in order.
  const started = parseTimestamp(succeeded!.started!).getTime();
  const stopped = parseTimestamp(succeeded!.stopped!).getTime();
  assert.ok(started <= stopped && stopped <= Date.now(), `${succeeded!.started} .. ${succeeded!.stopped}`);
  assert.match(succeeded!.stopped!, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/);
  const retried = decodeProgressRecord(annotations["kopf.zalando.org/b"]);
  assert.equal(retried?.success, false);
  assert.equal(retried?.retries, 1);
  assert.ok(retried?.delayed, "b is retried later");
});

Deno.test("execution: each context's signal is its own attempt's, an own enumerable property that a spread copy keeps", async () => {
  const seen: { signal: AbortSignal; copied: unknown; keys: string[] }[] = [];
  const look = (context: Parameters<ChangeFn>[0]) => {
    seen.push({ signal: context.signal, copied: { ...context }.signal, keys: Object.keys(context) });
  };
  // The second handler's timeout gives its attempt a signal of its own that aborts at the deadline.
  await cycle([handler("a", look), handler("b", look, { timeout: 60 })], {});
  assert.equal(seen.length, 2);
  for (const { signal, copied, keys } of seen) {
    assert.ok(signal instanceof AbortSignal);
    assert.equal(copied, signal);
    assert.ok(keys.includes("signal"));
  }
  assert.notEqual(seen[0].signal, seen[1].signal);
  assert.equal(seen[0].signal.aborted, false);
});
