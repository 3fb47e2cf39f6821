/**
 * `deno task demo`: the main job end to end. Starts a LocalCluster (building it on first use),
 * applies the example CRD, runs examples/01-minimal through `kopf run`, creates
 * examples/obj.yaml, shows the handler's log and the object's status, and stops everything.
 *
 * @module
 */

import { parse } from "yaml";
import { LocalCluster } from "../testing.ts";
import { applyExampleCrd, connect, getExample, KOPFEXAMPLES } from "../tests/support/cluster.ts";
import { eventually } from "../tests/support/eventually.ts";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesObject } from "../src/model/body.ts";

const root = new URL("..", import.meta.url).pathname;
const say = (text: string) => console.log(`\n==> ${text}`);

say("Starting a local control plane (etcd + kube-apiserver)…");
await using cluster = await LocalCluster.start();
console.log(`KUBECONFIG=${cluster.kubeconfig}  (Kubernetes ${cluster.version} at ${cluster.server})`);
const { client } = await connect(cluster.kubeconfig);
await applyExampleCrd(client);

say("Running: kopf run -A --standalone examples/01-minimal/example.ts");
const operator = new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "cli/main.ts", "run", "-A", "--standalone", "examples/01-minimal/example.ts"],
  cwd: root,
  env: { KUBECONFIG: cluster.kubeconfig },
  stdout: "inherit",
  stderr: "inherit",
}).spawn();

try {
  say("Creating examples/obj.yaml in the default namespace…");
  const object = parse(await Deno.readTextFile(`${root}/examples/obj.yaml`)) as KubernetesObject;
  await eventually(
    "the object to be created",
    () => client.request({ method: "POST", path: resourcePath(KOPFEXAMPLES, { namespace: "default" }), body: object }),
  );
  const name = object.metadata.name!;
  const body = await eventually("status.createFn to be set", async () => {
    const body = await getExample(client, "default", name);
    return (body.status as Record<string, unknown> | undefined)?.createFn ? body : undefined;
  });
  say(`The status of kopfexample/${name}:`);
  console.log(JSON.stringify(body.status, null, 2));
} finally {
  say("Stopping the operator and the control plane…");
  operator.kill("SIGTERM");
  const status = await operator.status;
  client.close();
  await cluster.stop();
  console.log(`Operator exited with code ${status.code}. Done.`);
}
