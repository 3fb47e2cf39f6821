// Every kopf.on.* function goes through one registration pipeline: the same mistakes are refused
// by all of them, with the same message shape `kopf.on.<kind>(<resource>, <fn>): <problem>`.

import assert from "node:assert/strict";
import * as on from "../../on.ts";
import { Registry } from "./registry.ts";
import { checkOptions, shown } from "./registration_options.ts";

type Register = (options: Record<string, unknown>, fn: () => void) => unknown;

/** Each registration function, with the options it needs to be valid, and which options it takes. */
interface Kind {
  register: Register;
  /** Options without which the registration is invalid. */
  base?: Record<string, unknown>;
  /** It takes `errors`, `timeout`, `retries`, `backoff`. */
  retrying: boolean;
  /** It takes a resource (and filters, unless `filters` says otherwise). */
  resource: boolean;
  /** It takes filters; as `resource` when absent. */
  filters?: boolean;
}

const KINDS: Record<string, Kind> = {
  create: { register: (o, fn) => on.create("kopfexamples", o, fn), retrying: true, resource: true },
  update: { register: (o, fn) => on.update("kopfexamples", o, fn), retrying: true, resource: true },
  delete: { register: (o, fn) => on.delete("kopfexamples", o, fn), retrying: true, resource: true },
  resume: { register: (o, fn) => on.resume("kopfexamples", o, fn), retrying: true, resource: true },
  field: {
    register: (o, fn) => on.field("kopfexamples", o as never, fn),
    base: { field: "spec.size" },
    retrying: true,
    resource: true,
  },
  event: { register: (o, fn) => on.event("kopfexamples", o, fn), retrying: false, resource: true },
  timer: { register: (o, fn) => on.timer("kopfexamples", o, fn), retrying: true, resource: true },
  daemon: { register: (o, fn) => on.daemon("kopfexamples", o, fn), retrying: true, resource: true },
  index: { register: (o, fn) => on.index("kopfexamples", o, fn), retrying: true, resource: true },
  validate: { register: (o, fn) => on.validate("kopfexamples", o, fn), retrying: false, resource: true },
  mutate: { register: (o, fn) => on.mutate("kopfexamples", o, fn), retrying: false, resource: true },
  conversion: {
    register: (o, fn) => on.conversion("kopfexamples", o as never, fn),
    base: { from: "v1", to: "v2" },
    retrying: false,
    resource: true,
    filters: false,
  },
  startup: { register: (o, fn) => on.startup(o, fn), retrying: true, resource: false },
  cleanup: { register: (o, fn) => on.cleanup(o, fn), retrying: true, resource: false },
  login: { register: (o, fn) => on.login(o, fn as never), retrying: true, resource: false },
  probe: { register: (o, fn) => on.probe(o, fn), retrying: true, resource: false },
};

/** A mistake, and what the message says after the label: exactly, or how it starts. */
interface Mistake {
  options: Record<string, unknown>;
  /** For kinds that take the option. */
  problem: string | { startsWith: string };
  /** The option that kinds without it refuse as unknown; none: every kind judges the value. */
  option?: string;
  /** Only for kinds with a resource (filters). */
  filter?: boolean;
}

const MISTAKES: Mistake[] = [
  { options: { retries: -1 }, option: "retries", problem: "retries must be a non-negative integer, got -1." },
  { options: { retries: 2.5 }, option: "retries", problem: "retries must be a non-negative integer, got 2.5." },
  {
    options: { timeout: -1 },
    option: "timeout",
    problem: "timeout must be a non-negative number of seconds, got -1.",
  },
  {
    options: { backoff: "5" },
    option: "backoff",
    problem: 'backoff must be a non-negative number of seconds, got "5".',
  },
  {
    options: { errors: "sometimes" },
    option: "errors",
    problem: 'errors must be "temporary", "permanent" or "ignored", got "sometimes".',
  },
  { options: { colour: "red" }, option: "colour", problem: { startsWith: "unknown option colour; " } },
  { options: { id: "" }, problem: 'id must be a non-empty string, got "".' },
  { options: { registry: {} }, problem: "registry must be a kopf.Registry, got {}." },
  {
    options: { labels: { app: null } },
    option: "labels",
    filter: true,
    problem: 'null for the label filter "app" is not supported; use kopf.PRESENT or kopf.ABSENT.',
  },
  {
    options: { when: true },
    option: "when",
    filter: true,
    problem: "when must be a function (context) => boolean; got boolean.",
  },
  {
    options: { field: "" },
    option: "field",
    filter: true,
    problem: 'the field "" is empty or has empty keys.',
  },
  {
    options: { field: "spec.size", value: null },
    option: "value",
    filter: true,
    problem: "null is not supported as a value filter; use kopf.ABSENT, kopf.PRESENT or a callback.",
  },
];

