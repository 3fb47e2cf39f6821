// Sub-handlers driven through runCause() cycle by cycle, with the annotations progress storage and
// each cycle's patch applied to the body before the next one (as the watch would deliver it).

import assert from "node:assert/strict";
import type { JsonObject, KubernetesObject } from "../model/body.ts";
import { diff } from "../model/diff.ts";
import { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import { Selector } from "../model/selector.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import { AnnotationsProgressStorage } from "../state/annotations_progress.ts";
import { decodeProgressRecord, type ProgressRecord } from "../state/progress.ts";
import type { Reason } from "./causes.ts";
import type { ChangeContext } from "./handlers.ts";
import { runWithObject } from "./current_object.ts";
import { TemporaryError } from "./errors.ts";
import type { CauseOutcome } from "./cause_run.ts";
import { runCause } from "./execution.ts";
import type { ChangeFn, ChangeHandler, ChangeHandlerOptions } from "./handlers.ts";
import { allAtOnce, type Lifecycle, oneByOne } from "./lifecycles.ts";
import { execute, register, subhandler, SubhandlingScope } from "./subhandlers.ts";

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
const PREFIX = "kopf.zalando.org/";

function handler(
  id: string,
  fn: ChangeFn,
  options: ChangeHandlerOptions = {},
  reason: Reason = "create",
): ChangeHandler {
  return {
    kind: "change",
    reason,
    id,
    selector: new Selector("kopfexamples"),
    fn,
    options,
    field: typeof options.field === "string" ? options.field.split(".") : undefined,
    requiresFinalizer: false,
    initial: false,
    deleted: false,
  };
}

/** JSON merge-patch semantics (RFC 7386), enough for annotations and status. */
function merge(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> = target !== null && typeof target === "object" && !Array.isArray(target)
    ? { ...target as Record<string, unknown> }
    : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = merge(result[key], value);
  }
  return result;
}

/** One object handled cycle after cycle, as processing.ts does it (purging sub-handlers' records too). */
class Cycles {
  body: KubernetesObject;
  readonly storage = new AnnotationsProgressStorage({ v1: false });
  readonly reason: Reason;
  readonly old: JsonObject | null;
  readonly new: JsonObject;
  patches: JsonObject[] = [];

  constructor(
    options: { reason?: Reason; old?: JsonObject | null; new?: JsonObject; labels?: Record<string, string> } = {},
  ) {
    this.reason = options.reason ?? "create";
    this.old = options.old ?? null;
    this.new = options.new ?? { spec: {} };
    this.body = { metadata: { name: "kex", namespace: "ns", uid: "u1", labels: options.labels ?? {} }, spec: {} };
  }

  async cycle(handlers: readonly ChangeHandler[], lifecycle: Lifecycle = allAtOnce): Promise<CauseOutcome> {
    const patch = new Patch();
    const outcome = await runCause(handlers, {
      reason: this.reason,
      body: this.body,
      old: this.old,
      new: this.new,
      diff: diff(this.old, this.new),
      patch,
      logger: new ObjectLogger(this.body, { local: true }),
      memo: {},
      indices: {},
      resource: RESOURCE,
      storage: this.storage,
      lifecycle,
      defaultBackoff: 60,
    });
    if (outcome.done) {
      for (const id of [...handlers.map((h) => h.id), ...outcome.subrefs]) this.storage.purge(id, this.body, patch);
    }
    this.patches.push(patch.toMergePatch());
    this.body = merge(this.body, patch.toMergePatch()) as KubernetesObject;
    return outcome;
  }

  get status(): Record<string, unknown> {
    return (this.body.status ?? {}) as Record<string, unknown>;
  }

  /** The progress records on the object, by annotation name without the prefix. */
  get progress(): Record<string, ProgressRecord | null> {
    const found: Record<string, ProgressRecord | null> = {};
    for (const [key, value] of Object.entries(this.body.metadata.annotations ?? {})) {
      if (key.startsWith(PREFIX)) found[key.slice(PREFIX.length)] = decodeProgressRecord(value);
    }
    return found;
  }
}

