import assert from "node:assert/strict";
import { configureLogging } from "../logging/configure.ts";
import { Settings } from "../settings/settings.ts";
import { type ActivityContext, ActivityError, type ActivityHandler, runActivity } from "./activities.ts";
import { HandlerRetriesError, HandlerTimeoutError, PermanentError, TemporaryError } from "./errors.ts";
import { cleanup, probe, startup } from "./registration.ts";
import { Registry } from "./registry.ts";

/** Captures the log lines (plain format) while `fn` runs. */
async function logged<T>(fn: () => Promise<T>): Promise<{ value?: T; error?: unknown; lines: string[] }> {
  const lines: string[] = [];
  await configureLogging({ level: "debug", format: "plain", write: (line) => lines.push(line) });
  try {
    return { value: await fn(), lines };
  } catch (error) {
    return { error, lines };
  }
}

function handler(id: string, fn: ActivityHandler["fn"], options: ActivityHandler["options"] = {}): ActivityHandler {
  return { kind: "activity", activity: "startup", id, fn, options };
}

Deno.test("on.startup/cleanup/probe register activity handlers apart from resource handlers", () => {
  const registry = new Registry();
  function first() {}
  const returned = startup({ registry }, first);
  assert.equal(returned, first);
  startup({ registry, id: "second", param: 5, retries: 3 }, () => {});
  startup({ registry }, first); // the same function twice runs once
  cleanup({ registry }, function bye() {});
  probe({ registry, id: "now" }, () => "now");
  assert.deepEqual(registry.activities("startup").map((h) => h.id), ["first", "second"]);
  assert.deepEqual(registry.activities("startup")[1].options, { id: "second", param: 5, retries: 3 });
  assert.deepEqual(registry.activities("cleanup").map((h) => h.id), ["bye"]);
  assert.deepEqual(registry.activities("probe").map((h) => h.id), ["now"]);
  assert.equal(registry.handlers.length, 0);
  assert.equal(registry.selectors.length, 0);
});

Deno.test("activity registration rejects unknown options, anonymous functions without id, bad values", () => {
  const registry = new Registry();
  assert.throws(
    () => startup({ registry, labels: { a: "b" } } as never, function x() {}),
    {
      name: "TypeError",
      message: "kopf.on.startup(x): unknown option labels; " +
        "the options of on.startup are: id, param, registry, errors, timeout, retries, backoff.",
    },
  );
  assert.throws(
    () => cleanup({ registry }, () => {}),
    { name: "TypeError", message: /^kopf\.on\.cleanup\(\(\) => …\): an anonymous handler needs an id/ },
  );
  assert.throws(() => probe({ registry, errors: "sometimes" as never }, function x() {}), {
    name: "TypeError",
    message: 'kopf.on.probe(x): errors must be "temporary", "permanent" or "ignored", got "sometimes".',
  });
  assert.throws(() => probe({ registry, timeout: -1 }, function x() {}), {
    name: "TypeError",
    message: "kopf.on.probe(x): timeout must be a non-negative number of seconds, got -1.",
  });
  assert.throws(() => startup(function x() {} as never, function y() {}), {
    name: "TypeError",
    message: "kopf.on.startup(): give either (fn) or (options, fn).",
  });
  assert.equal(registry.activities("startup").length + registry.activities("probe").length, 0);
});

Deno.test("handlers get the activity's context and run in order; results are keyed by id", async () => {
  const settings = new Settings();
  const memo = { shared: true };
  const seen: ActivityContext[] = [];
  const { value, lines } = await logged(() =>
    runActivity([
      handler("a", (ctx) => {
        seen.push(ctx);
        ctx.logger.info("from a {braces}");
        return { x: 1 };
      }, { param: "p" }),
      handler("b", (ctx) => {
        seen.push(ctx);
        return undefined;
      }),
      handler("c", async () => await Promise.resolve(0)),
    ], { activity: "probe", settings, memo })
  );
  assert.deepEqual(value, { a: { x: 1 }, c: 0 });
  assert.equal(seen.length, 2);
  assert.equal(seen[0].activity, "probe");
  assert.equal(seen[0].settings, settings);
  assert.equal(seen[0].memo, memo);
  assert.equal(seen[0].param, "p");
  assert.equal(seen[1].param, undefined);
  assert.equal(seen[0].retry, 0);
  assert.ok(seen[0].started instanceof Date);
  assert.equal(typeof seen[0].runtime, "number");
  assert.deepEqual(lines, [
    "from a {braces}",
    "Activity 'a' succeeded.",
    "Activity 'b' succeeded.",
    "Activity 'c' succeeded.",
  ]);
});

