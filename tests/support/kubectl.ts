/**
 * kubectl against the shared test cluster, as a user runs it.
 *
 * @module
 */

import { type CommandOutput, commandOutput } from "../../tools/command_output.ts";
import { testCluster } from "./cluster.ts";

/** How a kubectl command ended. */
export type KubectlResult = CommandOutput;

/** Runs `kubectl <args…>` with the test cluster's kubeconfig; `input` goes to its stdin. */
export async function kubectl(args: string[], input?: string): Promise<KubectlResult> {
  const { kubeconfig } = await testCluster();
  return await commandOutput("kubectl", args, { input, env: { KUBECONFIG: kubeconfig } });
}
