// Progress records: Kopf's field order, compact JSON, nulls, escaping; reading; the "same record" test.
// The expected strings come from the real Kopf 1.44.6: see reference_test.ts.

import assert from "node:assert/strict";
import {
  completeProgressRecord,
  decodeProgressRecord,
  encodeProgressRecord,
  PROGRESS_RECORD_FIELDS,
  sameProgressRecord,
} from "./progress.ts";
import { R1, R1_ENCODED, R1_VERBOSE, R2, R2_ENCODED, R3, R3_ENCODED } from "./reference_test.ts";

Deno.test("progress: records are encoded byte for byte as Kopf encodes them", () => {
  assert.equal(encodeProgressRecord(R1), R1_ENCODED);
  assert.equal(encodeProgressRecord(R2), R2_ENCODED);
  assert.equal(encodeProgressRecord(R3), R3_ENCODED);
  assert.equal(encodeProgressRecord(R1, { verbose: true }), R1_VERBOSE);
});

Deno.test("progress: absent fields are nulls; field order is Kopf's whatever the record's order", () => {
  const { subrefs: _, stopped: __, message, failure, ...rest } = R1;
  const shuffled = { message, failure, ...rest };
  assert.equal(encodeProgressRecord(shuffled), R1_ENCODED);
  assert.equal(encodeProgressRecord(shuffled, { verbose: true }), R1_VERBOSE);
  assert.deepEqual(Object.keys(completeProgressRecord({})), [...PROGRESS_RECORD_FIELDS]);
});

Deno.test("progress: subrefs are sorted, and an empty list is left out (Kopf stores None for it)", () => {
  assert.equal(encodeProgressRecord({ ...R2, subrefs: ["fn/sub2", "fn/sub1"] }), R2_ENCODED);
  assert.equal(encodeProgressRecord({ ...R1, subrefs: [] }), R1_ENCODED);
});

Deno.test("progress: stored records are decoded; JSON null is no record; other junk is an error", () => {
  assert.deepEqual(decodeProgressRecord(R2_ENCODED), completeRecordWithoutNulls(R2));
  assert.deepEqual(decodeProgressRecord(R3_ENCODED)?.message, R3.message);
  assert.equal(decodeProgressRecord("null"), null);
  assert.throws(() => decodeProgressRecord("{", "The annotation a/b"), /The annotation a\/b holds no valid JSON/);
  assert.throws(() => decodeProgressRecord("[1]", "The annotation a/b"), /not a progress record/);
});

Deno.test("progress: a record is the same as the stored one if all non-null values are equal (Python's ==)", () => {
  assert.equal(sameProgressRecord(R1, JSON.parse(R1_ENCODED)), true);
  assert.equal(sameProgressRecord(R1, JSON.parse(R1_VERBOSE)), true);
  assert.equal(sameProgressRecord(R2, JSON.parse(R2_ENCODED)), true);
  assert.equal(sameProgressRecord({ ...R1, retries: 2 }, JSON.parse(R1_ENCODED)), false);
  assert.equal(sameProgressRecord({ ...R1, message: null }, JSON.parse(R1_ENCODED)), false);
  assert.equal(sameProgressRecord({ ...R2, subrefs: ["fn/sub1"] }, JSON.parse(R2_ENCODED)), false);
  assert.equal(sameProgressRecord(R1, null), false);
  assert.equal(sameProgressRecord({}, null), false); // Kopf: {} != None, so an empty record is written
  assert.equal(sameProgressRecord({}, {}), true);
  assert.equal(sameProgressRecord({ retries: 1 }, { retries: true }), true); // 1 == True in Python
  assert.equal(sameProgressRecord({ retries: 1 }, { retries: 1, extra: "x" }), false);
});

function completeRecordWithoutNulls(record: object): object {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null));
}
