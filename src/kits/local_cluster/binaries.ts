/**
 * Finding the control-plane binaries for a LocalCluster: from `KUBEBUILDER_ASSETS` (the envtest
 * convention) if set, else from the per-user cache, building them there on first use.
 *
 * @module
 */

import { join } from "node:path";
import { cacheDirectory, cacheLayout, type EnvLookup } from "./cache.ts";
import { ensureBuilt } from "./build.ts";
import { isFile } from "./files.ts";

/** Paths of the executables that a LocalCluster runs. */
export interface ControlPlaneBinaries {
  /** The kube-apiserver executable. */
  readonly kubeApiserver: string;
  /** The etcd server executable. */
  readonly etcd: string;
  /** The kube-controller-manager executable; `undefined` if the assets folder has none. */
  readonly kubeControllerManager: string | undefined;
}

/**
 * Locates (and if needed builds) the binaries for a Kubernetes version.
 *
 * With `KUBEBUILDER_ASSETS` set, nothing is built: a missing binary is an error that names the
 * folder. kube-controller-manager is required only when `needControllerManager` is true.
 */
export async function locateBinaries(
  version: string,
  needControllerManager: boolean,
  env: EnvLookup = (name) => Deno.env.get(name),
): Promise<ControlPlaneBinaries> {
  const assets = env("KUBEBUILDER_ASSETS");
  let folder: string;
  if (assets) {
    folder = assets;
  } else {
    const layout = cacheLayout(cacheDirectory(env), version);
    await ensureBuilt(version, layout);
    folder = layout.bin;
  }

  const path = (name: string) => join(folder, name);
  const required = ["kube-apiserver", "etcd"];
  if (needControllerManager) required.push("kube-controller-manager");
  const missing: string[] = [];
  for (const name of required) {
    if (!await isFile(path(name))) missing.push(path(name));
  }
  if (missing.length > 0) {
    throw new Error(
      `LocalCluster cannot find ${missing.join(", ")}. ` +
        (assets
          ? "KUBEBUILDER_ASSETS must point to a folder with kube-apiserver and etcd (and " +
            "kube-controller-manager when controllers are requested); unset it to let " +
            "LocalCluster build them from the Go modules instead."
          : "The cache folder is incomplete; delete it to rebuild."),
    );
  }
  return {
    kubeApiserver: path("kube-apiserver"),
    etcd: path("etcd"),
    kubeControllerManager: await isFile(path("kube-controller-manager")) ? path("kube-controller-manager") : undefined,
  };
}