const RETRY = ["errors", "timeout", "retries", "backoff"];
const FILTER = ["labels", "annotations", "when", "field", "value"];

/** The options a kind takes, as its unknown-option message lists them. */
function listed(message: string): string[] {
  const match = /the options of on\.\w+ are: (.*)\.$/.exec(message);
  return match ? match[1].split(", ") : [];
}

Deno.test("every on.* function refuses the same mistakes with the same message shape", () => {
  for (const [kind, { register, base = {}, resource, retrying, filters = resource }] of Object.entries(KINDS)) {
    const registry = new Registry();
    const label = `kopf.on.${kind}(${resource ? '"kopfexamples", ' : ""}fn)`;
    let takes: string[] = [];
    assert.throws(() => register({ ...base, registry, colour: "red" }, function fn() {}), (error: Error) => {
      takes = listed(error.message);
      return true;
    });
    assert.ok(takes.includes("id") && takes.includes("registry"), `${kind} lists its options`);
    for (const mistake of MISTAKES) {
      if (mistake.filter && !filters) continue;
      const options = { ...base, registry, ...mistake.options };
      const unknown = Object.keys(mistake.options).filter((name) => !takes.includes(name));
      const taken = mistake.option === undefined ||
        (RETRY.includes(mistake.option) ? retrying : FILTER.includes(mistake.option) ? filters : false);
      assert.equal(unknown.length === 0, taken, `${kind} takes ${mistake.option}: ${taken}`);
      const what = `${kind} ${JSON.stringify(mistake.options)}`;
      assert.throws(() => register(options, function fn() {}), (error: Error) => {
        assert.ok(error instanceof TypeError, what);
        assert.ok(error.message.startsWith(`${label}: `), `${what}: ${error.message}`);
        const problem = error.message.slice(label.length + 2);
        if (unknown.length) {
          const names = unknown.join(", ");
          assert.ok(
            problem.startsWith(`unknown option${unknown.length > 1 ? "s" : ""} ${names}`),
            `${what}: ${problem}`,
          );
          assert.ok(problem.endsWith(`; the options of on.${kind} are: ${takes.join(", ")}.`), `${what}: ${problem}`);
        } else if (typeof mistake.problem === "string") {
          assert.equal(problem, mistake.problem, what);
        } else {
          assert.ok(problem.startsWith(mistake.problem.startsWith), `${what}: ${problem}`);
        }
        return true;
      });
    }
    const registered = registry.handlers.length + registry.webhooks.length + registry.converters.length;
    assert.equal(registered, 0, `${kind}: nothing registered`);
  }
});

Deno.test("the retry options are taken by every on.* function that retries, and only by those", () => {
  for (const [kind, { register, base = {}, retrying }] of Object.entries(KINDS)) {
    const registry = new Registry();
    const options = { ...base, registry, errors: "permanent", timeout: 0, retries: 0, backoff: 1.5 };
    if (retrying) {
      register(options, function fn() {});
      const added = [...registry.handlers, ...registry.webhooks];
      const activity = ["startup", "cleanup", "login", "probe"].includes(kind)
        ? registry.activities(kind as never)
        : [];
      assert.equal(added.length + activity.length, 1, kind);
    } else {
      assert.throws(() => register(options, function fn() {}), {
        name: "TypeError",
        message: /: unknown options errors, timeout, retries, backoff[ ;]/,
      }, kind);
    }
  }
});

Deno.test("activities take no filters: they are unknown options there", () => {
  for (const kind of ["startup", "cleanup", "login", "probe"]) {
    assert.throws(() => KINDS[kind].register({ labels: { a: "b" } }, function fn() {}), {
      name: "TypeError",
      message: `kopf.on.${kind}(fn): unknown option labels; ` +
        `the options of on.${kind} are: id, param, registry, errors, timeout, retries, backoff.`,
    });
  }
});

