// Unit tests of handler filters (features 5.1–5.7, 5.9's pre-match, 4.1's field suffix, 4.17's
// registration-time errors, 6.9's filter context): matching in each mode, callbacks, combinators.

import assert from "node:assert/strict";
import type { KubernetesObject } from "../model/body.ts";
import type { EventContext, ResourceContext } from "./context.ts";
import type { ChangeContext } from "./handlers.ts";
import { allOf, anyOf, noneOf, not } from "./filter_combinators.ts";
import { validateFilters } from "./filter_validation.ts";
import {
  ABSENT,
  fieldSuffix,
  type FilterContext,
  type FilterOptions,
  matchesFilters,
  type MatchInput,
  type MatchMode,
  matchModeOf,
  prematchesFilters,
  PRESENT,
} from "./filters.ts";

/** A small stand-in for the handler context: the filters only pass it through to callbacks. */
interface TestContext {
  name: string;
  reason?: string;
}

function kex(
  name = "kex1",
  { labels, annotations, spec }: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    spec?: Record<string, unknown>;
  } = {},
): KubernetesObject {
  const body: KubernetesObject = { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name } };
  if (labels) body.metadata.labels = labels;
  if (annotations) body.metadata.annotations = annotations;
  if (spec) body.spec = spec as KubernetesObject["spec"];
  return body;
}

/** Matching against the current body only (event-like handlers). */
function current(options: FilterOptions<TestContext>, body: KubernetesObject, reason?: string): boolean {
  return matchesFilters(options, "current", { body, context: { name: body.metadata.name!, reason } });
}

/** Matching a change from `old` to `new` spec (both whole essences), in the given mode. */
function change(
  options: FilterOptions<TestContext>,
  mode: MatchMode,
  old: Record<string, unknown> | null,
  now: Record<string, unknown> | null,
  reason = "update",
): boolean {
  const body = kex("kex1", { spec: now ?? undefined });
  const input: MatchInput<TestContext> = {
    body,
    old: old === null ? null : { spec: old },
    new: now === null ? null : { spec: now },
    context: { name: "kex1", reason },
  };
  return matchesFilters(options, mode, input);
}

// --- 5.1 labels and annotations: exact values ---------------------------------------------------

Deno.test("a label filter matches the exact value only, not other values or unlabelled objects", () => {
  const options = { labels: { a: "b" } };
  assert.equal(current(options, kex("x", { labels: { a: "b" } })), true);
  assert.equal(current(options, kex("x", { labels: { a: "c" } })), false);
  assert.equal(current(options, kex("x")), false);
  assert.equal(current(options, kex("x", { labels: { other: "b" } })), false);
});

Deno.test("an annotation filter matches the exact value; an empty string is a value", () => {
  assert.equal(current({ annotations: { a: "" } }, kex("x", { annotations: { a: "" } })), true);
  assert.equal(current({ annotations: { a: "" } }, kex("x")), false);
  assert.equal(current({ annotations: { a: "b" } }, kex("x", { labels: { a: "b" } })), false);
});

Deno.test("all label and annotation filters must match (AND)", () => {
  const options = { labels: { a: "1", b: "2" }, annotations: { c: "3" } };
  assert.equal(current(options, kex("x", { labels: { a: "1", b: "2" }, annotations: { c: "3" } })), true);
  assert.equal(current(options, kex("x", { labels: { a: "1", b: "2" } })), false);
  assert.equal(current(options, kex("x", { labels: { a: "1" }, annotations: { c: "3" } })), false);
});

Deno.test("empty label and annotation filters match everything", () => {
  assert.equal(current({ labels: {}, annotations: {} }, kex("x")), true);
});

Deno.test("label names are own keys only, not inherited properties", () => {
  // (TypeScript itself types the literal keys `constructor`/`toString` from Object's members.)
  const present = { labels: { constructor: PRESENT } } as unknown as FilterOptions<TestContext>;
  const absent = { labels: { toString: ABSENT } } as unknown as FilterOptions<TestContext>;
  assert.equal(current(present, kex("x", { labels: {} })), false);
  assert.equal(current(absent, kex("x", { labels: {} })), true);
});

// --- 5.2 presence markers -------------------------------------------------------------------------

