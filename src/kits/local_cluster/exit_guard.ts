/**
 * Last-resort cleanup when the Deno process exits while a LocalCluster still runs (a test that
 * forgot `await using`, a tool that called `Deno.exit`): otherwise etcd and kube-apiserver would
 * outlive it and keep their ports and temporary folders.
 *
 * @module
 */

const cleanups = new Set<() => void>();
let installed = false;

/**
 * Runs `cleanup` when the process unloads, unless the returned function was called first.
 *
 * Only synchronous work is possible at that point: kill with signals, remove with `*Sync` calls.
 */
export function onExit(cleanup: () => void): () => void {
  if (!installed) {
    globalThis.addEventListener("unload", runAll);
    installed = true;
  }
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

function runAll(): void {
  for (const cleanup of cleanups) {
    try {
      cleanup();
    } catch (error) {
      console.error(`LocalCluster cleanup at exit failed: ${error}`);
    }
  }
  cleanups.clear();
}