Deno.test("declared sub-handlers run right after the parent returns; results at status['parent/child']", async () => {
  const object = new Cycles();
  const createFn = handler("createFn", (ctx) => {
    ctx.subhandler({ id: "item1" }, () => "item1");
    register(function item2() {
      return "item2";
    });
    subhandler(function item3({ param }) {
      return { param: param ?? "none" };
    });
    return { parent: true };
  });
  const outcome = await object.cycle([createFn]);
  assert.equal(outcome.done, true);
  assert.deepEqual(outcome.subrefs, ["createFn/item1", "createFn/item2", "createFn/item3"]);
  assert.equal(object.status["createFn/item1"], "item1");
  assert.equal(object.status["createFn/item2"], "item2");
  assert.deepEqual(object.status["createFn/item3"], { param: "none" });
  assert.deepEqual(object.status.createFn, { parent: true });
  assert.deepEqual(object.progress, {}, "all progress, the children's included, is purged when done");
});

Deno.test("execute({ fns }): a child failing temporarily re-invokes the parent; code after the await runs once", async () => {
  const object = new Cycles();
  const calls = { parent: 0, a: 0, b: 0, leaving: 0 };
  const retries: number[] = [];
  const createFn = handler("createFn", async ({ retry }) => {
    calls.parent++;
    retries.push(retry);
    await execute({
      fns: {
        a: () => {
          calls.a++;
          return "A";
        },
        b: ({ retry }) => {
          calls.b++;
          if (retry < 2) throw new TemporaryError("not yet", { delay: 0 });
          return "B";
        },
      },
    });
    calls.leaving++;
    return "done";
  });

  let outcome = await object.cycle([createFn]);
  assert.equal(outcome.done, false);
  assert.equal(outcome.delay, 0);
  assert.equal(object.status["createFn/a"], "A");
  assert.equal(object.status.createFn, undefined, "the parent's result waits for its children");
  const progress = object.progress;
  assert.equal(progress["createFn.a"]?.success, true);
  assert.equal(progress["createFn.b"]?.success, false);
  assert.equal(progress["createFn.b"]?.message, "not yet");
  assert.deepEqual(progress.createFn?.subrefs, ["createFn/a", "createFn/b"]);
  assert.equal(progress.createFn?.success, false);
  assert.equal(progress.createFn?.message, undefined, "waiting for children is not an error");
  assert.ok(progress.createFn?.delayed);

  outcome = await object.cycle([createFn]);
  assert.equal(outcome.done, false);
  outcome = await object.cycle([createFn]);
  assert.equal(outcome.done, true);
  assert.deepEqual(outcome.subrefs, ["createFn/a", "createFn/b"]);
  assert.deepEqual(calls, { parent: 3, a: 1, b: 3, leaving: 1 });
  assert.deepEqual(retries, [0, 1, 2], "the parent's attempts are counted");
  assert.equal(object.status["createFn/b"], "B");
  assert.equal(object.status.createFn, "done");
  assert.deepEqual(object.progress, {});
});

Deno.test("children's delays become the parent's, and so the cycle's", async () => {
  const object = new Cycles();
  const createFn = handler("createFn", (ctx) => {
    ctx.subhandler({ id: "slow" }, () => {
      throw new TemporaryError("later", { delay: 30 });
    });
    ctx.subhandler({ id: "slower" }, () => {
      throw new TemporaryError("much later", { delay: 60 });
    });
  });
  const outcome = await object.cycle([createFn]);
  assert.equal(outcome.done, false);
  assert.ok(outcome.delay! > 29 && outcome.delay! <= 30, `delay ${outcome.delay}`);
  // Not due yet: neither the parent nor its children run in the next cycle.
  const before = JSON.stringify(object.body);
  assert.equal((await object.cycle([createFn])).done, false);
  assert.equal(JSON.stringify(object.body), before);
});