Deno.test("PRESENT matches any value including an empty one, not absence", () => {
  assert.equal(current({ labels: { a: PRESENT } }, kex("x", { labels: { a: "anything" } })), true);
  assert.equal(current({ labels: { a: PRESENT } }, kex("x", { labels: { a: "" } })), true);
  assert.equal(current({ labels: { a: PRESENT } }, kex("x")), false);
});

Deno.test("ABSENT — annotating skip= (empty) suppresses the handler", () => {
  const options: FilterOptions<TestContext> = { annotations: { skip: ABSENT } };
  assert.equal(current(options, kex("x")), true);
  assert.equal(current(options, kex("x", { annotations: { other: "1" } })), true);
  assert.equal(current(options, kex("x", { annotations: { skip: "" } })), false);
});

Deno.test("the markers are distinct symbols, shared across copies of the library", () => {
  assert.equal(typeof PRESENT, "symbol");
  assert.notEqual(PRESENT, ABSENT);
  assert.equal(PRESENT, Symbol.for("@kopf/kopf.PRESENT"));
  assert.equal(ABSENT, Symbol.for("@kopf/kopf.ABSENT"));
});

Deno.test("null or undefined as a label or annotation filter value is rejected", () => {
  const labels = { a: null } as unknown as Record<string, string>;
  assert.throws(() => validateFilters("create", { labels }), {
    name: "TypeError",
    message: /kopf\.on\.create\(\).*label filter "a".*kopf\.PRESENT or kopf\.ABSENT/,
  });
  const annotations = { a: undefined } as unknown as Record<string, string>;
  assert.throws(() => validateFilters("event", { annotations }), {
    name: "TypeError",
    message: /kopf\.on\.event\(\).*annotation filter "a".*kopf\.PRESENT or kopf\.ABSENT/,
  });
});

// --- 5.3 per-value callbacks ----------------------------------------------------------------------

Deno.test("a label callback (n > 5) fires for n=6 only", () => {
  const options: FilterOptions<TestContext> = {
    labels: { n: (value) => value !== undefined && Number(value) > 5 },
  };
  assert.equal(current(options, kex("x", { labels: { n: "6" } })), true);
  assert.equal(current(options, kex("x", { labels: { n: "5" } })), false);
  assert.equal(current(options, kex("x")), false);
});

Deno.test("a callback gets the value (undefined if absent) and the context", () => {
  const calls: [unknown, TestContext][] = [];
  const options: FilterOptions<TestContext> = {
    labels: { a: (value, ctx) => (calls.push([value, ctx]), true) },
    annotations: { b: (value, ctx) => (calls.push([value, ctx]), true) },
  };
  assert.equal(current(options, kex("x", { labels: { a: "1" } }), "why"), true);
  assert.deepEqual(calls, [["1", { name: "x", reason: "why" }], [undefined, { name: "x", reason: "why" }]]);
});

Deno.test("a callback's result is used for its truthiness", () => {
  const options = { labels: { a: (() => "yes") as unknown as () => boolean } };
  assert.equal(current(options, kex("x")), true);
  assert.equal(current({ labels: { a: (() => 0) as unknown as () => boolean } }, kex("x")), false);
});

Deno.test("an async callback is refused (a promise would always be truthy)", () => {
  const asyncFilter = (() => Promise.resolve(false)) as unknown as () => boolean;
  assert.throws(() => current({ labels: { a: asyncFilter } }, kex("x")), { name: "TypeError", message: /synchronous/ });
  assert.throws(() => current({ when: asyncFilter }, kex("x")), TypeError);
  assert.throws(() => current({ when: not(asyncFilter) }, kex("x")), TypeError);
});

Deno.test("a callback's errors propagate", () => {
  const failing = (): boolean => {
    throw new RangeError("boom");
  };
  assert.throws(() => current({ labels: { a: failing } }, kex("x")), RangeError);
});

// --- 5.4 field and value --------------------------------------------------------------------------

Deno.test("update with field spec.x and value 'on': on→off and off→on fire, a→b does not", () => {
  const options = { field: "spec.x", value: "on" };
  assert.equal(change(options, "update", { x: "on" }, { x: "off" }), true);
  assert.equal(change(options, "update", { x: "off" }, { x: "on" }), true);
  assert.equal(change(options, "update", { x: "a" }, { x: "b" }), false);
});

