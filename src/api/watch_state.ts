/**
 * Where a watch stream stands: its resume point and the identities of the objects it knows, kept
 * small (name, namespace, uid, resourceVersion) so that a stream of many objects costs little, and
 * enough to report a deletion found by a relisting; and what a stream delivers ({@linkcode WatchEvent}).
 *
 * @module
 */

import type { KubernetesObject } from "../model/body.ts";

/** The identity of an object seen by a stream: enough to report its deletion after a relisting. */
export interface ObjectIdentity {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** Where a stream stands: the resume point and the objects it knows. A new stream may start from it. */
export class WatchState {
  /** The resourceVersion to resume from; `null` means the next step is a (re)listing. */
  resourceVersion: string | null = null;
  /** The objects seen and not deleted, by uid. */
  readonly known: Map<string, ObjectIdentity> = new Map();
  /** Whether a listing has finished before (so that the next one is a relisting). */
  listed = false;
}

/**
 * Keeps an object's identity, updating the one already known in place: only its resourceVersion
 * changes from event to event, and a new identity per event was garbage for the old generation
 * (the map outlives every young collection).
 */
export function remember(known: Map<string, ObjectIdentity>, uid: string, object: KubernetesObject): void {
  const identity = known.get(uid);
  if (identity && identity.metadata.name === object.metadata.name) {
    identity.metadata.resourceVersion = object.metadata.resourceVersion;
  } else {
    // What `identityOf()` makes, written out: every object's first event comes here.
    const { name, namespace, resourceVersion } = object.metadata;
    known.set(uid, {
      apiVersion: object.apiVersion,
      kind: object.kind,
      metadata: { name, namespace, uid: object.metadata.uid, resourceVersion },
    });
  }
}

/** The identity kept for an object: what a deletion event found by relisting carries. */
export function identityOf(object: KubernetesObject): ObjectIdentity {
  const { name, namespace, uid, resourceVersion } = object.metadata;
  return { apiVersion: object.apiVersion, kind: object.kind, metadata: { name, namespace, uid, resourceVersion } };
}

/** A key for objects without a uid (Kopf's fallback), so they are tracked too. */
export function identityKey(object: KubernetesObject): string {
  const meta = object.metadata;
  return [object.kind, object.apiVersion, meta.name, meta.namespace, meta.creationTimestamp].map((part) => part ?? "-")
    .join("//");
}

/**
 * What a watch stream delivers:
 * - `type: null`: an object of the first listing (Kopf's convention for listed objects);
 * - `ADDED`, `MODIFIED`, `DELETED`: a change; `relisted: true` marks the changes found by
 *   comparing a relisting after 410 Gone with what was known (a relisted `DELETED` carries only
 *   the identity of the object: apiVersion, kind, name, namespace, uid, resourceVersion);
 * - `LISTED`: a listing has finished (the first one, or a relisting); a listing by pages has the
 *   watch open from its first page, so changes may come before its `LISTED` too;
 * - with `confirmDeletions`, `left: true` marks a `MODIFIED` that replaces a `DELETED` of an
 *   object that still exists but no longer matches the label selector (its current state).
 */
export type WatchEvent =
  | { type: null; object: KubernetesObject }
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: KubernetesObject; relisted?: boolean; left?: boolean }
  | { type: "LISTED"; resourceVersion: string; relisted: boolean };
