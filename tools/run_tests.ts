/**
 * `deno task test`: starts one LocalCluster for the whole run (building its binaries on first
 * use), runs every test against it, stops it, and ends with a line `N passed, N failed`.
 *
 * Tests find the shared cluster through `KOPF_TEST_KUBECONFIG`; extra arguments go to `deno test`
 * (e.g. `deno task test tests/watching_test.ts --filter 410`).
 *
 * @module
 */

import { LocalCluster } from "../testing.ts";

const started = performance.now();
console.error("Starting the shared LocalCluster for the tests…");
await using cluster = await LocalCluster.start();
console.error(`LocalCluster is up at ${cluster.server} (Kubernetes ${cluster.version}).`);

const child = new Deno.Command(Deno.execPath(), {
  args: ["test", "-A", ...Deno.args],
  env: { KOPF_TEST_KUBECONFIG: cluster.kubeconfig, NO_COLOR: "1" },
  stdout: "piped",
  stderr: "inherit",
}).spawn();

// Echo the output while looking for Deno's closing line, e.g. `ok | 4 passed (2 steps) | 0 failed | 1 ignored (40ms)`.
let summary: string | undefined;
const decoder = new TextDecoderStream();
const pump = child.stdout.pipeThrough(decoder);
let pending = "";
for await (const chunk of pump) {
  await Deno.stdout.write(new TextEncoder().encode(chunk));
  pending += chunk;
  const lines = pending.split("\n");
  pending = lines.pop() ?? "";
  for (const line of lines) {
    if (/^(ok|FAILED) \| \d+ passed/.test(line)) summary = line;
  }
}
const status = await child.status;
await cluster.stop();

const passed = Number(summary?.match(/(\d+) passed/)?.[1] ?? 0);
const failed = Number(summary?.match(/(\d+) failed/)?.[1] ?? (status.success ? 0 : 1));
const ignored = Number(summary?.match(/(\d+) ignored/)?.[1] ?? 0);
const minutes = ((performance.now() - started) / 60000).toFixed(1);
console.log(`\nWall time: ${minutes} min.${ignored ? ` ${ignored} ignored (skipped), not counted as passed.` : ""}`);
console.log(`${passed} passed, ${status.success ? failed : Math.max(failed, 1)} failed`);
Deno.exit(status.success ? 0 : 1);