Deno.test("a field without value means 'present' (either side for changes)", () => {
  assert.equal(current({ field: "spec.x" }, kex("x", { spec: { x: 0 } })), true);
  assert.equal(current({ field: "spec.x" }, kex("x", { spec: { x: null } })), true);
  assert.equal(current({ field: "spec.x" }, kex("x", { spec: { y: 0 } })), false);
  assert.equal(change({ field: "spec.x" }, "change", { x: 1 }, {}), true);
  assert.equal(change({ field: "spec.x" }, "change", null, { x: 1 }), true);
  assert.equal(change({ field: "spec.x" }, "change", { y: 1 }, { y: 2 }), false);
});

Deno.test("the field may be a dotted string or an array of keys (with dots inside keys)", () => {
  const body = kex("x", { labels: { "app.kubernetes.io/name": "web" } });
  assert.equal(current({ field: ["metadata", "labels", "app.kubernetes.io/name"], value: "web" }, body), true);
  assert.equal(current({ field: "metadata.labels.app.kubernetes.io/name", value: "web" }, body), false);
});

Deno.test("change modes check the old or the new essence; the current mode checks the body only", () => {
  const body = kex("x", { spec: { x: "body" } });
  const input = (context: TestContext): MatchInput<TestContext> => ({
    body,
    old: { spec: { x: "old" } },
    new: { spec: { x: "new" } },
    context,
  });
  const ctx = { name: "x" };
  for (const mode of ["change", "update"] as const) {
    assert.equal(matchesFilters({ field: "spec.x", value: "old" }, mode, input(ctx)), true);
    assert.equal(matchesFilters({ field: "spec.x", value: "new" }, mode, input(ctx)), true);
    assert.equal(matchesFilters({ field: "spec.x", value: "body" }, mode, input(ctx)), false);
  }
  assert.equal(matchesFilters({ field: "spec.x", value: "body" }, "current", input(ctx)), true);
  assert.equal(matchesFilters({ field: "spec.x", value: "old" }, "current", input(ctx)), false);
  assert.equal(matchesFilters({ field: "spec.x", value: "new" }, "current", input(ctx)), false);
});

Deno.test("value can be PRESENT, ABSENT, or a callback against either side", () => {
  assert.equal(current({ field: "spec.x", value: PRESENT }, kex("x", { spec: { x: 1 } })), true);
  assert.equal(current({ field: "spec.x", value: PRESENT }, kex("x")), false);
  assert.equal(current({ field: "spec.x", value: ABSENT }, kex("x")), true);
  assert.equal(current({ field: "spec.x", value: ABSENT }, kex("x", { spec: { x: 1 } })), false);
  assert.equal(change({ field: "spec.x", value: ABSENT }, "change", { x: 1 }, {}), true);
  assert.equal(change({ field: "spec.x", value: ABSENT }, "change", { x: 1 }, { x: 2 }), false);
  const seen: unknown[] = [];
  const big = (v: unknown): boolean => (seen.push(v), typeof v === "number" && v > 5);
  assert.equal(change({ field: "spec.x", value: big }, "update", { x: 9 }, { x: 1 }), true);
  assert.deepEqual(seen, [1, 9]); // the new side first, then the old side
  seen.length = 0;
  assert.equal(change({ field: "spec.x", value: big }, "update", { x: 1 }, { x: 9 }), true);
  assert.deepEqual(seen, [9]); // the old side is not asked once the new side matched
  assert.equal(change({ field: "spec.x", value: big }, "update", { x: 1 }, { x: 2 }), false);
  assert.equal(current({ field: "spec.x", value: big }, kex("x", { spec: { x: 6 } })), true);
});

Deno.test("a callback value gets undefined for an absent field", () => {
  const seen: unknown[] = [];
  change({ field: "spec.x", value: (v) => (seen.push(v), false) }, "change", null, {});
  assert.deepEqual(seen, [undefined, undefined]);
});

