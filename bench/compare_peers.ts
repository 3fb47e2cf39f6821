/**
 * The peers a comparison needs installed first: Python Kopf (a cached virtualenv), the
 * controller-runtime binary (a cached Go build) and the kube-rs binary (a cached Cargo build). A
 * peer that cannot be had here is left out, and the bench says why on stderr.
 *
 * @module
 */

import { ensurePythonKopf } from "../tests/support/python_kopf.ts";
import type { ContestantName } from "./compare_contestants.ts";
import { type BuiltPeer, ensureControllerRuntime, ensureKubeRs, type PeerSkipped } from "./built_peers.ts";

/** The contestants that can run, and what the peers among them need. */
export interface Peers {
  readonly names: ContestantName[];
  /** Python Kopf's interpreter, if `kopf` is among the names. */
  readonly python?: string;
  /** The controller-runtime binary, if `cr` is among the names. */
  readonly controllerRuntime?: string;
  /** The kube-rs binary, if `rs` is among the names. */
  readonly kubeRs?: string;
}

/** Installs or builds the peers among `names` (`root`: the repository's); drops those that fail. */
export async function preparePeers(names: readonly ContestantName[], kopfVersion: string, root: URL): Promise<Peers> {
  let kept = [...names];
  let python: string | undefined;
  if (kept.includes("kopf")) {
    const installation = await ensurePythonKopf(kopfVersion);
    if ("skipped" in installation) {
      console.error(`${installation.skipped} Going on without Python Kopf.`);
      kept = kept.filter((name) => name !== "kopf");
    } else {
      python = installation.python;
    }
  }
  const built = async (name: ContestantName, ensure: (root: URL) => Promise<BuiltPeer | PeerSkipped>) => {
    if (!kept.includes(name)) return undefined;
    const peer = await ensure(root);
    if ("binary" in peer) return peer.binary;
    console.error(`${peer.skipped} Going on without it.`);
    kept = kept.filter((other) => other !== name);
    return undefined;
  };
  const controllerRuntime = await built("cr", ensureControllerRuntime);
  const kubeRs = await built("rs", ensureKubeRs);
  return { names: kept, python, controllerRuntime, kubeRs };
}
