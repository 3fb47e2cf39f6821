/**
 * How Kopf names its annotations: `<prefix>/<name>` with the name made safe for Kubernetes
 * (`/` -> `.`, `<` and `>` -> `_`), cut to 63 characters with a hash suffix when longer (V2 keys), the
 * older V1 keys (where the 63-character limit counted the prefix too) written alongside while the
 * `v1` option is on, `-ofDRS` for ReplicaSets of Deployments, and the `<prefix>/kopf-managed` marker
 * by which operators recognise each other's annotations.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import { blake2b } from "../utils/digests.ts";

const logger = getLogger(["kopf", "persistence"]);

/** The longest name part of an annotation key that Kubernetes accepts. */
export const MAX_NAME_LENGTH = 63;

/** The longest prefix with which every key still fits Kubernetes' 253 characters (253 - 63 - 1). */
export const MAX_PREFIX_LENGTH = 189;

/** The name of the marker annotation that makes a prefix recognisable as a Kopf operator's. */
export const MANAGED_MARKER = "kopf-managed";

/** Prefixes that belong to Kopf operators without a marker: this one and its subdomains. */
const KNOWN_PREFIXES = ["kopf.zalando.org"];

/** Replaces the characters Kubernetes does not allow in key names: `/` -> `.`, `<` and `>` -> `_`. */
export function safeKey(key: string): string {
  return key.replaceAll("/", ".").replaceAll("<", "_").replaceAll(">", "_");
}

/**
 * The hash suffix of a cut key: `-` and the base64 (with `-` and `.` as the extra characters) of
 * the 4-byte BLAKE2b digest of the key's UTF-8 bytes, trailing `=`, `-` and `.` removed.
 *
 * @example
 * ```ts
 * keySuffix("y".repeat(64)); // "-0d251g"
 * ```
 */
export function keySuffix(key: string): string {
  const digest = blake2b(key, 4);
  const base64 = btoa(String.fromCharCode(...digest)).replaceAll("+", "-").replaceAll("/", ".");
  return `-${base64}`.replace(/[=.-]+$/, "");
}

/**
 * A V2 key: the 63-character limit applies to the name alone; a longer name is cut and suffixed
 * with the hash of the original (unsafe) key.
 */
export function v2Key(prefix: string, key: string, maxLength: number = MAX_NAME_LENGTH): string {
  const chars = Array.from(key); // lengths and cuts count code points, as Python does
  const suffix = chars.length > maxLength ? keySuffix(key) : "";
  const limit = Math.max(0, maxLength - suffix.length);
  const name = Array.from(safeKey(key)).slice(0, limit).join("");
  return `${prefix ? `${prefix}/` : ""}${name}${suffix}`;
}

/**
 * A V1 key: the 63-character limit applies to prefix, slash and name together; a longer key is cut
 * and suffixed with the hash of the safe name.
 */
export function v1Key(prefix: string, key: string, maxLength: number = MAX_NAME_LENGTH): string {
  const name = safeKey(key);
  const head = prefix ? `${prefix}/` : "";
  const chars = Array.from(name);
  const headLength = Array.from(head).length;
  const suffix = chars.length <= maxLength - headLength ? "" : keySuffix(name);
  // A negative limit cuts from the end, as a negative slice bound does in Python.
  const limit = maxLength - headLength - suffix.length;
  return `${head}${chars.slice(0, limit).join("")}${suffix}`;
}

/**
 * Marks the key of objects whose annotations Kubernetes overwrites from their owners: ReplicaSets
 * owned by Deployments get `-ofDRS`, so that a Deployment's Kopf state is not mistaken for theirs.
 */
export function markKey(key: string, body: KubernetesObject): string {
  // The kind first: asked for each key of every handled object, nearly none of them ReplicaSets.
  if (body.kind !== "ReplicaSet") return key;
  const owners = body.metadata?.ownerReferences;
  const ownedByDeployment = Array.isArray(owners) && owners.some((owner) => owner?.kind === "Deployment");
  return ownedByDeployment ? `${key}-ofDRS` : key;
}

/** Options of {@linkcode storageKeys}. */
export interface StorageKeysOptions {
  /** Also give the V1 key when it differs from the V2 key. */
  v1: boolean;
  /** The object the keys are for (for the ReplicaSet mark); without it, keys are not marked. */
  body?: KubernetesObject;
}

/**
 * The full annotation keys of a record, in the order they are read: the V2 key, then the V1 key if
 * enabled and different.
 *
 * @example
 * ```ts
 * storageKeys("kopf.zalando.org", "create_fn/item1", { v1: true }); // ["kopf.zalando.org/create_fn.item1"]
 * ```
 */
