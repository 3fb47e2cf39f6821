/**
 * Building object hierarchies: owner references for garbage collection, and the naming,
 * namespace and labels that children inherit from their owner. The objects are modified in place
 * before they are created; the owner defaults to the object whose handler is running.
 *
 * @module
 */

import { currentObject } from "../handling/current_object.ts";
import {
  buildObjectReference,
  buildOwnerReference,
  type ObjectReference,
  type OwnerReference,
  type OwnerReferenceOptions,
  type ReferencedObject,
} from "../model/references.ts";
import { type FieldPath, isPlainObject, type OneOrMany, walk } from "../utils/walk.ts";

export { buildObjectReference, buildOwnerReference };
export type { FieldPath, ObjectReference, OneOrMany, OwnerReference, OwnerReferenceOptions, ReferencedObject };

/**
 * The metadata that the hierarchy helpers read and write; typed objects (`V1ConfigMap`, generated
 * custom resource types) fit it as they are.
 */
export interface ChildLikeMetadata {
  /** The exact name. */
  name?: string;
  /** A name prefix to which the API server appends a random suffix. */
  generateName?: string;
  /** The namespace. */
  namespace?: string;
  /** The labels. */
  labels?: Record<string, string>;
  /** The owners, for garbage collection. */
  ownerReferences?: OwnerReference[];
}

/** Any object the hierarchy helpers accept: a typed model (`V1ConfigMap`, ...) or a plain {@linkcode ChildObject}. */
export interface ChildLike {
  /** E.g. `v1`. */
  apiVersion?: string;
  /** E.g. `ConfigMap`. */
  kind?: string;
  /** The metadata; created when absent. */
  metadata?: ChildLikeMetadata;
}

/** The metadata of a plain object being prepared for creation; created when absent. */
export interface ChildMetadata extends ChildLikeMetadata {
  /** Any other metadata. */
  [key: string]: unknown;
}

/** An object being prepared for creation: a plain, mutable JSON object (a "dict" in Kopf's terms). */
export interface ChildObject extends ChildLike {
  /** The metadata; created when absent. */
  metadata?: ChildMetadata;
  /** Everything else: `spec`, `data`, ... */
  [key: string]: unknown;
}

/** One object, or any (nested) array or iterable of them. */
export type ChildObjects = OneOrMany<ChildLike>;

/** Options of {@linkcode label}. */
export interface LabelOptions {
  /** Overwrite labels that the object already has; by default, existing keys are kept. */
  forced?: boolean;
  /**
   * Sub-structures that get the labels too, in their own `metadata.labels`, if they exist: e.g.
   * `"spec.template"` for a Deployment's pods. One path, or a list of paths.
   */
  nested?: string | readonly FieldPath[];
}

/** Options of {@linkcode harmonizeNaming}. */
export interface NamingOptions {
  /** Rename objects that already have a `name` or `generateName`. */
  forced?: boolean;
  /** Use the name as is (`metadata.name`) instead of as a prefix (`metadata.generateName: "<name>-"`). */
  strict?: boolean;
}

/** Options of {@linkcode adjustNamespace}. */
export interface NamespaceOptions {
  /** Move objects that already have a namespace. */
  forced?: boolean;
}

/** Options of {@linkcode adopt}. */
export interface AdoptOptions {
  /** Overwrite the name, namespace and labels the objects already have. */
  forced?: boolean;
  /** Name the objects exactly like the owner instead of `<owner-name>-<random suffix>`. */
  strict?: boolean;
  /** Sub-structures that get the owner's labels too (see {@linkcode LabelOptions.nested}). */
  nested?: string | readonly FieldPath[];
}

/**
 * Makes objects children of an owner: an owner reference (so they are garbage-collected with
 * it), a name derived from the owner's (`generateName: "<owner-name>-"`, or exactly its name
 * with `strict`), the owner's namespace, and the owner's labels. What the objects already have
 * is kept unless `forced`.
 *
 * @example
 * ```ts ignore
 * import * as kopf from "@kopf/kopf";
 * import type { V1ConfigMap } from "@kopf/kopf/types";
 * kopf.on.create("kopfexamples", async function createFn({ api }) {
 *   const child = kopf.adopt<V1ConfigMap>({ apiVersion: "v1", kind: "ConfigMap", data: { key: "value" } });
 *   const created = await api.create(child); // the owner defaults to the object being handled
 *   return { child: created.metadata.name };
 * });
 * ```
 *
 * @param objs One object or a (nested) array of objects; modified in place.
 * @param owner The owner; by default, the object whose handler is running.
 * @throws Error when called outside of a handler without an owner, or the owner has no name or uid.
 */
export function adopt<T extends ChildObjects>(objs: T, owner?: ReferencedObject, options: AdoptOptions = {}): T {
  const realOwner = guessOwner(owner, "adopt");
  const meta = realOwner.metadata ?? {};
  const name = requireName(meta.name);
  appendOwnerReference(objs, realOwner);
  harmonizeNaming(objs, name, { forced: options.forced, strict: options.strict });
  adjustNamespace(objs, meta.namespace ?? null, { forced: options.forced });
  label(objs, meta.labels ?? {}, { forced: options.forced, nested: options.nested });
  return objs;
}

/**
 * Adds an owner reference to the objects' `metadata.ownerReferences`, unless one with the
 * owner's uid is there already.
 *
 * @param objs One object or a (nested) array of objects; modified in place.
 * @param owner The owner; by default, the object whose handler is running.
 * @param options `controller` and `blockOwnerDeletion` of the reference (both `true` by default).
 * @throws Error when called outside of a handler without an owner, or the owner has no uid (or no
 *   apiVersion, kind or name).
 */