Deno.test("on creation, value ABSENT always matches for change handlers (the old side is absent)", () => {
  assert.equal(change({ field: "spec.x", value: ABSENT }, "change", null, { x: 1 }, "create"), true);
});

Deno.test("literal values compare deeply, and never match an absent field", () => {
  assert.equal(current({ field: "spec", value: { a: [1, 2] } }, kex("x", { spec: { a: [1, 2] } })), true);
  assert.equal(current({ field: "spec", value: { a: [1, 2] } }, kex("x", { spec: { a: [2, 1] } })), false);
  assert.equal(current({ field: "spec.n", value: 1 }, kex("x", { spec: { n: "1" } })), false);
  assert.equal(current({ field: "spec.flag", value: false }, kex("x", { spec: {} })), false);
  assert.equal(current({ field: "spec.flag", value: false }, kex("x", { spec: { flag: false } })), true);
});

Deno.test("a field in status is looked up like any other field", () => {
  const body = { ...kex("x"), status: { phase: "Ready" } } as KubernetesObject;
  assert.equal(current({ field: "status.phase", value: "Ready" }, body), true);
  assert.equal(
    matchesFilters({ field: "status.phase", value: "Ready" }, "update", {
      body,
      old: { status: { phase: "Pending" } },
      new: { status: { phase: "Ready" } },
      context: { name: "x" },
    }),
    true,
  );
});

Deno.test("with a field, update-mode handlers need the field to change; change-mode handlers do not", () => {
  assert.equal(change({ field: "spec.x" }, "update", { x: 1, y: 1 }, { x: 1, y: 2 }), false);
  assert.equal(change({ field: "spec.x" }, "change", { x: 1, y: 1 }, { x: 1, y: 2 }), true);
  assert.equal(change({ field: "spec.x" }, "update", { x: 1 }, { x: 2 }), true);
  assert.equal(change({ field: "spec.x" }, "update", { x: 1 }, {}), true); // removal counts
  assert.equal(change({ field: "spec.x" }, "update", {}, { x: 1 }), true); // addition counts
  assert.equal(change({ field: "spec.x" }, "update", { x: null }, {}), true); // null differs from absent
  assert.equal(change({ field: "spec.x" }, "update", { x: [1, { a: 1 }] }, { x: [1, { a: 1 }] }), false);
  assert.equal(change({}, "update", { x: 1 }, { x: 1 }), true); // no field: no field requirement
});

Deno.test("field handlers fire on creation when the field is set", () => {
  assert.equal(change({ field: "spec.a" }, "update", null, { a: 1 }, "create"), true);
  assert.equal(change({ field: "spec.a" }, "update", null, { b: 1 }, "create"), false);
});

// --- 5.5 old / new --------------------------------------------------------------------------------

Deno.test("old=ABSENT, new=PRESENT fires only when the field is added", () => {
  const options: FilterOptions<TestContext> = { field: "spec.x", old: ABSENT, new: PRESENT };
  assert.equal(change(options, "update", {}, { x: 1 }), true);
  assert.equal(change(options, "update", { x: 1 }, { x: 2 }), false);
  assert.equal(change(options, "update", { x: 1 }, {}), false);
  assert.equal(change(options, "update", { y: 1 }, { y: 2 }), false);
});

Deno.test("old and new each check their own side; an unspecified side is unchecked", () => {
  assert.equal(change({ field: "spec.x", old: "a" }, "update", { x: "a" }, { x: "b" }), true);
  assert.equal(change({ field: "spec.x", old: "a" }, "update", { x: "b" }, { x: "a" }), false);
  assert.equal(change({ field: "spec.x", new: "a" }, "update", { x: "b" }, { x: "a" }), true);
  assert.equal(change({ field: "spec.x", new: "a" }, "update", { x: "a" }, { x: "b" }), false);
  assert.equal(change({ field: "spec.x", old: "a", new: "b" }, "update", { x: "a" }, { x: "b" }), true);
  assert.equal(change({ field: "spec.x", old: "a", new: "c" }, "update", { x: "a" }, { x: "b" }), false);
});

Deno.test("old and new also require an actual change in update mode", () => {
  assert.equal(change({ field: "spec.x", old: "a" }, "update", { x: "a", y: 1 }, { x: "a", y: 2 }), false);
  assert.equal(change({ field: "spec.x", new: PRESENT }, "update", { x: 1, y: 1 }, { x: 1, y: 2 }), false);
});