Deno.test("nested sub-handlers: ids and subrefs of any depth; fields are relative to the parent's", async () => {
  const object = new Cycles({ reason: "update", old: { spec: { size: 1 } }, new: { spec: { size: 2 } } });
  const seen: unknown[] = [];
  const parent = handler(
    "p",
    ({ old, new: now, subhandler }) => {
      seen.push(["p", old, now]);
      subhandler({ id: "c", field: "size" }, ({ old, new: now, diff, subhandler }) => {
        seen.push(["c", old, now, diff]);
        subhandler({ id: "g" }, ({ old }) => {
          seen.push(["g", old]);
          throw new TemporaryError("once", { delay: 0 });
        });
      });
    },
    { field: "spec" },
    "update",
  );

  let outcome = await object.cycle([parent]);
  assert.equal(outcome.done, false);
  assert.deepEqual(object.progress.p?.subrefs, ["p/c", "p/c/g"]);
  assert.deepEqual(object.progress["p.c"]?.subrefs, ["p/c/g"]);
  assert.equal(object.progress["p.c.g"]?.retries, 1);
  assert.deepEqual(seen, [["p", { size: 1 }, { size: 2 }], ["c", 1, 2, [["change", [], 1, 2]]], ["g", 1]]);
  outcome = await object.cycle([parent]);
  assert.equal(outcome.done, false, "the grandchild keeps failing");
  assert.deepEqual(outcome.subrefs, ["p/c", "p/c/g"]);
});

Deno.test("sub-handler filters apply in the parent's mode; old/new only under update and field parents", async () => {
  const object = new Cycles({ labels: { a: "b" }, new: { spec: { x: 1 } } });
  const ran: string[] = [];
  const createFn = handler("createFn", ({ subhandler }) => {
    subhandler({ id: "labelled", labels: { a: "b" } }, () => void ran.push("labelled"));
    subhandler({ id: "unlabelled", labels: { a: "c" } }, () => void ran.push("unlabelled"));
    subhandler({ id: "never", when: () => false }, () => void ran.push("never"));
    subhandler({ id: "field", field: "spec.x", value: 1 }, () => void ran.push("field"));
  });
  assert.equal((await object.cycle([createFn])).done, true);
  assert.deepEqual(ran, ["labelled", "field"]);

  const runner = () => Promise.resolve({ done: true, delay: 0 });
  const fn = () => {};
  const underCreate = new SubhandlingScope(createFn, "create", allAtOnce, runner);
  assert.throws(() => underCreate.subhandler({ id: "x", field: "spec.x", old: 1 }, fn), /'createFn\/x'.*old\/new/);
  const underUpdate = new SubhandlingScope(createFn, "update", allAtOnce, runner);
  underUpdate.subhandler({ id: "x", field: "spec.x", old: 1 }, fn);
  assert.throws(() => underUpdate.subhandler({ id: "y", value: 1 }, fn), /without a mandatory field/);
});

Deno.test("sub-handlers of an on.field handler need no field of their own", () => {
  const parent = handler("fieldFn", () => {}, { field: "spec" });
  const scope = new SubhandlingScope(parent, "field", allAtOnce, () => Promise.resolve({ done: true, delay: 0 }));
  function child() {}
  assert.equal(scope.subhandler({ id: "c" }, child), child);
});

Deno.test("sub-handler options are checked as top-level ones: numbers, errors, unknown names", () => {
  const parent = handler("createFn", () => {});
  const scope = new SubhandlingScope(parent, "create", allAtOnce, () => Promise.resolve({ done: true, delay: 0 }));
  const where = "kopf.subhandler(): sub-handler 'createFn/x' (under an on.create handler): ";
  assert.throws(() => scope.subhandler({ id: "x", retries: -1 }, () => {}), {
    name: "TypeError",
    message: `${where}retries must be a non-negative integer, got -1.`,
  });
  assert.throws(() => scope.subhandler({ id: "x", errors: "never" } as never, () => {}), {
    name: "TypeError",
    message: `${where}errors must be "temporary", "permanent" or "ignored", got "never".`,
  });
  assert.throws(() => scope.subhandler({ id: "x", optional: true } as never, () => {}), {
    name: "TypeError",
    message: new RegExp(`^${RegExp.escape(where)}unknown option optional \\(optional is for on\\.delete\\); `),
  });
});

