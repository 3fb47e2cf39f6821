/**
 * Whether the API server filters lists and watches by `shardSelector` (Kubernetes 1.36's
 * `ShardedListAndWatch`, alpha): detected, never assumed. A list of a built-in resource with a
 * selector shows `metadata.shardInfo` only when the server applied it; servers without the gate
 * ignore the parameter (and lists of custom resources never carry `shardInfo`, filtered or not).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "./client.ts";
import { LEASES } from "./leases.ts";
import { resourcePath } from "./paths.ts";

const logger = getLogger(["kopf", "sharding"]);

/** A selector of the whole hash space: valid everywhere, excludes nothing. */
const WHOLE_SPACE = "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')";

/**
 * Asks the server with one small list of Leases in `namespace` (which a shard member may list
 * anyway). Any failure counts as no support: the replica then filters every object itself.
 */
export async function serverFiltersShards(
  client: ApiClient,
  namespace: string,
  signal?: AbortSignal,
): Promise<boolean> {
  try {
    const list = await client.request<{ metadata?: { shardInfo?: unknown } }>({
      path: resourcePath(LEASES, { namespace }),
      query: { limit: 1, shardSelector: WHOLE_SPACE },
      resource: LEASES.plural,
      signal,
    });
    return list.metadata?.shardInfo !== undefined;
  } catch (error) {
    // Refused or unreachable: client-side filtering is always correct, only less economical.
    logger.debug("Server-side shard filtering is not available: {error}", { error });
    return false;
  }
}
