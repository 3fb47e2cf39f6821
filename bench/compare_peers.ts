/**
 * The peers a comparison needs installed first: Python Kopf (a cached virtualenv) and the
 * controller-runtime binary (a cached Go build). A peer that cannot be had here is left out, and
 * the bench says why on stderr.
 *
 * @module
 */

import { ensurePythonKopf } from "../tests/support/python_kopf.ts";
import type { ContestantName } from "./compare_contestants.ts";
import { ensureControllerRuntime } from "./controller_runtime.ts";

/** The contestants that can run, and what the peers among them need. */
export interface Peers {
  readonly names: ContestantName[];
  /** Python Kopf's interpreter, if `kopf` is among the names. */
  readonly python?: string;
  /** The controller-runtime binary, if `cr` is among the names. */
  readonly controllerRuntime?: string;
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
  let controllerRuntime: string | undefined;
  if (kept.includes("cr")) {
    const built = await ensureControllerRuntime(root);
    if ("skipped" in built) {
      console.error(`${built.skipped} Going on without controller-runtime.`);
      kept = kept.filter((name) => name !== "cr");
    } else {
      controllerRuntime = built.binary;
    }
  }
  return { names: kept, python, controllerRuntime };
}