Deno.test("old/new callbacks get the side's value (undefined if absent) and the context", () => {
  const seen: unknown[] = [];
  const options: FilterOptions<TestContext> = {
    field: "spec.x",
    old: (v, ctx) => (seen.push(["old", v, ctx.name]), true),
    new: (v, ctx) => (seen.push(["new", v, ctx.name]), true),
  };
  assert.equal(change(options, "update", {}, { x: 2 }), true);
  assert.deepEqual(seen, [["old", undefined, "kex1"], ["new", 2, "kex1"]]);
});

Deno.test("old/new are not checked for event-like handlers", () => {
  assert.equal(current({ field: "spec.x", old: "never", new: "never" }, kex("x", { spec: { x: 1 } })), true);
});

// --- 5.6 when -------------------------------------------------------------------------------------

Deno.test("when=name starts with x- fires for x-1 only", () => {
  const options: FilterOptions<TestContext> = { when: ({ name }) => name.startsWith("x-") };
  assert.equal(current(options, kex("x-1")), true);
  assert.equal(current(options, kex("y-1")), false);
});

Deno.test("when is evaluated last, only after all other criteria matched", () => {
  let calls = 0;
  const options: FilterOptions<TestContext> = { labels: { a: "b" }, when: () => (calls++, true) };
  assert.equal(current(options, kex("x")), false);
  assert.equal(calls, 0);
  assert.equal(current(options, kex("x", { labels: { a: "b" } })), true);
  assert.equal(calls, 1);
  assert.equal(change({ field: "spec.x", when: () => (calls++, true) }, "update", { x: 1 }, { x: 1 }), false);
  assert.equal(calls, 1);
});

Deno.test("the context is built lazily, once, and only if a callback needs it", () => {
  let builds = 0;
  const context = (): TestContext => (builds++, { name: "lazy" });
  const body = kex("x", { labels: { a: "1" } });
  assert.equal(matchesFilters({ labels: { a: "1" } }, "current", { body, context }), true);
  assert.equal(builds, 0);
  const options: FilterOptions<TestContext> = {
    labels: { a: (v) => v === "1" },
    annotations: { b: (v) => v === undefined },
    when: ({ name }) => name === "lazy",
  };
  assert.equal(matchesFilters(options, "current", { body, context }), true);
  assert.equal(builds, 1);
});

Deno.test("a field handler's when sees the whole context, e.g. reason (no firing on creation)", () => {
  const options: FilterOptions<TestContext> = { field: "spec.a", when: ({ reason }) => reason === "update" };
  assert.equal(change(options, "update", null, { a: 1 }, "create"), false);
  assert.equal(change(options, "update", { a: 1 }, { a: 2 }, "update"), true);
});

// --- 5.7 combinators ------------------------------------------------------------------------------

Deno.test("when=not(name == 'a') skips the object a", () => {
  const options: FilterOptions<TestContext> = { when: not(({ name }) => name === "a") };
  assert.equal(current(options, kex("a")), false);
  assert.equal(current(options, kex("b")), true);
});

Deno.test("allOf, anyOf, noneOf follow all/any/none semantics, also for empty lists", () => {
  const t = (): boolean => true;
  const f = (): boolean => false;
  assert.equal(allOf([t, t])(), true);
  assert.equal(allOf([t, f])(), false);
  assert.equal(allOf([])(), true);
  assert.equal(anyOf([f, t])(), true);
  assert.equal(anyOf([f, f])(), false);
  assert.equal(anyOf([])(), false);
  assert.equal(noneOf([f, f])(), true);
  assert.equal(noneOf([f, t])(), false);
  assert.equal(noneOf([])(), true);
  assert.equal(not(t)(), false);
  assert.equal(not(f)(), true);
});

Deno.test("combinators short-circuit and pass all arguments through", () => {
  const seen: unknown[][] = [];
  const record = (result: boolean) => (...args: unknown[]): boolean => (seen.push(args), result);
  assert.equal(allOf([record(false), record(true)])(1, 2), false);
  assert.deepEqual(seen, [[1, 2]]);
  seen.length = 0;
  assert.equal(anyOf([record(true), record(false)])("v", { name: "n" }), true);
  assert.deepEqual(seen, [["v", { name: "n" }]]);
});

