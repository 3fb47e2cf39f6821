/**
 * The house rules over the public surface: `@kopf/kopf` stays small enough to hold in mind (at
 * most 120 names; the plumbing is in `@kopf/kopf/advanced`), keeps every name of the API contract,
 * and exports each name once: nothing is both in `mod.ts` and in `advanced.ts`, and the options of
 * the registrations live only under `kopf.on`.
 *
 * Counted with `deno doc --json`, so that types count as well as values; the same count by hand:
 * `deno doc --json mod.ts | jq '.nodes[].symbols | length'`.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";

const ROOT = new URL("../", import.meta.url);

/** Declarations that make a name usable as a value (classes are both value and type). */
const VALUE_KINDS = new Set(["function", "variable", "class", "enum", "namespace"]);

interface Exported {
  values: string[];
  types: string[];
}

/** The names an entry point exports, as `deno doc` sees them: values and type-only names apart. */
async function exportedBy(entryPoint: string): Promise<Exported> {
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", entryPoint],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.ok(result.success, `deno doc --json ${entryPoint} failed`);
  const json = JSON.parse(new TextDecoder().decode(result.stdout));
  const modules = Object.values(json.nodes ?? {}) as {
    symbols?: { name: string; declarations: { kind: string }[] }[];
  }[];
  assert.equal(modules.length, 1, `deno doc --json ${entryPoint}: one module expected; has its format changed?`);
  const symbols = modules[0].symbols ?? [];
  const isValue = (symbol: (typeof symbols)[number]) => symbol.declarations.some((d) => VALUE_KINDS.has(d.kind));
  return {
    values: symbols.filter(isValue).map((symbol) => symbol.name).sort(),
    types: symbols.filter((symbol) => !isValue(symbol)).map((symbol) => symbol.name).sort(),
  };
}

/**
 * The names the API contract gives under `kopf.` (shared/API.md), and the contexts handlers are
 * annotated with: an external suite imports them, so they stay in `mod.ts` under these names.
 */
const CONTRACT = [
  "on",
  "operator",
  "Registry",
  "timer",
  "daemon",
  "index",
  "subhandler",
  "register",
  "execute",
  "TemporaryError",
  "PermanentError",
  "HandlerTimeoutError",
  "HandlerRetriesError",
  "AdmissionError",
  "event",
  "info",
  "warn",
  "exception",
  "adopt",
  "label",
  "harmonizeNaming",
  "adjustNamespace",
  "appendOwnerReference",
  "removeOwnerReference",
  "buildOwnerReference",
  "buildObjectReference",
  "sleep",
  "PRESENT",
  "ABSENT",
  "EVERYTHING",
  "allOf",
  "anyOf",
  "noneOf",
  "not",
  "Patch",
  "Settings",
  "AnnotationsProgressStorage",
  "StatusProgressStorage",
  "SmartProgressStorage",
  "MultiProgressStorage",
  "AnnotationsDiffBaseStorage",
  "StatusDiffBaseStorage",
  "MultiDiffBaseStorage",
  "WebhookServer",
  "ConnectionInfo",
  "loginWithKubeconfig",
  "loginWithServiceAccount",
  "LoginError",
  "connect",
  "ApiError",
  "ApiBadRequestError",
  "ApiUnauthorizedError",
  "ApiForbiddenError",
  "ApiNotFoundError",
  "ApiConflictError",
  "ApiGoneError",
  "ApiUnprocessableError",
  "ApiTooManyRequestsError",
  "ApiServerError",
  "ResourceContext",
  "ChangeContext",
  "EventContext",
  "DaemonContext",
  "TimerContext",
  "IndexContext",
  "ActivityContext",
  "AdmissionContext",
  "Memo",
  "Index",
  "Store",
  "Indices",
];

/** The registration functions of `kopf.on` that the contract names. */
const ON = [
  "create",
  "update",
  "delete",
  "resume",
  "field",
  "event",
  "timer",
  "daemon",
  "index",
  "validate",
  "mutate",
  "conversion",
  "startup",
  "cleanup",
  "login",
  "probe",
];

Deno.test("mod.ts exports at most 120 names, every name of the contract among them", async () => {
  const { values, types } = await exportedBy("mod.ts");
  const all = new Set([...values, ...types]);
  assert.ok(all.size > 50, `only ${all.size} names read from mod.ts: is deno doc's output read right?`);
  assert.ok(
    all.size <= 120,
    `mod.ts exports ${all.size} names (${values.length} values, ${types.length} types), more than 120: ` +
      "move what only extensions or embedders need to advanced.ts.",
  );
  const missing = CONTRACT.filter((name) => !all.has(name));
  assert.deepEqual(missing, [], `names of the API contract no longer exported by mod.ts: ${missing.join(", ")}`);
});

Deno.test("kopf.on has every registration function, and kopf.timer/daemon/index are the same functions", () => {
  const on = kopf.on as unknown as Record<string, unknown>;
  assert.deepEqual(ON.filter((name) => typeof on[name] !== "function"), []);
  assert.equal(kopf.timer, kopf.on.timer);
  assert.equal(kopf.daemon, kopf.on.daemon);
  assert.equal(kopf.index, kopf.on.index);
});

Deno.test("each name is exported once: not by both mod.ts and advanced.ts, options only under kopf.on", async () => {
  const main = await exportedBy("mod.ts");
  const advanced = await exportedBy("advanced.ts");
  const on = await exportedBy("on.ts");
  const top = new Set([...main.values, ...main.types]);
  assert.ok(advanced.types.length > 0 && on.types.length > 0, "no types read from advanced.ts or on.ts");
  assert.deepEqual([...advanced.values, ...advanced.types].filter((name) => top.has(name)), []);
  // The registration functions timer, daemon and index are also at the top (the contract says so),
  // and `event` is two functions by contract (`kopf.event` posts an Event, `kopf.on.event` registers
  // a handler of watch events); the options types are not: `kopf.on.TimerOptions` is the one name.
  assert.deepEqual(
    [...on.values, ...on.types].filter((name) => top.has(name)).sort(),
    ["daemon", "event", "index", "timer"],
  );
});
