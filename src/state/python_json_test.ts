// Compact JSON as Python's json.dumps(value, separators=(',', ':')) writes it: escaping, floats, key order.
//
// The expected strings were produced with CPython 3.11's json (the module Kopf 1.44.6 encodes with):
//   json.dumps(json.loads(TEXT), separators=(',', ':'))  for the numbers (TEXT as in the test),
//   json.dumps(VALUE, separators=(',', ':'))             for the strings and objects.

import assert from "node:assert/strict";
import { dumpPythonJson, formatPythonNumber, quotePythonString } from "./python_json.ts";

Deno.test("python json: floats in repr notation, integers as integers", () => {
  const text =
    "[0.00001, 0.0001, 0.000099, 1.5e-07, 123.456, 1e+21, 1e22, 100000000000000000000, 0.30000000000000004, 5e-324, 1.7976931348623157e308]";
  assert.equal(
    dumpPythonJson(JSON.parse(text)),
    "[1e-05,0.0001,9.9e-05,1.5e-07,123.456,1e+21,1e+22,100000000000000000000,0.30000000000000004,5e-324,1.7976931348623157e+308]",
  );
  assert.equal(formatPythonNumber(-0.00001), "-1e-05");
  assert.equal(formatPythonNumber(-0), "0");
  assert.throws(() => formatPythonNumber(Number.NaN), RangeError);
});

Deno.test("python json: ASCII-only escaping with surrogate pairs, as ensure_ascii does", () => {
  const strings = ["\u0000\u001f\u007f\u0080\u00ff\u2028\ufeff\ud800", "\u{1F600}", 'a"b\\c/d', "\b\f\n\r\t"];
  assert.equal(
    dumpPythonJson(strings),
    String.raw`["\u0000\u001f\u007f\u0080\u00ff\u2028\ufeff\ud800","\ud83d\ude00","a\"b\\c/d","\b\f\n\r\t"]`,
  );
  assert.equal(quotePythonString("ünï"), String.raw`"\u00fcn\u00ef"`);
});

Deno.test("python json: insertion order, empty containers, null and booleans; undefined members skipped", () => {
  assert.equal(dumpPythonJson({ b: 1, a: [], c: {}, d: null, e: false }), '{"b":1,"a":[],"c":{},"d":null,"e":false}');
  assert.equal(dumpPythonJson({ a: undefined, b: 2 }), '{"b":2}');
});

Deno.test("python json: maps with integer-like keys are written in the API server's (sorted) order", () => {
  // JavaScript moves "9" and "10" to the front in numeric order; the server (and so Kopf) has them sorted as text.
  const parsed = JSON.parse('{"10":"x","9":"y","a":"1","b":"2"}');
  assert.deepEqual(Object.keys(parsed), ["9", "10", "a", "b"]);
  assert.equal(dumpPythonJson(parsed), '{"10":"x","9":"y","a":"1","b":"2"}');
});