Deno.test("registration mistakes are TypeErrors that say what to do", async () => {
  const parent = handler("createFn", () => {});
  const scope = new SubhandlingScope(parent, "create", allAtOnce, () => Promise.resolve({ done: true, delay: 0 }));
  assert.throws(() => scope.subhandler(() => {}), { name: "TypeError", message: /anonymous sub-handler.*needs an id/ });
  assert.throws(
    () => scope.subhandler({ id: "x", optional: true } as ChangeHandlerOptions, () => {}),
    /unknown option/,
  );
  function item() {}
  scope.subhandler(item);
  scope.subhandler(item); // the same function again: once
  assert.throws(() => scope.subhandler({ id: "item" }, () => {}), /registered twice/);
  await assert.rejects(scope.execute({ fns: [item], handlers: [] }), /either fns or handlers/);
  await assert.rejects(scope.execute({ fns: [() => {}] }), /anonymous/);
  await assert.rejects(scope.execute({ registry: null } as never), /unknown option/);
  scope.closed = true;
  assert.throws(() => scope.subhandler(item), /has finished/);
});

Deno.test("outside change handlers, kopf.subhandler/register/execute throw a TypeError", async () => {
  const message = /^Sub-handlers are only supported inside change handlers\./;
  assert.throws(() => subhandler(function fn() {}), { name: "TypeError", message });
  assert.throws(() => register(function fn() {}), { name: "TypeError", message });
  await assert.rejects(execute(), { name: "TypeError", message });
  // As in an on.event handler: an object is being handled, but by no change handler.
  await runWithObject({ metadata: { name: "kex" } }, async () => {
    await assert.rejects(execute({ fns: [function fn() {}] }), /another kind \(on\.event/);
  });
});

Deno.test("execute({ lifecycle }) picks the children per cycle; handlers carry their own options", async () => {
  const object = new Cycles();
  const ran: string[] = [];
  const createFn = handler("createFn", async (ctx: ChangeContext) => {
    await ctx.execute({
      handlers: [
        { id: "one", param: 1, fn: ({ param }) => void ran.push(`one ${param}`) },
        { id: "two", param: 2, fn: ({ param }) => void ran.push(`two ${param}`) },
      ],
      lifecycle: oneByOne,
    });
  });
  assert.equal((await object.cycle([createFn])).done, false);
  assert.deepEqual(ran, ["one 1"]);
  assert.equal(object.progress["createFn.two"]?.retries, 0, "a child not run yet has its record");
  assert.equal((await object.cycle([createFn])).done, true);
  assert.deepEqual(ran, ["one 1", "two 2"]);
});

Deno.test("a parent that swallows the wait for its children still waits for them", async () => {
  const object = new Cycles();
  let leaving = 0;
  const createFn = handler("createFn", async () => {
    try {
      await execute({
        fns: [function child({ retry }) {
          if (!retry) throw new TemporaryError("again", { delay: 0 });
        }],
      });
    } catch {
      // A careless catch-all.
    }
    leaving++;
  });
  assert.equal((await object.cycle([createFn])).done, false);
  assert.equal((await object.cycle([createFn])).done, true);
  assert.equal(leaving, 2);
});

Deno.test("a superseded cause's child records are not taken for this cause's", async () => {
  const object = new Cycles({ reason: "delete" });
  object.body.metadata.annotations = {
    [`${PREFIX}fn`]: JSON.stringify({ purpose: "update", retries: 1, success: false, subrefs: ["fn/old"] }),
    [`${PREFIX}fn.c`]: JSON.stringify({ purpose: "update", retries: 1, success: true }),
    [`${PREFIX}fn.old`]: JSON.stringify({ purpose: "update", retries: 1, success: true }),
  };
  const ran: string[] = [];
  const fn = handler("fn", ({ subhandler }) => void subhandler({ id: "c" }, () => void ran.push("c")), {}, "delete");
  const outcome = await object.cycle([fn]);
  assert.deepEqual(ran, ["c"]);
  assert.deepEqual(outcome.subrefs, ["fn/c", "fn/old"]);
  assert.deepEqual(object.progress, {});
});
