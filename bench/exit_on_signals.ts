/**
 * Ctrl+C and SIGTERM end a bench through `Deno.exit`, so that its `unload` handlers run: the
 * LocalCluster's exit guard stops etcd and kube-apiserver, and the replicas of bench/sharding.ts
 * are killed, instead of outliving the bench (a signal without a listener ends the process with
 * no `unload` at all).
 *
 * @module
 */

/** Installs the listeners; call before the cluster starts. */
export function exitOnSignals(): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, () => Deno.exit(130));
}