Deno.test("durations and counts: zero and fractions of seconds are fine; NaN and Infinity are not", () => {
  const registry = new Registry();
  on.timer("kex", { registry, interval: 0.5, idle: 0, initialDelay: 0, sharp: true, retries: 0 }, function tick() {});
  on.daemon(
    "kex",
    { registry, cancellationBackoff: 0.1, cancellationTimeout: 0, cancellationPolling: 2 },
    function d() {},
  );
  assert.deepEqual(registry.handlers.map((handler) => handler.id), ["tick", "d"]);
  for (const value of [NaN, Infinity, -0.5]) {
    assert.throws(() => on.timer("kex", { registry, interval: value }, function tick() {}), {
      name: "TypeError",
      message: `kopf.on.timer("kex", tick): interval must be a non-negative number of seconds, got ${value}.`,
    });
  }
  assert.throws(() => on.timer("kex", { registry, sharp: 1 } as never, function tick() {}), {
    name: "TypeError",
    message: 'kopf.on.timer("kex", tick): sharp must be true or false, got 1.',
  });
  assert.throws(() => on.delete("kex", { registry, optional: "yes" } as never, function gone() {}), {
    name: "TypeError",
    message: 'kopf.on.delete("kex", gone): optional must be true or false, got "yes".',
  });
});

Deno.test("an unknown option that another kind takes says which one", () => {
  const registry = new Registry();
  assert.throws(() => on.index("pods", { registry, interval: 5 } as never, function byNode() {}), {
    name: "TypeError",
    message: 'kopf.on.index("pods", byNode): unknown option interval (interval is for on.timer); ' +
      "the options of on.index are: id, param, registry, labels, annotations, when, field, value, " +
      "errors, timeout, retries, backoff, sharded.",
  });
  assert.throws(() => on.create("pods", { registry, field: "spec.a", new: 1 } as never, function made() {}), {
    name: "TypeError",
    message: /^kopf\.on\.create\("pods", made\): unknown option new \(new is for on\.update and on\.field\); /,
  });
});

Deno.test("the call is named as written: the selector, the function or its id", () => {
  const registry = new Registry();
  assert.throws(() => on.create("kex", { registry, id: "custom", retries: -1 }, () => {}), {
    name: "TypeError",
    message: 'kopf.on.create("kex", { id: "custom" }, …): retries must be a non-negative integer, got -1.',
  });
  assert.throws(() => on.event({ group: "kopf.dev", plural: "kopfexamples" }, { registry, id: 5 } as never, fn), {
    name: "TypeError",
    message: /^kopf\.on\.event\(.*kopfexamples.*, fn\): id must be a non-empty string, got 5\.$/,
  });
  assert.throws(() => on.create({ plural: "a", kind: "B" }, { registry }, fn), {
    name: "TypeError",
    message: /^kopf\.on\.create\(…, fn\): Ambiguous resource specification/,
  });
  assert.throws(() => on.startup("x" as never, fn), {
    name: "TypeError",
    message: 'kopf.on.startup(fn): the options must be an object, got "x".',
  });
  function fn() {}
});

Deno.test("checkOptions: sub-handlers follow their parent's filter rules; shown() keeps values short", () => {
  const where = "kopf.subhandler(): sub-handler 'p/c' (under an on.create handler)";
  assert.throws(() => checkOptions("subhandler", where, { field: "spec.a", old: 1 }, "create"), {
    name: "TypeError",
    message: `${where}: old/new filters can only be used in on.update and on.field handlers (and their sub-handlers).`,
  });
  checkOptions("subhandler", where, { field: "spec.a", old: 1 }, "update");
  checkOptions("subhandler", where, {}, "field");
  assert.throws(() => checkOptions("subhandler", where, { registry: new Registry() }, "create"), {
    name: "TypeError",
    message: /unknown option registry; the options of sub-handlers are: /,
  });
  assert.equal(shown("a"), '"a"');
  assert.equal(shown([1, 2]), "[1,2]");
  assert.equal(shown(new Registry()), "a Registry");
  assert.equal(shown({ long: "x".repeat(100) }).length, 58);
});
