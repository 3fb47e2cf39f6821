/**
 * The testing toolkit: a real Kubernetes control plane on loopback, and a runner of the `kopf`
 * command for tests of operators.
 *
 * @example
 * ```ts ignore
 * import { LocalCluster } from "@kopf/kopf/testing";
 * await using cluster = await LocalCluster.start();
 * console.log(`KUBECONFIG=${cluster.kubeconfig}`);
 * ```
 *
 * @module
 */

export { LocalCluster, type LocalClusterOptions } from "./src/kits/local_cluster/local_cluster.ts";
export { KopfRunner } from "./src/kits/runner.ts";
export {
  KopfRunnerError,
  type KopfRunnerOptions,
  type KopfRunnerStopOptions,
  type KopfRunnerWaitOptions,
} from "./src/kits/runner_options.ts";
