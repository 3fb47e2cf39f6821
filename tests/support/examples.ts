/**
 * Running the examples of examples/ against the shared cluster as their READMEs tell users to:
 * `kopf run --standalone` of an example file, and examples/obj.yaml applied in a namespace.
 *
 * @module
 */

import { parse } from "yaml";
import { resourcePath } from "../../src/api/paths.ts";
import type { KubernetesObject } from "../../src/model/body.ts";
import { KOPFEXAMPLES, testCluster } from "./cluster.ts";
import { KopfProcess } from "./kopf_process.ts";

const OBJ_YAML = new URL("../../examples/obj.yaml", import.meta.url);

/** The name of the object in examples/obj.yaml. */
export const OBJ_NAME = "kopf-example-1";

/** Starts `kopf run --standalone -n <namespace> [extra…] examples/<folder>/example.ts`. */
export function runExample(folder: string, namespace: string, extra: string[] = []): Promise<KopfProcess> {
  return KopfProcess.start(namespace, [...extra, `examples/${folder}/example.ts`]);
}

/** Creates the object of examples/obj.yaml in a namespace (as `kubectl apply -f` would); returns it. */
export async function applyObjYaml(namespace: string): Promise<KubernetesObject> {
  const { client } = await testCluster();
  const body = parse(await Deno.readTextFile(OBJ_YAML)) as KubernetesObject;
  return await client.request<KubernetesObject>({
    method: "POST",
    path: resourcePath(KOPFEXAMPLES, { namespace }),
    body,
  });
}

/** The lines of an operator's output that contain a text, in order. */
export function linesWith(operator: KopfProcess, text: string): string[] {
  return operator.lines.filter((line) => line.includes(text));
}
