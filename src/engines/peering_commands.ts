/**
 * `kopf freeze` and `kopf resume` as functions: write a peer record of a high priority on the
 * peering objects of a scope, so that operators of a lower priority pause, or remove it again.
 * They log in as an operator without login handlers does (the kubeconfig, or the pod's service
 * account), patch, and return. Published as `@kopf/kopf/peering` for the CLI.
 *
 * @example Freezing the cluster-wide operators for a minute
 * ```ts ignore
 * import { freeze, resume } from "@kopf/kopf/peering";
 * await freeze({ peering: "default", clusterwide: true, lifetime: 60 });
 * // ... maintenance ...
 * await resume({ peering: "default", clusterwide: true });
 * ```
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { ApiClient } from "../api/client.ts";
import { resourcePath } from "../api/paths.ts";
import { Registry } from "../handling/registry.ts";
import { openVault } from "../handling/login.ts";
import type { KubernetesObject } from "../model/body.ts";
import { NamespacePatterns } from "../model/namespace_patterns.ts";
import { buildPeerRecord, commandIdentity, FREEZE_PRIORITY, type PeerRecord } from "../model/peering.ts";
import { Settings } from "../settings/settings.ts";
import { describeTarget, type PeeringTarget, peeringTargets, removePeer, touchPeer } from "./peering_records.ts";

export {
  DEFAULT_LIFETIME,
  DEV_PRIORITY,
  FREEZE_PRIORITY,
  type IdentitySource,
  operatorIdentity,
  parsePeers,
  type Peer,
  type PeerRecord,
} from "../model/peering.ts";
export { commandIdentity };
export { PeeringNotFoundError, type PeeringTarget } from "./peering_records.ts";

const logger = getLogger(["kopf", "peering"]);

/** What both commands need: where, who, and how to log in. */
export interface PeeringCommandOptions {
  /** The peering name, e.g. `default`. */
  peering: string;
  /** The `ClusterKopfPeering` (all namespaces); also without namespaces, with a warning. */
  clusterwide?: boolean;
  /**
   * ...or a `KopfPeering` in each of these namespaces: names or patterns as `-n` takes them
   * (globs, `!` exclusions); patterns are matched against the namespaces that exist now.
   */
  namespaces?: readonly string[];
  /** The identity of the record; default `POD_ID`, else `<user>@<host>`. */
  id?: string;
  /** The kubeconfig file; default: `KUBECONFIG` or `~/.kube/config` (or the pod's service account). */
  kubeconfig?: string;
  /** The kubeconfig context; default: the current one. */
  context?: string;
  /** Cancels the login and the requests. */
  signal?: AbortSignal;
}

/** Options of {@linkcode freeze}. */
export interface FreezeOptions extends PeeringCommandOptions {
  /** Seconds the freeze lasts unless resumed earlier. */
  lifetime: number;
  /** The priority of the freeze; default {@linkcode FREEZE_PRIORITY} (100). */
  priority?: number;
  /** A message for the log (Kopf accepts it and does not store it). */
  message?: string;
}

/** What a command has written: the identity, and the record (`null` for a resume) per peering object. */
export interface PeeringCommandResult {
  /** The identity whose record was written or removed. */
  identity: string;
  /** The peering objects patched. */
  targets: PeeringTarget[];
  /** The record written; `null` when removed. */
  record: PeerRecord | null;
}

/**
 * Freezes the operators of a peering in a scope: writes `status.<id>` = `{priority, lifetime,
 * lastseen}` on each peering object, so that operators of a lower priority pause until the record
 * expires or is removed by {@linkcode resume}.
 *
 * @param options The peering, the scope, the lifetime and the priority.
 * @returns What was written; rejects with a `PeeringNotFoundError` (saying what to create) if a
 *   peering object or its CRD is missing, or a `LoginError` without usable credentials.
 */
export async function freeze(options: FreezeOptions): Promise<PeeringCommandResult> {
  const record = buildPeerRecord({ priority: options.priority ?? FREEZE_PRIORITY, lifetime: options.lifetime });
  const result = await patchAll(options, record);
  const where = result.targets.map(describeTarget).join(", ");
  logger.info(
    `Freezing operations of peering '${options.peering}' for ${record.lifetime} s as '${result.identity}' ` +
      `with priority ${record.priority}: ${where}.${options.message ? ` Message: ${options.message}` : ""}`,
  );
  return result;
}

/**
 * Resumes the operators of a peering in a scope: removes the record `status.<id>` written by
 * {@linkcode freeze} (nothing happens where there is none).
 *
 * @param options The peering, the scope, and the identity.
 * @returns What was removed; rejects as {@linkcode freeze} does.
 */
export async function resume(options: PeeringCommandOptions): Promise<PeeringCommandResult> {
  const result = await patchAll(options, null);
  const where = result.targets.map(describeTarget).join(", ");
  logger.info(`Resuming operations of peering '${options.peering}' as '${result.identity}': ${where}.`);
  return result;
}

async function patchAll(options: PeeringCommandOptions, record: PeerRecord | null): Promise<PeeringCommandResult> {
  const identity = options.id || commandIdentity();
  let clusterwide = options.clusterwide ?? false;
  if (!clusterwide && !options.namespaces?.length) {
    logger.warn("No namespaces are given (-n NS or -A); using the cluster-wide ClusterKopfPeering.");
    clusterwide = true;
  }
  const vault = await openVault(
    {
      registry: new Registry(),
      settings: new Settings(),
      memo: {},
      signal: options.signal,
      kubeconfig: options.kubeconfig,
      context: options.context,
    },
    undefined,
    () => {},
  );
  using client = new ApiClient(vault);
  const namespaces = clusterwide ? [] : await matchNamespaces(client, options.namespaces ?? [], options.signal);
  const targets = peeringTargets(options.peering, { clusterwide, namespaces });
  const outcomes = await Promise.allSettled(targets.map((target) => {
    return record
      ? touchPeer(client, target, identity, record, options.signal)
      : removePeer(client, target, identity, options.signal);
  }));
  const failures = outcomes.filter((outcome) => outcome.status === "rejected").map((outcome) => outcome.reason);
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) {
    const messages = failures.map((failure) => failure instanceof Error ? failure.message : String(failure));
    throw new AggregateError(failures, messages.join(" "));
  }
  return { identity, targets, record };
}

/** The namespaces of `-n`: the names as given, or, with globs, the existing namespaces that match. */
async function matchNamespaces(client: ApiClient, given: readonly string[], signal?: AbortSignal): Promise<string[]> {
  const patterns = new NamespacePatterns(given);
  if (patterns.allExact) return patterns.exact;
  const path = resourcePath({ group: "", version: "v1", plural: "namespaces", namespaced: false });
  const list = await client.request<{ items?: KubernetesObject[] }>({ path, signal });
  const matching = (list.items ?? []).map((item) => item.metadata.name ?? "")
    .filter((name) => name && patterns.matches(name));
  if (!matching.length) throw new Error(`No namespace matches ${patterns}: there is no peering object to patch.`);
  return matching;
}
