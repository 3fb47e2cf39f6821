/**
 * The shapes of `KubeApi`'s calls (kube_api.ts): how resources and objects are given, the options
 * of each method, and what lists and watches return.
 *
 * @module
 */

import type { StoredMetadata } from "../model/body.ts";
import type { SelectorSpec } from "../model/selector.ts";

/**
 * A resource as the client's methods take it, as handlers name resources: `"configmaps"`,
 * `"kopfexamples.kopf.dev"`, `"kex"`, `"deployments.v1.apps"`, or `{ group, version, plural }`.
 */
export type ResourceArg = string | SelectorSpec;

/** An object as `create`, `replace` and `apply` take it: its resource is found by its apiVersion and kind. */
export interface ApiObject {
  /** E.g. `v1`, `apps/v1`. */
  apiVersion?: string;
  /** E.g. `ConfigMap`. */
  kind?: string;
  /**
   * The object's name and (for namespaced resources) namespace; for `replace`, the resourceVersion
   * it was read at.
   */
  metadata?: { name?: string; generateName?: string; namespace?: string; resourceVersion?: string };
}

/** What `list` returns: all items of all pages, and the list's metadata. */
export interface ObjectList<T> {
  /** The list's apiVersion, e.g. `v1`. */
  apiVersion?: string;
  /** The list's kind, e.g. `ConfigMapList`. */
  kind?: string;
  /** The list's metadata: the resourceVersion to watch from. */
  metadata: { resourceVersion?: string };
  /** The objects, each with its apiVersion and kind set. */
  items: T[];
}

/**
 * The metadata fields that the answer of a dry run has for sure: a dry run that creates an object
 * (`create`, `apply` or an apply-patch of an absent object) returns it without a `resourceVersion`.
 */
export type DryRunFields = Exclude<keyof StoredMetadata, "resourceVersion">;

/** Options of a call that is not a dry run: its answer is an object as stored. */
export interface NotDryRun {
  /** Absent or `false`. */
  dryRun?: false;
}

/** The encodings of `patch`: JSON merge patch, JSON patch, strategic merge patch, server-side apply. */
export type PatchType = "merge" | "json" | "strategic" | "apply";

/** Options of every call. */
export interface ApiCallOptions {
  /** The namespace of a namespaced resource; for `create`/`replace`/`apply`, the object's own when absent. */
  namespace?: string | null;
  /** Cancels the request, its retries included. */
  signal?: AbortSignal;
}

/** Options of `list`. */
export interface ApiListOptions extends ApiCallOptions {
  /** A label selector, e.g. `app=x,tier!=db`. */
  labelSelector?: string;
  /** A field selector, e.g. `metadata.name=x`. */
  fieldSelector?: string;
  /** Objects per page; the pages are read until the end. 500 by default. */
  pageSize?: number;
}

/** Options of the writing calls. */
export interface ApiWriteOptions extends ApiCallOptions {
  /** The field manager the server records in `managedFields`. */
  fieldManager?: string;
  /** Validate and answer without persisting anything (`dryRun=All`). */
  dryRun?: boolean;
}

/** Options of `create`. */
export type ApiCreateOptions = ApiWriteOptions;

/** Options of `replace`. */
export interface ApiReplaceOptions extends ApiWriteOptions {
  /** A subresource, e.g. `status` or `scale`. */
  subresource?: string;
}

/** Options of `patch`. */
export interface ApiPatchOptions extends ApiWriteOptions {
  /** How the patch is encoded; `merge` by default. */
  type?: PatchType;
  /** A subresource, e.g. `status` or `scale`. */
  subresource?: string;
  /** For `type: "apply"`: take over fields that other managers own. */
  force?: boolean;
}

/** Options of `apply`. */
export interface ApiApplyOptions extends ApiWriteOptions {
  /** Take over fields that other managers own instead of failing with a 409 conflict. */
  force?: boolean;
  /** A subresource, e.g. `status`. */
  subresource?: string;
}

/** Options of `delete`. */
export interface ApiDeleteOptions extends ApiCallOptions {
  /** What happens to the dependents: deleted before (`Foreground`), after (`Background`), or left (`Orphan`). */
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  /** Delete only if the object still has this uid and/or resourceVersion (else a 409 conflict). */
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Seconds before the object is deleted; the resource's default when absent. */
  gracePeriodSeconds?: number;
  /** Validate and answer without deleting anything (`dryRun=All`). */
  dryRun?: boolean;
}

/** Options of `watch`. */
export interface ApiWatchOptions extends ApiCallOptions {
  /** A label selector, e.g. `app=x`. */
  labelSelector?: string;
  /** A field selector, e.g. `metadata.name=x`. */
  fieldSelector?: string;
}

/**
 * What `watch` delivers: the objects of the initial listing (`type: null`), then `ADDED`,
 * `MODIFIED`, `DELETED` changes, and `LISTED` after each (re)listing. Where the server lists by
 * pages, the watch opens from the listing's first page: changes may come before its `LISTED`
 * (never an object's older state after its newer one).
 */
export type ApiWatchEvent<T> =
  | { type: null; object: T }
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: T; relisted?: boolean }
  | { type: "LISTED"; resourceVersion: string; relisted: boolean };