Deno.test("combinators work for per-value callbacks too", () => {
  const options: FilterOptions<TestContext> = {
    labels: { tier: anyOf([(v) => v === "front", (v) => v === "back"]) },
    annotations: { skip: noneOf([(v) => v === "yes", (v) => v === "true"]) },
    field: "spec.size",
    value: allOf([(v) => typeof v === "number", (v, ctx) => ctx.name === "x" && (v as number) > 1]),
  };
  const body = (tier: string, skip: string | undefined, size: unknown) =>
    kex("x", { labels: { tier }, annotations: skip === undefined ? {} : { skip }, spec: { size } });
  assert.equal(current(options, body("front", undefined, 2)), true);
  assert.equal(current(options, body("back", "no", 2)), true);
  assert.equal(current(options, body("middle", undefined, 2)), false);
  assert.equal(current(options, body("front", "yes", 2)), false);
  assert.equal(current(options, body("front", undefined, 1)), false);
  assert.equal(current(options, body("front", undefined, "2")), false);
});

Deno.test("combinators copy their list (later changes to it do not matter)", () => {
  const fns = [(): boolean => true];
  const combined = allOf(fns);
  fns.push(() => false);
  assert.equal(combined(), true);
});

// --- 5.9 pre-matching -----------------------------------------------------------------------------

Deno.test("prematch decides by labels for finalizers: f=y matches, no label does not", () => {
  const options = { labels: { f: "y" } };
  const ctx = { name: "x" };
  assert.equal(prematchesFilters(options, "change", { body: kex("x", { labels: { f: "y" } }), context: ctx }), true);
  assert.equal(prematchesFilters(options, "change", { body: kex("x"), context: ctx }), false);
});

Deno.test("prematch ignores the change requirement and old/new, but not field values or when", () => {
  const body = kex("x", { spec: { x: 1, y: 2 } });
  const input: MatchInput<TestContext> = { body, old: { spec: { x: 1, y: 1 } }, new: body, context: { name: "x" } };
  assert.equal(matchesFilters({ field: "spec.x" }, "update", input), false);
  assert.equal(prematchesFilters({ field: "spec.x" }, "update", input), true);
  assert.equal(prematchesFilters({ field: "spec.x", old: "never", new: "never" }, "update", input), true);
  assert.equal(prematchesFilters({ field: "spec.z" }, "update", input), false);
  assert.equal(prematchesFilters({ field: "spec.x", value: 2 }, "update", input), false);
  assert.equal(prematchesFilters({ when: () => false }, "update", input), false);
});

// --- 4.1 field suffixes ---------------------------------------------------------------------------

Deno.test("handler ids with a field get /<dotted.field> appended", () => {
  assert.equal("fn" + fieldSuffix("spec.a"), "fn/spec.a");
  assert.equal("fn" + fieldSuffix(["metadata", "labels"]), "fn/metadata.labels");
  assert.equal("fn" + fieldSuffix(undefined), "fn");
  assert.equal("fn" + fieldSuffix([]), "fn");
});

// --- 4.17 registration-time validation ------------------------------------------------------------

Deno.test("value/old/new without field are rejected", () => {
  const cases: FilterOptions[] = [{ value: 1 }, { old: 1 }, { new: 1 }, { value: PRESENT }];
  for (const options of cases) {
    assert.throws(() => validateFilters("update", options), {
      name: "TypeError",
      message: /kopf\.on\.update\(\): value\/old\/new filters are specified without a mandatory field/,
    });
  }
});

Deno.test("value together with old or new is rejected", () => {
  assert.throws(() => validateFilters("update", { field: "spec.x", value: 1, old: 2 }), {
    name: "TypeError",
    message: /either value or old\/new can be defined, not both/,
  });
  assert.throws(() => validateFilters("field", { field: "spec.x", value: 1, new: 2 }), TypeError);
});

