import assert from "node:assert/strict";
import { type CauseInput, detectCause } from "./causes.ts";

const base: CauseInput = {
  type: "MODIFIED",
  deleting: false,
  finalized: false,
  handledBefore: true,
  changed: false,
  initial: false,
};

Deno.test("causes are decided in Kopf's order", () => {
  assert.equal(detectCause({ ...base, type: "DELETED", deleting: true, finalized: true }), "gone");
  assert.equal(detectCause({ ...base, deleting: true, finalized: false }), "free");
  assert.equal(detectCause({ ...base, deleting: true, finalized: true, handledBefore: false }), "delete");
  assert.equal(detectCause({ ...base, handledBefore: false, initial: true }), "create");
  assert.equal(detectCause({ ...base, initial: true }), "resume");
  assert.equal(detectCause({ ...base, initial: true, changed: true }), "update");
  assert.equal(detectCause(base), "noop");
  assert.equal(detectCause({ ...base, changed: true }), "update");
});