export function appendOwnerReference<T extends ChildObjects>(
  objs: T,
  owner?: ReferencedObject,
  options: OwnerReferenceOptions = {},
): T {
  const realOwner = guessOwner(owner, "appendOwnerReference");
  if (!realOwner.metadata?.uid) {
    throw new Error(
      `The owner ${describe(realOwner)} has no metadata.uid: owner references need the uid of an existing object ` +
        `(use the body as the API returned it after creation).`,
    );
  }
  const ref = buildOwnerReference(realOwner, options);
  for (const obj of walk(objs)) {
    const refs = ensureMetadata(obj).ownerReferences ??= [];
    if (!refs.some((existing) => existing.uid === ref.uid)) refs.push({ ...ref });
  }
  return objs;
}

/**
 * Removes the references to the owner (by its uid) from the objects' `metadata.ownerReferences`.
 *
 * @param objs One object or a (nested) array of objects; modified in place.
 * @param owner The owner; by default, the object whose handler is running.
 * @throws Error when called outside of a handler without an owner.
 */
export function removeOwnerReference<T extends ChildObjects>(objs: T, owner?: ReferencedObject): T {
  const realOwner = guessOwner(owner, "removeOwnerReference");
  const uid = realOwner.metadata?.uid;
  for (const obj of walk(objs)) {
    const meta = ensureMetadata(obj);
    const refs = meta.ownerReferences ??= [];
    if (refs.some((existing) => existing.uid === uid)) {
      meta.ownerReferences = refs.filter((existing) => existing.uid !== uid);
    }
  }
  return objs;
}

/**
 * Sets labels on the objects, keeping the values of keys they already have unless `forced`.
 *
 * @example
 * ```ts
 * import { label } from "./hierarchies.ts";
 * const deployment = { kind: "Deployment", spec: { template: { spec: {} } } };
 * label(deployment, { app: "demo" }, { nested: "spec.template" });
 * // deployment.metadata.labels and deployment.spec.template.metadata.labels are { app: "demo" }
 * ```
 *
 * @param objs One object or a (nested) array of objects; modified in place.
 * @param labels The labels; by default (omitted or `undefined`), the labels of the object whose handler is running.
 * @throws Error when the labels are omitted outside of a handler.
 */
export function label<T extends ChildObjects>(
  objs: T,
  labels?: Readonly<Record<string, string>>,
  options: LabelOptions = {},
): T {
  const realLabels = labels ?? guessOwner(undefined, "label", "labels").metadata?.labels ?? {};
  const nested = typeof options.nested === "string" ? [options.nested] : options.nested ?? [];
  for (const obj of walk(objs, nested)) {
    const objLabels = ensureMetadata(obj).labels ??= {};
    for (const [key, value] of Object.entries(realLabels)) {
      if (options.forced || !(key in objLabels)) objLabels[key] = value;
    }
  }
  return objs;
}

/**
 * Names the objects after a name: as a prefix (`metadata.generateName: "<name>-"`, Kubernetes
 * adds a random suffix) or, with `strict`, exactly (`metadata.name`). Objects that have a `name`
 * or `generateName` already keep it unless `forced`.
 *
 * @param objs One object or a (nested) array of objects; modified in place.
 * @param name The name; by default (omitted or `undefined`), the name of the object whose handler is running.
 * @throws Error when there is no name to use.
 */
export function harmonizeNaming<T extends ChildObjects>(objs: T, name?: string, options: NamingOptions = {}): T {
  const realName = requireName(name ?? guessOwner(undefined, "harmonizeNaming", "name").metadata?.name);
  for (const obj of walk(objs)) {
    const meta = ensureMetadata(obj);
    const unnamed = !meta.name && !meta.generateName;
    if (!options.forced && !unnamed) continue;
    if (options.strict) {
      meta.name = realName;
      delete meta.generateName;
    } else {
      meta.generateName = `${realName}-`;
      delete meta.name;
    }
  }
  return objs;
}

/**
 * Puts the objects into a namespace, unless they have one already (or `forced`).
 *
 * @param objs One object or a (nested) array of objects; modified in place.
 * @param namespace The namespace; by default (omitted or `undefined`), the namespace of the object
 *   whose handler is running. `null` (or a cluster-scoped owner) means no namespace: with `forced`,
 *   the objects' namespaces are removed.
 * @throws Error when the namespace is omitted outside of a handler.
 */
export function adjustNamespace<T extends ChildObjects>(
  objs: T,
  namespace?: string | null,
  options: NamespaceOptions = {},
): T {
  const realNamespace = namespace === undefined
    ? guessOwner(undefined, "adjustNamespace", "namespace").metadata?.namespace ?? null
    : namespace;
  for (const obj of walk(objs)) {
    const meta = ensureMetadata(obj);
    if (!options.forced && meta.namespace) continue;
    if (realNamespace) meta.namespace = realNamespace;
    else delete meta.namespace;
  }
  return objs;
}

function guessOwner(owner: ReferencedObject | undefined, fn: string, what = "owner"): ReferencedObject {
  if (owner !== undefined && owner !== null) return owner;
  const current = currentObject();
  if (current !== undefined) return current;
  throw new Error(`kopf.${fn}() is called outside of a handler: pass the ${what} explicitly.`);
}

function requireName(name: string | undefined): string {
  if (!name) throw new Error("The name must be set explicitly: the owner has no metadata.name.");
  return name;
}

function ensureMetadata(obj: ChildLike): ChildLikeMetadata {
  if (!isPlainObject(obj.metadata)) obj.metadata = {};
  return obj.metadata!;
}

function describe(obj: ReferencedObject): string {
  const meta = obj.metadata ?? {};
  const name = meta.name ? `${meta.namespace ? `${meta.namespace}/` : ""}${meta.name}` : "(unnamed)";
  return `${obj.kind ?? "object"} ${name}`;
}
