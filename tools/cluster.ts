/**
 * `deno task cluster`: runs one LocalCluster in the foreground for manual experiments, prints the
 * KUBECONFIG line to use with kubectl or `kopf run`, and stops it cleanly on Ctrl+C or SIGTERM.
 *
 * Usage: deno task cluster [--controllers namespace,garbagecollector] [--version 1.36.3]
 *                          [--feature-gates ShardedListAndWatch=true,...] [--apiserver-arg=--flag=value ...]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { LocalCluster } from "../src/kits/local_cluster/local_cluster.ts";

const USAGE = "Usage: deno task cluster [--controllers namespace,garbagecollector] " +
  "[--version 1.36.3] [--feature-gates ShardedListAndWatch=true,...] [--apiserver-arg=--flag=value ...]";

function parseOptions(args: string[]) {
  try {
    const { values } = parseArgs({
      args,
      options: {
        controllers: { type: "string" },
        version: { type: "string" },
        "feature-gates": { type: "string" },
        "apiserver-arg": { type: "string", multiple: true },
        help: { type: "boolean", short: "h" },
      },
    });
    return values;
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : error}\n${USAGE}`);
    Deno.exit(2);
  }
}

const options = parseOptions(Deno.args);
if (options.help) {
  console.log(USAGE);
  Deno.exit(0);
}

/** `A=true,B=false` → `{ A: true, B: false }`; a usage error (exit 2) for anything else. */
function parseFeatureGates(text: string | undefined): Record<string, boolean> | undefined {
  if (!text) return undefined;
  const gates: Record<string, boolean> = {};
  for (const item of text.split(",").map((part) => part.trim()).filter(Boolean)) {
    const match = item.match(/^([A-Za-z][A-Za-z0-9]*)=(true|false)$/);
    if (!match) {
      console.error(`--feature-gates: ${JSON.stringify(item)} is not NAME=true or NAME=false.\n${USAGE}`);
      Deno.exit(2);
    }
    gates[match[1]] = match[2] === "true";
  }
  return gates;
}

const cluster = await LocalCluster.start({
  version: options.version,
  controllers: options.controllers?.split(",").map((name) => name.trim()).filter(Boolean),
  featureGates: parseFeatureGates(options["feature-gates"]),
  apiserverArgs: options["apiserver-arg"],
});

console.log(`KUBECONFIG=${cluster.kubeconfig}`);
console.log(`SERVER=${cluster.server}`);
console.error(
  `Kubernetes ${cluster.version} is running (logs in ${cluster.directory}/logs). ` +
    `Press Ctrl+C to stop it.`,
);

let stopping = false;
await new Promise<void>((resolve) => {
  for (const name of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(name, () => {
      if (stopping) {
        // Impatient second signal: exit now; the exit handler kills the processes.
        Deno.exit(130);
      }
      stopping = true;
      console.error(`${name} received, stopping the cluster… (again to force)`);
      resolve();
    });
  }
});
await cluster.stop();
Deno.exit(0);
