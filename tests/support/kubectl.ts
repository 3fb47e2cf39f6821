/**
 * kubectl against the shared test cluster, as a user runs it.
 *
 * @module
 */

import { testCluster } from "./cluster.ts";

/** How a kubectl command ended. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `kubectl <args…>` with the test cluster's kubeconfig; `input` goes to its stdin. */
export async function kubectl(args: string[], input?: string): Promise<KubectlResult> {
  const { kubeconfig } = await testCluster();
  const child = new Deno.Command("kubectl", {
    args,
    env: { KUBECONFIG: kubeconfig },
    stdin: input === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (input !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}
