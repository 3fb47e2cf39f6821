/** bench/bytes_run.ts: the source bytes each function ran, from V8's block coverage. */

import assert from "node:assert/strict";
import { bytesRun, type ScriptCoverage } from "../bench/bytes_run.ts";

Deno.test("a block counts by its own count, a nested function by its own, each less what is nested in it", () => {
  const script: ScriptCoverage = {
    url: "file:///example.js",
    functions: [
      // 0-100 ran 10 times; its block 20-40 never ran; the function 50-80 nested in it ran 3 times.
      {
        functionName: "outer",
        ranges: [{ startOffset: 0, endOffset: 100, count: 10 }, { startOffset: 20, endOffset: 40, count: 0 }],
      },
      // Its loop's body (60-70) turned 12 times.
      {
        functionName: "inner",
        ranges: [{ startOffset: 50, endOffset: 80, count: 3 }, { startOffset: 60, endOffset: 70, count: 12 }],
      },
    ],
  };
  // outer: (100 - 20 - 30) bytes x 10; inner: (30 - 10) x 3 + 10 x 12.
  assert.deepEqual(bytesRun(script), [500, 180]);
});

Deno.test("a function that never ran, and its blocks, ran no bytes", () => {
  const script: ScriptCoverage = {
    url: "file:///example.js",
    functions: [{
      functionName: "idle",
      ranges: [{ startOffset: 0, endOffset: 40, count: 0 }, { startOffset: 10, endOffset: 20, count: 0 }],
    }],
  };
  assert.deepEqual(bytesRun(script), [0]);
});
