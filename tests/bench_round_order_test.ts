/** The benches' order of contestants per round (bench/round_order.ts): no contestant is kept to the late positions. */

import assert from "node:assert/strict";
import { roundOrder } from "../bench/round_order.ts";

/** Each contestant's positions added up over the rounds. */
function positionSums(count: number, rounds: number): number[] {
  const contestants = Array.from({ length: count }, (_, index) => index);
  const sums = contestants.map(() => 0);
  for (let round = 1; round <= rounds; round++) {
    const order = roundOrder(contestants, round);
    assert.deepEqual([...order].sort((a, b) => a - b), contestants, "every round runs every contestant once");
    order.forEach((contestant, position) => sums[contestant] += position);
  }
  return sums;
}

Deno.test("an even number of rounds gives every contestant the same positions in sum", () => {
  for (const count of [1, 2, 3, 6, 7]) {
    for (const rounds of [2, 4, 6]) {
      const sums = positionSums(count, rounds);
      assert.deepEqual(sums, sums.map(() => (count - 1) / 2 * rounds), `${count} contestants, ${rounds} rounds`);
    }
  }
});

Deno.test("three rounds of six: every other round backwards, the third starting half-way", () => {
  assert.deepEqual(roundOrder(["a", "b", "c", "d", "e", "f"], 1), ["a", "b", "c", "d", "e", "f"]);
  assert.deepEqual(roundOrder(["a", "b", "c", "d", "e", "f"], 2), ["f", "e", "d", "c", "b", "a"]);
  assert.deepEqual(roundOrder(["a", "b", "c", "d", "e", "f"], 3), ["d", "e", "f", "a", "b", "c"]);
  const sums = positionSums(6, 3);
  assert.ok(Math.max(...sums.map((sum) => Math.abs(sum - 7.5))) <= 2.5, `${sums}`);
});
