/**
 * The client of the operator that runs the caller, for the `api` of handler contexts: found
 * through the asynchronous call chain (several operators may run in one process), like the
 * operator's event poster.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { KubeApi } from "../api/kube_api.ts";

const storage = new AsyncLocalStorage<KubeApi>();

/** What handlers called outside any operator (e.g. directly in unit tests) get as `api`: it explains itself. */
const DETACHED: KubeApi = new KubeApi({
  client() {
    throw new Error(
      "No operator runs this code, so it has no API client: run it under kopf.operator() or `kopf run`, " +
        "or connect with `await kopf.connect()`.",
    );
  },
});

/** Runs `fn` with `api` as the operator's client: everything `fn` starts finds it through {@linkcode currentApi}. */
export function runWithApi<T>(api: KubeApi, fn: () => T): T {
  return storage.run(api, fn);
}

/** The client of the operator that (directly or indirectly) runs the caller; one that explains itself outside operators. */
export function currentApi(): KubeApi {
  return storage.getStore() ?? DETACHED;
}
