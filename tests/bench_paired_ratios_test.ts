/** bench/process_stats.ts's comparison of two contestants round by round. */

import assert from "node:assert/strict";
import { pairedRatios } from "../bench/process_stats.ts";

Deno.test("paired ratios follow the rounds: a drift that both sides share cancels out", () => {
  // The second side is 10% dearer in every round, while the rounds themselves drift by half.
  const before = [0.40, 0.60, 0.50, 0.45];
  const after = before.map((value) => value * 1.1);
  const ratios = pairedRatios(after, before);
  assert.ok(Math.abs(ratios.median - 1.1) < 1e-9, `median ${ratios.median}`);
  assert.ok(Math.abs(ratios.lowest - 1.1) < 1e-9 && Math.abs(ratios.highest - 1.1) < 1e-9);
});

Deno.test("paired ratios give the median of the rounds' ratios, with the lowest and the highest", () => {
  const ratios = pairedRatios([1, 3, 2], [1, 2, 4]);
  assert.deepEqual(ratios, { median: 1, lowest: 0.5, highest: 1.5 });
});

Deno.test("paired ratios refuse rounds that do not pair", () => {
  assert.throws(() => pairedRatios([1, 2], [1]), /as many rounds on each side/);
  assert.throws(() => pairedRatios([], []), /at least one/);
});
