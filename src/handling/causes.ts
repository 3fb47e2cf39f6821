/**
 * Why a cycle runs: the cause of a change of an object, decided from the event, the deletion
 * state, the finalizer and the stored diff-base, in Kopf's order.
 *
 * @module
 */

/** The reasons that reach handlers. */
export type Reason = "create" | "update" | "delete" | "resume";

/** All causes: the reasons, plus the internal ones that run no change handlers. */
export type Cause = Reason | "noop" | "free" | "gone";

/** What cause detection looks at. */
export interface CauseInput {
  /** The watch event type (`null` for listed objects, `"wakeup"` counts like a modification). */
  type: string | null;
  /** Whether `metadata.deletionTimestamp` is set. */
  deleting: boolean;
  /** Whether the operator's finalizer is on the object. */
  finalized: boolean;
  /** Whether a diff-base is stored (the object was handled before). */
  handledBefore: boolean;
  /** Whether the essence differs from the stored diff-base. */
  changed: boolean;
  /** Whether the object came from the initial listing and was not fully handled yet in this process. */
  initial: boolean;
}

/**
 * The cause, in Kopf's order: a DELETED event -> `gone`; deleting without our finalizer -> `free`;
 * deleting -> `delete`; never handled -> `create`; no change on first sight -> `resume`; no change ->
 * `noop`; otherwise `update`.
 */
export function detectCause(input: CauseInput): Cause {
  if (input.type === "DELETED") return "gone";
  if (input.deleting && !input.finalized) return "free";
  if (input.deleting) return "delete";
  if (!input.handledBefore) return "create";
  if (!input.changed && input.initial) return "resume";
  if (!input.changed) return "noop";
  return "update";
}

/** The words Kopf logs per reason: `Creation is processed...`, `Updating is superseded by deletion...`. */
export const REASON_TITLES: Record<Reason, { noun: string; gerund: string }> = {
  create: { noun: "Creation", gerund: "creation" },
  update: { noun: "Updating", gerund: "updating" },
  delete: { noun: "Deletion", gerund: "deletion" },
  resume: { noun: "Resuming", gerund: "resuming" },
};