export function storageKeys(prefix: string, key: string, options: StorageKeysOptions): string[] {
  return [...sharedStorageKeys(prefix, key, options)];
}

/**
 * As {@linkcode storageKeys}, but the cached list itself, not a copy: for the storages' own reads
 * and writes, which never change it.
 */
export function sharedStorageKeys(prefix: string, key: string, options: StorageKeysOptions): readonly string[] {
  const marked = options.body === undefined ? key : markKey(key, options.body);
  // Asked for several times per object and cycle with the same few handler ids: the code-point
  // splits and hashes of the keys were ~2% of the CPU of handling 1,000 objects.
  const byKey = (options.v1 ? V1_KEYS_CACHE : V2_KEYS_CACHE).get(prefix);
  const cached = byKey?.get(marked);
  if (cached !== undefined) return cached;
  const v2 = v2Key(prefix, marked);
  const v1 = options.v1 ? v1Key(prefix, marked) : v2;
  const keys = Object.freeze(v1 === v2 ? [v2] : [v2, v1]);
  // Ids are few, but sub-handlers can make them from data: the cache is bounded.
  const cache = options.v1 ? V1_KEYS_CACHE : V2_KEYS_CACHE;
  if (cachedKeys >= KEYS_CACHE_LIMIT) {
    V1_KEYS_CACHE.clear();
    V2_KEYS_CACHE.clear();
    cachedKeys = 0;
  }
  let map = cache.get(prefix);
  if (map === undefined) cache.set(prefix, map = new Map());
  map.set(marked, keys);
  cachedKeys++;
  return keys;
}

/** The keys by prefix and marked key, with and without the V1 keys. */
const V1_KEYS_CACHE = new Map<string, Map<string, readonly string[]>>();
const V2_KEYS_CACHE = new Map<string, Map<string, readonly string[]>>();
let cachedKeys = 0;
const KEYS_CACHE_LIMIT = 4096;

/**
 * Validates an annotation prefix for a storage: it must not be empty; longer than 189 characters,
 * keys may exceed Kubernetes' limit, which is logged as a warning (as Kopf warns).
 */
export function checkPrefix(prefix: string): void {
  if (!prefix) throw new TypeError("Annotations storages must be prefixed.");
  if (prefix.length > MAX_PREFIX_LENGTH) {
    logger.warn(
      "The annotations prefix {prefix} is {length} characters long, more than {limit}: " +
        "keys of long handler ids will exceed Kubernetes' 253 characters and patching will fail.",
      { prefix, length: prefix.length, limit: MAX_PREFIX_LENGTH },
    );
  }
}

/**
 * Whether any of the annotations is under the prefix (`<prefix>/...`): where none is, an annotations storage holds
 * nothing on the object, and its keys need not be worked out (most objects, in every cycle, carry none of ours).
 */
export function holdsPrefixed(annotations: Readonly<Record<string, unknown>> | undefined, prefix: string): boolean {
  if (!annotations) return false;
  const own = `${prefix}/`;
  for (const key in annotations) if (key.startsWith(own)) return true;
  return false;
}

/**
 * The prefixes that Kopf operators manage among the given annotation keys: those with a
 * `<prefix>/kopf-managed` key, `kopf.zalando.org`, and its subdomains.
 */
export function detectMarkedPrefixes(keys: Iterable<string>): Set<string> {
  const prefixes = new Set<string>();
  for (const key of keys) {
    const slash = key.indexOf("/");
    if (slash < 0) continue;
    const prefix = key.slice(0, slash);
    const name = key.slice(slash + 1);
    // A loop, not `some()` with a callback: the essence of every write of the default storages comes here.
    let known = name === MANAGED_MARKER;
    for (let index = 0; !known && index < KNOWN_PREFIXES.length; index++) {
      known = prefix === KNOWN_PREFIXES[index] || prefix.endsWith(`.${KNOWN_PREFIXES[index]}`);
    }
    if (known) prefixes.add(prefix);
  }
  return prefixes;
}

/**
 * Adds the `<prefix>/kopf-managed: "yes"` marker to the patch for prefixes that do not start with
 * `kopf.`, unless the object or the patch has it already.
 */
export function storeMarker(prefix: string, patch: Patch, body: KubernetesObject): void {
  if (!prefix || prefix.startsWith("kopf.")) return;
  const marker = `${prefix}/${MANAGED_MARKER}`;
  const annotations = body.metadata?.annotations ?? {};
  if (Object.hasOwn(annotations, marker) || Object.hasOwn(patch.metadata.annotations, marker)) return;
  patch.metadata.annotations[marker] = "yes";
}
