import assert from "node:assert/strict";
import { AdmissionError, mutate, validate } from "../handling/admission.ts";
import { PermanentError, TemporaryError } from "../handling/errors.ts";
import { Registry } from "../handling/registry.ts";
import { WebhookError } from "../model/admission.ts";
import type { Resource } from "../model/resource.ts";
import { admissionFn, AdmissionMemories, denialOf } from "./admission.ts";

const KEX: Resource = {
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
  singular: "kopfexample",
  namespaced: true,
  preferred: true,
  shortcuts: ["kex"],
  categories: [],
  verbs: ["create", "get", "list", "patch", "watch"],
  subresources: ["status"],
};

function review(operation: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "u",
      operation,
      userInfo: { username: "me" },
      resource: { group: "kopf.dev", version: "v1", resource: "kopfexamples" },
      object: operation === "DELETE" ? null : { metadata: { name: "new", uid: "o1", labels: { a: "1" } }, spec: {} },
      oldObject: operation === "CREATE" ? null : { metadata: { name: "old", uid: "o1" }, spec: { x: 1 } },
      ...extra,
    },
  };
}

function fnFor(registry: Registry, memo: Record<string, unknown> = {}) {
  const handlers = registry.webhooks;
  const resources = new Map(handlers.map((handler) => [handler.id, handler.selector.select([KEX]).resources]));
  return admissionFn({ handlers, resources: () => resources, memories: new AdmissionMemories(memo), indices: {} });
}

Deno.test("denialOf ranks AdmissionError, then PermanentError, then TemporaryError, then others", () => {
  assert.equal(denialOf([]), undefined);
  assert.deepEqual(denialOf([new Error("x"), new TemporaryError("t"), new PermanentError("p")]), {
    code: 500,
    message: "p",
  });
  assert.deepEqual(denialOf([new Error("x"), new TemporaryError("t")]), { code: 500, message: "t" });
  assert.deepEqual(denialOf([new PermanentError("p"), new AdmissionError("a", { code: 418 })]), {
    code: 418,
    message: "a",
  });
  assert.deepEqual(denialOf([new AdmissionError("default")]), { code: 500, message: "default" });
  assert.deepEqual(denialOf(["a string"]), { code: 500, message: "a string" });
  assert.deepEqual(denialOf([new TypeError("")]), { code: 500, message: "TypeError" });
});

Deno.test("all handlers run when no webhook id is hinted; only the hinted one otherwise", async () => {
  const registry = new Registry();
  const calls: string[] = [];
  validate("kex", { registry }, function first() {
    calls.push("first");
  });
  validate("kex", { registry }, function second() {
    calls.push("second");
  });
  const fn = fnFor(registry);
  assert.equal((await fn(review("CREATE"))).response!.allowed, true);
  assert.deepEqual(calls.sort(), ["first", "second"]);
  calls.length = 0;
  await fn(review("CREATE"), { webhook: "second" });
  assert.deepEqual(calls, ["second"]);
  await assert.rejects(fn(review("CREATE"), { webhook: "third" }), (error: unknown) => {
    return error instanceof WebhookError && error.status === 404;
  });
  const unknown = review("CREATE", { resource: { group: "", version: "v1", resource: "pods" } });
  await assert.rejects(fn(unknown), (error: unknown) => error instanceof WebhookError && error.status === 404);
});

Deno.test("the context: body is the new object (old for DELETE), old/new/diff, dryrun, headers, memo", async () => {
  const registry = new Registry();
  const seen: Record<string, unknown>[] = [];
  validate("kex", { registry }, function look(ctx) {
    seen.push({
      name: ctx.name,
      old: ctx.old,
      new: ctx.new,
      diff: ctx.diff,
      dryrun: ctx.dryrun,
      operation: ctx.operation,
      subresource: ctx.subresource,
      userinfo: ctx.userinfo,
      agent: ctx.headers.get("user-agent"),
      sslpeer: ctx.sslpeer,
      resource: ctx.resource.plural,
      param: ctx.param,
    });
  });
  const fn = fnFor(registry);
  await fn(review("UPDATE", { dryRun: true }), { headers: { "User-Agent": "kube" } });
  await fn(review("DELETE"));
  assert.deepEqual(seen[0].name, "new");
  assert.deepEqual(seen[0].old, { metadata: { name: "old", uid: "o1" }, spec: { x: 1 } });
  assert.equal((seen[0].diff as unknown[]).length > 0, true);
  assert.equal(seen[0].dryrun, true);
  assert.equal(seen[0].operation, "UPDATE");
  assert.equal(seen[0].subresource, null);
  assert.deepEqual(seen[0].userinfo, { username: "me" });
  assert.equal(seen[0].agent, "kube");
  assert.deepEqual(seen[0].sslpeer, {});
  assert.equal(seen[0].resource, "kopfexamples");
  assert.equal(seen[1].name, "old", "a deletion reviews the old object");
  assert.equal(seen[1].new, null);
  assert.equal(seen[1].dryrun, false);
});

