/**
 * Where LocalCluster keeps the control-plane binaries it builds: a per-user cache folder outside
 * any repository, one subfolder per Kubernetes version.
 *
 * @module
 */

import { join } from "node:path";

/** Reads one environment variable; injectable so that the choice can be tested without env access. */
export type EnvLookup = (name: string) => string | undefined;

/** The files inside one version's cache folder. */
export interface CacheLayout {
  /** `<cache>/v<version>`: everything for this version. */
  readonly root: string;
  /** `<root>/bin`: complete binaries only (it appears by an atomic rename). */
  readonly bin: string;
  /** `<root>/src`: the Go wrapper module used for building. */
  readonly src: string;
  /** `<root>/.lock`: held exclusively while building. */
  readonly lock: string;
  /** `<root>/build.log`: the Go tool's output of the last build. */
  readonly log: string;
}

/**
 * The cache folder for all versions: `$KOPF_LOCAL_CLUSTER_CACHE`, else
 * `$XDG_CACHE_HOME/kopf-deno/local-cluster`, else `~/.cache/kopf-deno/local-cluster`.
 */
export function cacheDirectory(
  env: EnvLookup = (name) => Deno.env.get(name),
): string {
  const explicit = env("KOPF_LOCAL_CLUSTER_CACHE");
  if (explicit) return explicit;
  const xdg = env("XDG_CACHE_HOME");
  if (xdg) return join(xdg, "kopf-deno", "local-cluster");
  const home = env("HOME") ?? env("USERPROFILE");
  if (!home) {
    throw new Error(
      "Cannot choose a cache folder for the local cluster's binaries: HOME is not set. " +
        "Set KOPF_LOCAL_CLUSTER_CACHE (or XDG_CACHE_HOME) to a writable folder, " +
        "or KUBEBUILDER_ASSETS to a folder with kube-apiserver and etcd.",
    );
  }
  return join(home, ".cache", "kopf-deno", "local-cluster");
}

/** The layout of one version's folder inside the cache folder. */
export function cacheLayout(cache: string, version: string): CacheLayout {
  const root = join(cache, `v${version.replace(/^v/, "")}`);
  return {
    root,
    bin: join(root, "bin"),
    src: join(root, "src"),
    lock: join(root, ".lock"),
    log: join(root, "build.log"),
  };
}
