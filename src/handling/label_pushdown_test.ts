import assert from "node:assert/strict";
import { ABSENT, PRESENT } from "./filters.ts";
import type { ChangeHandler, ResourceHandler } from "./handlers.ts";
import { serverLabelSelector } from "./label_pushdown.ts";
import { Selector } from "../model/selector.ts";

function change(labels?: Record<string, unknown>, requiresFinalizer = false): ChangeHandler {
  return {
    kind: "change",
    reason: requiresFinalizer ? "delete" : "create",
    id: "fn",
    selector: new Selector("configmaps"),
    fn: () => {},
    options: labels ? { labels: labels as never } : {},
    field: undefined,
    requiresFinalizer,
    initial: false,
    deleted: false,
  };
}

function other(kind: "event" | "index" | "daemon" | "timer", labels?: Record<string, unknown>): ResourceHandler {
  return {
    kind,
    id: kind,
    selector: new Selector("configmaps"),
    fn: () => {},
    options: labels ? { labels: labels as never } : {},
    field: undefined,
  } as ResourceHandler;
}

Deno.test("literal values, PRESENT and ABSENT of every handler become one selector", () => {
  assert.equal(serverLabelSelector([change({ app: "x", tier: PRESENT, legacy: ABSENT })]), "!legacy,app=x,tier");
  assert.equal(
    serverLabelSelector([
      change({ app: "x" }),
      other("event", { app: "x" }),
      other("index", { app: "x" }),
      other("daemon", { app: "x" }),
      other("timer", { app: "x" }),
    ]),
    "app=x",
  );
});

Deno.test("only requirements common to all handlers go to the server; the rest stays client-side", () => {
  assert.equal(serverLabelSelector([change({ app: "x", tier: "db" }), other("timer", { app: "x" })]), "app=x");
  assert.equal(serverLabelSelector([change({ app: "x" }), other("timer", { app: "y" })]), undefined);
});

Deno.test("mixed filters fall back to client-side filtering", () => {
  assert.equal(serverLabelSelector([change({ app: "x" }), other("event")]), undefined, "a handler without labels");
  assert.equal(serverLabelSelector([change({ app: () => true })]), undefined, "a callback");
  assert.equal(serverLabelSelector([change({ app: () => true, tier: "db" })]), "tier=db", "the literal part");
  assert.equal(serverLabelSelector([change({ app: "has space" })]), undefined, "not a valid label value");
  assert.equal(serverLabelSelector([change({ "Bad Key": "x" })]), undefined, "not a valid label key");
  assert.equal(serverLabelSelector([]), undefined);
});

Deno.test("no selector with a mandatory deletion handler: its finalizer must be released when labels change", () => {
  assert.equal(serverLabelSelector([change({ app: "x" }), change({ app: "x" }, true)]), undefined);
});
