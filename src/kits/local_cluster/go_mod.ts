/**
 * Reading k8s.io/kubernetes' own go.mod: which staging modules a wrapper module must replace, and
 * which versions of its dependencies (etcd) it was released with.
 *
 * @module
 */

/**
 * The module paths that k8s.io/kubernetes replaces with `./staging/src/k8s.io/...` folders.
 *
 * Those modules are required at `v0.0.0`, which does not exist on the module proxy, so a wrapper
 * module must replace each with its published `v0.X.Y`. The list changes between minors, hence
 * it is read from the tag's go.mod and never hard-coded.
 */
export function parseStagingModules(goMod: string): string[] {
  const modules: string[] = [];
  // Both forms: inside a `replace ( ... )` block and a one-line `replace a => b`.
  const pattern = /^\s*(?:replace\s+)?(k8s\.io\/\S+)(?:\s+v\S+)?\s+=>\s+\.\/staging\//;
  for (const line of goMod.split("\n")) {
    const match = pattern.exec(stripComment(line));
    if (match && !modules.includes(match[1])) modules.push(match[1]);
  }
  return modules;
}

/**
 * The version that a go.mod `require`s of a module, or `undefined` if it does not require it.
 *
 * Used to build the etcd server that this Kubernetes release was tested with.
 */
export function requiredVersion(goMod: string, module: string): string | undefined {
  const escaped = module.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v[^\\s]+)\\s*$`);
  for (const line of goMod.split("\n")) {
    const match = pattern.exec(stripComment(line));
    if (match) return match[1];
  }
  return undefined;
}

/**
 * The version of the staging modules published with a Kubernetes release: `1.36.3` -> `v0.36.3`.
 */
export function stagingVersion(kubernetesVersion: string): string {
  const match = /^v?1\.(\d+\.\d+.*)$/.exec(kubernetesVersion);
  if (!match) {
    throw new Error(
      `Cannot derive the staging module version from Kubernetes version "${kubernetesVersion}": ` +
        `expected a release like "1.36.3".`,
    );
  }
  return `v0.${match[1]}`;
}

function stripComment(line: string): string {
  const index = line.indexOf("//");
  return index < 0 ? line : line.slice(0, index);
}
