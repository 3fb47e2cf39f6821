/**
 * References to objects: the `involvedObject` of Events and the `ownerReferences` entries that
 * tie children to their owners for garbage collection.
 *
 * @module
 */

/** What a reference is built from: any object with the usual identifying fields (all optional). */
export interface ReferencedObject {
  /** `v1`, `apps/v1`, `kopf.dev/v1`, ... */
  readonly apiVersion?: string;
  /** `ConfigMap`, `KopfExample`, ... */
  readonly kind?: string;
  /** The identifying part of the metadata. */
  readonly metadata?: {
    readonly name?: string;
    readonly uid?: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
}

/** A reference to an object, as Events carry it in `involvedObject`; absent fields are left out. */
export type ObjectReference = {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  namespace?: string;
};

/**
 * An entry of `metadata.ownerReferences`: the owner's `apiVersion`, `kind`, `name` and `uid` (all
 * required by the API server), and the flags. Assignable to client-node's `V1OwnerReference`.
 */
export type OwnerReference = {
  /** Whether the owner is the managing controller. */
  controller?: boolean;
  /** Whether deleting the owner in the foreground waits for this child. */
  blockOwnerDeletion?: boolean;
  /** The owner's `apiVersion`. */
  apiVersion: string;
  /** The owner's `kind`. */
  kind: string;
  /** The owner's name. */
  name: string;
  /** The owner's uid. */
  uid: string;
};

/** Options of {@linkcode buildOwnerReference}. */
export interface OwnerReferenceOptions {
  /** Whether the owner is the managing controller (`controller`); `true` by default, `null` leaves it out. */
  controller?: boolean | null;
  /** Whether deleting the owner in the foreground waits for this child (`blockOwnerDeletion`); `true` by default, `null` leaves it out. */
  blockOwnerDeletion?: boolean | null;
}

/**
 * The reference to an object for an Event's `involvedObject`: `apiVersion`, `kind`, `name`,
 * `uid`, `namespace`, leaving out those the body lacks (e.g. `namespace` of cluster-scoped objects).
 *
 * @example
 * ```ts
 * import { buildObjectReference } from "@kopf/kopf";
 * const ref = buildObjectReference({ apiVersion: "v1", kind: "Node", metadata: { name: "n1", uid: "u1" } });
 * console.assert(JSON.stringify(ref) === '{"apiVersion":"v1","kind":"Node","name":"n1","uid":"u1"}');
 * ```
 */
export function buildObjectReference(body: ReferencedObject): ObjectReference {
  const meta = body.metadata ?? {};
  const ref: ObjectReference = {};
  if (body.apiVersion) ref.apiVersion = body.apiVersion;
  if (body.kind) ref.kind = body.kind;
  if (meta.name) ref.name = meta.name;
  if (meta.uid) ref.uid = meta.uid;
  if (meta.namespace) ref.namespace = meta.namespace;
  return ref;
}

/**
 * The owner reference that makes an object a child of `body`: `controller` and
 * `blockOwnerDeletion` (both `true` unless told otherwise), `apiVersion`, `kind`, `name`, `uid`.
 * The result is assignable to client-node's `V1OwnerReference`.
 *
 * @example
 * ```ts
 * import { buildOwnerReference } from "@kopf/kopf";
 * const owner = { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "kex", uid: "u1" } };
 * const ref = buildOwnerReference(owner);
 * console.assert(ref.controller === true && ref.blockOwnerDeletion === true && ref.uid === "u1");
 * ```
 *
 * @throws TypeError when the body lacks any of `apiVersion`, `kind`, `metadata.name`, `metadata.uid`
 *   (an object that is not yet created has no uid: create it first, and use what the API returned).
 */
export function buildOwnerReference(body: ReferencedObject, options: OwnerReferenceOptions = {}): OwnerReference {
  const meta = body.metadata ?? {};
  const { apiVersion, kind } = body;
  const { name, uid } = meta;
  if (!apiVersion || !kind || !name || !uid) {
    const missing = Object.entries({ apiVersion, kind, "metadata.name": name, "metadata.uid": uid })
      .filter(([, value]) => !value).map(([field]) => field);
    throw new TypeError(
      `An owner reference needs the owner's ${missing.join(", ")}: pass the owner as the API returned it ` +
        `(e.g. the handler's body, or the result of api.create()).`,
    );
  }
  const flags: Pick<OwnerReference, "controller" | "blockOwnerDeletion"> = {};
  const controller = options.controller === undefined ? true : options.controller;
  const blockOwnerDeletion = options.blockOwnerDeletion === undefined ? true : options.blockOwnerDeletion;
  if (controller !== null) flags.controller = controller;
  if (blockOwnerDeletion !== null) flags.blockOwnerDeletion = blockOwnerDeletion;
  return { ...flags, apiVersion, kind, name, uid };
}
