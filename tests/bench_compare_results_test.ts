/** bench/compare_results.ts's table: the operator's CPU over the API server's, taken round by round. */

import assert from "node:assert/strict";
import { Results } from "../bench/compare_results.ts";

/** The table's lines as `print()` writes them. */
function printed(results: Results, bursts: number): string[] {
  const lines: string[] = [];
  const log = console.log;
  console.log = (line: string) => lines.push(...String(line).split("\n"));
  try {
    results.print({
      throughputSizes: [],
      memorySizes: [],
      burst: 500,
      bursts,
      lifecycle: 0,
      idleSeconds: 5,
      restartAt: 0,
      rounds: 3,
    });
  } finally {
    console.log = log;
  }
  return lines;
}

Deno.test("compare's table: the operator's CPU over the API server's is the median of each round's quotient", () => {
  const results = new Results(["lean", "raw"]);
  // A drift that the operator's CPU follows: the rounds' quotients are 0.25, 0.20 and 0.30 (median 0.25), where the
  // medians of the two (2 ms over 10 ms) would give 0.20.
  for (const [cpu, server] of [[0.001, 0.004], [0.002, 0.010], [0.003, 0.010]]) {
    results.add("lean", "burstCpu", cpu);
    results.add("lean", "burstServerCpu", server);
    results.add("lean", "lastBurstCpu", cpu / 2);
    results.add("lean", "lastBurstServerCpu", server);
  }
  // Rounds without the API server's CPU (0: not measured) are left out, not divided by.
  results.add("raw", "burstCpu", 0.001);
  results.add("raw", "burstServerCpu", 0);
  const lines = printed(results, 2);
  const shares = lines.filter((line) => line.startsWith("| … operator CPU over kube-apiserver's and etcd's"));
  assert.equal(shares.length, 2, lines.join("\n"));
  assert.match(shares[0], /\| 0\.250 \| – \| – \|$/);
  assert.match(shares[1], /\| 0\.125 \| – \| – \|$/);
});