Deno.test("subresources: none by default, a named one, or * for all", async () => {
  const registry = new Registry();
  const calls: string[] = [];
  for (const [id, subresource] of [["main", undefined], ["status", "status"], ["all", "*"]] as const) {
    validate("kex", { registry, id, ...(subresource ? { subresource } : {}) }, () => {
      calls.push(id);
    });
  }
  const fn = fnFor(registry);
  await fn(review("UPDATE"));
  assert.deepEqual(calls.sort(), ["all", "main"]);
  calls.length = 0;
  await fn(review("UPDATE", { subResource: "status" }));
  assert.deepEqual(calls.sort(), ["all", "status"]);
  calls.length = 0;
  await fn(review("UPDATE", { subResource: "scale" }));
  assert.deepEqual(calls, ["all"]);
});

Deno.test("mutating handlers skip DELETE unless it is their only operation; operations are not re-checked", async () => {
  const registry = new Registry();
  const calls: string[] = [];
  mutate("kex", { registry }, function any() {
    calls.push("any");
  });
  mutate("kex", { registry, operations: ["DELETE"] }, function onlyDelete() {
    calls.push("onlyDelete");
  });
  validate("kex", { registry, operations: ["CREATE"] }, function createOnly() {
    calls.push("createOnly");
  });
  const fn = fnFor(registry);
  await fn(review("DELETE"));
  assert.deepEqual(calls.sort(), ["createOnly", "onlyDelete"]);
});

Deno.test("filters apply; errors deny with the top-ranked one; ignoreFailures admits; patches only from mutations", async () => {
  const registry = new Registry();
  validate("kex", { registry, labels: { a: "2" } }, function filteredOut() {
    throw new AdmissionError("never");
  });
  validate("kex", { registry }, function temporary({ warnings, patch }) {
    warnings.push("temporary ran");
    patch.spec.fromValidation = 1;
    throw new TemporaryError("later");
  });
  validate("kex", { registry, ignoreFailures: true }, function tolerant() {
    throw new Error("tolerated");
  });
  validate("kex", { registry, ignoreFailures: true, when: () => true }, function strict() {
    throw new AdmissionError("denied anyway", { code: 422 });
  });
  const fn = fnFor(registry);
  const response = (await fn(review("CREATE"))).response!;
  assert.equal(response.allowed, false);
  assert.deepEqual(response.status, { code: 422, message: "denied anyway" });
  assert.deepEqual(response.warnings, ["temporary ran"]);
  assert.equal(response.patch, undefined, "validating handlers never return a patch");
  const onlyTemporary = (await fn(review("CREATE"), { webhook: "temporary" })).response!;
  assert.deepEqual(onlyTemporary.status, { code: 500, message: "later" });
  assert.equal((await fn(review("CREATE"), { webhook: "tolerant" })).response!.allowed, true);
  assert.equal((await fn(review("CREATE"), { webhook: "filteredOut" })).response!.allowed, true);

  const mutations = new Registry();
  mutate("kex", { registry: mutations }, function setIt({ patch }) {
    patch.spec.numbers = [1];
  });
  const mutated = (await fnFor(mutations)(review("CREATE"))).response!;
  assert.equal(mutated.patchType, "JSONPatch");
  assert.deepEqual(JSON.parse(atob(mutated.patch!)), [{ op: "add", path: "/spec/numbers", value: [1] }]);
});

Deno.test("a filter callback that throws denies like a handler's error", async () => {
  const registry = new Registry();
  validate("kex", {
    registry,
    when: () => {
      throw new Error("bad filter");
    },
  }, function guarded() {});
  const response = (await fnFor(registry)(review("CREATE"))).response!;
  assert.deepEqual(response.status, { code: 500, message: "bad filter" });
});

Deno.test("memos: CREATE gets a throw-away copy; other operations the object's memo; a shared lookup wins", async () => {
  const registry = new Registry();
  const counts: unknown[] = [];
  validate("kex", { registry }, function count({ memo }) {
    memo.n = ((memo.n as number) ?? 0) + 1;
    counts.push(`${memo.base}:${memo.n}`);
  });
  const base = { base: "op" };
  const fn = fnFor(registry, base);
  for (let i = 0; i < 2; i++) await fn(review("CREATE"));
  for (let i = 0; i < 3; i++) await fn(review("UPDATE"));
  assert.deepEqual(counts, ["op:1", "op:1", "op:1", "op:2", "op:3"]);
  assert.deepEqual(base, { base: "op" }, "the operator's memo is never changed");

  const shared = { base: "shared" };
  const memories = new AdmissionMemories(base, { lookup: (uid) => uid === "o1" ? shared : undefined });
  assert.equal(memories.recall({ metadata: { uid: "o1" } }, "UPDATE"), shared);
  assert.notEqual(memories.recall({ metadata: { uid: "o1" } }, "CREATE"), shared);
  const own = memories.recall({ metadata: { uid: "o2" } }, "DELETE");
  assert.equal(memories.recall({ metadata: { uid: "o2" } }, "UPDATE"), own);
});