Deno.test("old/new are rejected outside update and field handlers, naming the allowed kinds", () => {
  for (const kind of ["create", "resume", "delete", "event", "timer", "daemon", "index", "validate", "mutate"]) {
    assert.throws(() => validateFilters(kind, { field: "spec.x", old: 1 }), {
      name: "TypeError",
      message: new RegExp(`kopf\\.on\\.${kind}\\(\\): old/new filters can only be used in on\\.update and on\\.field`),
    });
  }
  validateFilters("update", { field: "spec.x", old: ABSENT, new: PRESENT });
  validateFilters("field", { field: "spec.x", new: (v) => v === 1 });
});

Deno.test("null as value/old/new is rejected (ambiguous: use ABSENT or a callback)", () => {
  for (const key of ["value", "old", "new"]) {
    const options = { field: "spec.x", [key]: null } as FilterOptions;
    assert.throws(() => validateFilters("update", options), { name: "TypeError", message: /null is not supported/ });
  }
});

Deno.test("the field must be a non-empty string or array of strings", () => {
  // Whether a kind requires a field is the registration's rule: sub-handlers of on.field need none.
  validateFilters("field", {});
  assert.throws(() => validateFilters("update", { field: "" }), { name: "TypeError", message: /empty/ });
  assert.throws(() => validateFilters("update", { field: [] }), TypeError);
  assert.throws(() => validateFilters("update", { field: "spec..x" }), TypeError);
  assert.throws(() => validateFilters("update", { field: 5 as unknown as string }), {
    name: "TypeError",
    message: /kopf\.on\.update\(\): A field must be a dotted string or an array of strings/,
  });
  validateFilters("field", { field: ["spec", "x"] });
});

Deno.test("label/annotation filters must be objects of strings, markers or functions", () => {
  assert.throws(() => validateFilters("create", { labels: "a=b" as unknown as Record<string, string> }), TypeError);
  assert.throws(
    () => validateFilters("create", { labels: [["a", "b"]] as unknown as Record<string, string> }),
    TypeError,
  );
  assert.throws(() => validateFilters("create", { labels: { a: 1 } as unknown as Record<string, string> }), {
    name: "TypeError",
    message: /label filter "a" must be a string, kopf\.PRESENT, kopf\.ABSENT or a function; got number/,
  });
  validateFilters("create", { labels: { a: "b", c: PRESENT, d: ABSENT, e: () => true }, annotations: {} });
});

Deno.test("when must be a function", () => {
  assert.throws(() => validateFilters("timer", { when: true as unknown as () => boolean }), {
    name: "TypeError",
    message: /kopf\.on\.timer\(\): when must be a function/,
  });
  validateFilters("timer", { when: null });
  validateFilters("timer", { when: () => true });
});

Deno.test("options must be an object and the kind must take filters", () => {
  assert.throws(() => validateFilters("create", null as unknown as FilterOptions), TypeError);
  assert.throws(() => validateFilters("startup", {}), { name: "TypeError", message: /take no filters/ });
});

Deno.test("matchModeOf: each handler kind's matching mode", () => {
  assert.deepEqual(
    ["create", "resume", "delete", "update", "field", "event", "daemon", "timer", "index", "validate", "mutate"].map(
      matchModeOf,
    ),
    [
      "change",
      "change",
      "change",
      "update",
      "update",
      "current",
      "current",
      "current",
      "current",
      "current",
      "current",
    ],
  );
  assert.throws(() => matchModeOf("cleanup"), TypeError);
});

// --- typing --------------------------------------------------------------------------------------

Deno.test("FilterContext: the handler contexts are assignable to it, and callbacks are typed from it", () => {
  const fromChange = (ctx: ChangeContext): FilterContext => ctx;
  const fromEvent = (ctx: EventContext): FilterContext => ctx;
  const fromResource = (ctx: ResourceContext): FilterContext => ctx;
  const options: FilterOptions = {
    labels: { a: (value, ctx) => value === ctx.name },
    when: not(({ name, reason }) => name === "a" && reason === "update"),
    field: "spec.x",
    value: anyOf([(v) => v === 1, (_v, { namespace }) => namespace === "ns"]),
  };
  assert.deepEqual([typeof fromChange, typeof fromEvent, typeof fromResource], ["function", "function", "function"]);
  assert.equal(typeof options.when, "function");
});
