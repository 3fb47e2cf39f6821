/**
 * The bundle of `kopf build` against running from source: its size, and for each round the time
 * from spawning `deno run` until an object that exists before the start has been handled (its
 * `status.createFn`), for examples/01-minimal — the bundle with the minimal permissions from an
 * empty folder, the source with `deno run -A cli/main.ts run … examples/01-minimal/example.ts`.
 *
 * Usage: `deno run -A bench/bundle_startup.ts [--rounds 5]`.
 *
 * @module
 */

import { commandLine } from "./command_line.ts";
import { join } from "node:path";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { prepareExamples } from "./example_namespace.ts";

const { values } = commandLine({ options: { rounds: { type: "string", default: "5" } } });
const rounds = Number(values.rounds);
const root = new URL("..", import.meta.url).pathname;

exitOnSignals();
await using cluster = await LocalCluster.start();
using client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
const namespace = "bench";
const collection = await prepareExamples(client, namespace);

const folder = await Deno.makeTempDir({ prefix: "kopf-bench-bundle-" });
const bundle = join(folder, "operator.js");
const built = await new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "cli/main.ts", "build", "examples/01-minimal/example.ts", "-o", bundle],
  cwd: root,
}).output();
if (!built.success) throw new Error(`kopf build failed: ${new TextDecoder().decode(built.stderr)}`);
const { size } = await Deno.stat(bundle);
console.log(`bundle: ${(size / 1024 / 1024).toFixed(2)} MiB (${size} bytes)`);

const variants: Record<string, { args: string[]; cwd: string }> = {
  bundle: {
    args: ["run", "--allow-net", "--allow-env", `--allow-read=${cluster.kubeconfig}`, bundle, "run"],
    cwd: folder,
  },
  source: { args: ["run", "-A", "cli/main.ts", "run"], cwd: root },
};

for (const [variant, { args, cwd }] of Object.entries(variants)) {
  const times: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const name = `${variant}-${round}`;
    await client.request({
      method: "POST",
      path: collection,
      body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name }, spec: {} },
    });
    const started = performance.now();
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        ...args,
        "-n",
        namespace,
        "--standalone",
        ...(variant === "source" ? ["examples/01-minimal/example.ts"] : []),
      ],
      cwd,
      env: { KUBECONFIG: cluster.kubeconfig, NO_COLOR: "1" },
      stdout: "null",
      stderr: "null",
    }).spawn();
    for (;;) {
      const body = await client.request<KubernetesObject>({ path: `${collection}/${name}` });
      if ((body.status as Record<string, unknown> | undefined)?.createFn) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    times.push(((performance.now() - started) / 1000).toFixed(2));
    child.kill("SIGTERM");
    await child.status;
  }
  console.log(`${variant}: an existing object handled after ${times.join(", ")} s`);
}