Deno.test("temporary errors and arbitrary errors are retried after their delay or backoff", async () => {
  const calls: Record<string, number[]> = { temp: [], arbitrary: [] };
  const started = Date.now();
  const { value, lines } = await logged(() =>
    runActivity([
      handler("temp", ({ retry }) => {
        calls.temp.push(retry);
        if (retry < 2) throw new TemporaryError("not yet", { delay: 0.1 });
        return "ok";
      }),
      handler("arbitrary", ({ retry, started: first, runtime }) => {
        calls.arbitrary.push(retry);
        if (retry === 0) throw new Error("boom");
        return { first: first.getTime(), runtime };
      }, { backoff: 0.2 }),
    ], { activity: "startup", settings: new Settings(), memo: {} })
  );
  assert.deepEqual(calls, { temp: [0, 1, 2], arbitrary: [0, 1] });
  assert.equal((value as Record<string, unknown>).temp, "ok");
  const { first, runtime } = (value as { arbitrary: { first: number; runtime: number } }).arbitrary;
  assert.ok(first >= started && runtime >= 200, `runtime ${runtime}`);
  assert.ok(lines.includes("Activity 'temp' failed temporarily: not yet"), lines.join("\n"));
  assert.ok(
    lines.some((line) => line.startsWith("Activity 'arbitrary' failed with an exception. Will retry in 0.2 s.")),
  );
});

Deno.test("the default backoff is settings.execution.defaultBackoff, read at the failure", async () => {
  const settings = new Settings();
  settings.execution.defaultBackoff = 0.05;
  let calls = 0;
  await logged(() =>
    runActivity([handler("x", () => {
      if (calls++ === 0) throw new Error("once");
    })], { activity: "startup", settings, memo: {} })
  );
  assert.equal(calls, 2);
});

Deno.test("a permanent failure, errors: permanent, retries and timeout end in an ActivityError naming the handlers", async () => {
  let retried = 0;
  const { error, lines } = await logged(() =>
    runActivity([
      handler("perm", () => {
        throw new PermanentError("no way");
      }),
      handler("strict", () => {
        throw new Error("bad");
      }, { errors: "permanent" }),
      handler("limited", () => {
        retried++;
        throw new Error("again");
      }, { retries: 2, backoff: 0.01 }),
      handler("slow", () => {
        throw new TemporaryError("later", { delay: 5 });
      }, { timeout: 1 }),
      handler("fine", () => "ok"),
    ], { activity: "startup", settings: new Settings(), memo: {} })
  );
  assert.ok(error instanceof ActivityError, String(error));
  assert.equal(error.activity, "startup");
  assert.deepEqual([...error.errors.keys()], ["perm", "strict", "limited", "slow"]);
  assert.ok(error.errors.get("perm") instanceof PermanentError);
  assert.ok(error.errors.get("limited") instanceof HandlerRetriesError);
  assert.ok(error.errors.get("slow") instanceof HandlerTimeoutError);
  assert.equal(retried, 2);
  assert.match(error.message, /^Startup handlers failed: 'perm': no way; 'strict': bad; 'limited': .*; 'slow': .*/);
  assert.ok(lines.includes("Activity 'perm' failed permanently: no way"));
  assert.ok(lines.includes("Activity 'fine' succeeded."));
});

Deno.test("one failed handler: the message names it and its error", async () => {
  const { error } = await logged(() =>
    runActivity([handler("setUp", () => {
      throw new PermanentError("the database is gone");
    })], { activity: "startup", settings: new Settings(), memo: {} })
  );
  assert.ok(error instanceof ActivityError);
  assert.equal(error.message, "Startup handler 'setUp' failed: the database is gone");
});

Deno.test("errors: ignored counts as done, without a result", async () => {
  const { value, lines } = await logged(() =>
    runActivity([handler("x", () => {
      throw new Error("whatever");
    }, { errors: "ignored" })], { activity: "cleanup", settings: new Settings(), memo: {} })
  );
  assert.deepEqual(value, {});
  assert.ok(lines.some((line) => line.startsWith("Activity 'x' failed with an exception. Will ignore.")));
});

Deno.test("the activity's timeout: a retry that would come too late is not waited for", async () => {
  const started = Date.now();
  const { error } = await logged(() =>
    runActivity([handler("x", () => {
      throw new Error("always");
    })], { activity: "cleanup", settings: new Settings(), memo: {}, timeout: 1 })
  );
  assert.ok(Date.now() - started < 500, "gave up at once rather than waiting 60 s");
  assert.ok(error instanceof ActivityError);
  assert.match(error.message, /^Cleanup handler 'x' failed: .*cleanup activity would run out of time \(1 s\)/);
});

Deno.test("the activity's timeout and its signal abandon a handler still running", async () => {
  const started = Date.now();
  const { error, lines } = await logged(() =>
    runActivity([handler("hang", () => new Promise(() => {}))], {
      activity: "cleanup",
      settings: new Settings(),
      memo: {},
      timeout: 0.3,
    })
  );
  assert.ok(Date.now() - started < 2000);
  assert.ok(error instanceof ActivityError);
  assert.ok(lines.some((line) => line.includes("Activity 'hang' is abandoned unfinished")), lines.join("\n"));

  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const stopped = await logged(() =>
    runActivity([handler("waiting", () => {
      throw new TemporaryError("later", { delay: 60 });
    })], { activity: "startup", settings: new Settings(), memo: {}, signal: controller.signal })
  );
  assert.ok(stopped.error instanceof ActivityError);
  assert.match(stopped.error.message, /the operator is stopping/);
});

Deno.test("no handlers: no results, no error", async () => {
  assert.deepEqual(await runActivity([], { activity: "probe", settings: new Settings(), memo: {} }), {});
});
