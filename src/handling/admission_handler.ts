/**
 * What an admission handler is: what it receives, its function, its options, and its record in
 * the registry. Kept apart from their registration (`admission.ts`), which needs the registry,
 * while the registry needs only these types.
 *
 * @module
 */

import type { AdmissionOperation } from "../model/admission.ts";
import type { DiffItem } from "../model/diff.ts";
import type { Selector } from "../model/selector.ts";
import type { ObjectContext } from "./context.ts";
import type { ResourceHandlerOptions } from "./handlers.ts";

/** The two kinds of admission handlers. */
export type AdmissionKind = "validate" | "mutate";

/**
 * What admission handlers receive: the context of the object under review (the new object, or the
 * old one for deletions) and the review's details. On creation, the object is not stored yet: it
 * has no `uid`, and no `name` when it is to be made from `generateName`.
 */
export interface AdmissionContext extends ObjectContext {
  /** Whether the API request is a dry run: the handler must cause no side effects then. */
  readonly dryrun: boolean;
  /** `CREATE`, `UPDATE`, `DELETE` or `CONNECT`. */
  readonly operation: AdmissionOperation;
  /** The subresource under review (e.g. `status`); `null` for the main body. */
  readonly subresource: string | null;
  /** Warnings to return to the API client: push strings into it. */
  readonly warnings: string[];
  /** The user who sent the API request, as the API server describes them (`username`, `uid`, `groups`, ...). */
  readonly userinfo: Readonly<Record<string, unknown>>;
  /** The webhook request's HTTP headers (case-insensitive `get()`), as the webhook server received them. */
  readonly headers: Headers;
  /** The verified client certificate's details, if the webhook server checks them; `{}` otherwise. */
  readonly sslpeer: Readonly<Record<string, unknown>>;
  /** The object before the operation; `null` for creations. */
  readonly old: unknown;
  /** The object after the operation; `null` for deletions. */
  readonly new: unknown;
  /** The changes from `old` to `new` (whole objects). */
  readonly diff: readonly DiffItem[];
}

/** A function called for an admission review; its return value is ignored. */
export type AdmissionFn = (context: AdmissionContext) => unknown;

/** Options of admission handlers. */
export interface AdmissionHandlerOptions extends ResourceHandlerOptions {
  /**
   * The operations it is called for (the webhook's rules); all by default. An empty list is an
   * error. Mutating handlers are not called for `DELETE` unless it is the only operation.
   */
  operations?: readonly AdmissionOperation[];
  /** One operation: the same as `operations: [operation]` (Kopf's deprecated form). */
  operation?: AdmissionOperation;
  /** The subresource it reviews: absent for the main body only, `"*"` for all, or a name such as `"status"`. */
  subresource?: string;
  /** Keep its webhook in the managed configuration when the operator exits. */
  persistent?: boolean;
  /** It has side effects (not in dry runs): the webhook's `sideEffects` is `NoneOnDryRun` instead of `None`. */
  sideEffects?: boolean;
  /**
   * Its failures do not block the API request: the webhook's `failurePolicy` is `Ignore`, and an
   * error other than `AdmissionError` thrown by it is logged and admits the request.
   */
  ignoreFailures?: boolean;
}

/** A registered admission handler. */
export interface AdmissionHandler {
  /** Always `admission`: the registry keeps these apart. */
  readonly kind: "admission";
  /** Validating or mutating. */
  readonly type: AdmissionKind;
  /** The handler id: the last part of its webhook's URL, and (made DNS-safe) its webhook's name. */
  readonly id: string;
  /** The resources it reviews. */
  readonly selector: Selector;
  /** The function. */
  readonly fn: AdmissionFn;
  /** The options as given (without `registry`). */
  readonly options: AdmissionHandlerOptions;
  /** The operations it is for; `null` for all. */
  readonly operations: readonly AdmissionOperation[] | null;
}
