/**
 * Settings of the state kept on objects.
 *
 * @module
 */

import { AnnotationsDiffBaseStorage, ReadOnlyAnnotationsDiffBaseStorage } from "../state/annotations_diffbase.ts";
import { ReadOnlyAnnotationsProgressStorage } from "../state/annotations_progress.ts";
import type { DiffBaseStorage } from "../state/diffbase_storage.ts";
import type { FieldSpec } from "../state/fields.ts";
import { MultiDiffBaseStorage } from "../state/multi_diffbase.ts";
import { MultiProgressStorage } from "../state/multi_progress.ts";
import type { ProgressStorage } from "../state/progress_storage.ts";
import { SmartProgressStorage } from "../state/smart_progress.ts";
import { StatusDiffBaseStorage } from "../state/status_diffbase.ts";
import { StatusProgressStorage } from "../state/status_progress.ts";

/** Options of {@linkcode PersistenceSettings.useLeanStorage}. */
export interface LeanStorageOptions {
  /** Replaces `{name}` in the status fields (`status.{name}.progress`, `status.{name}.last-handled-configuration`); `kopf` by default. */
  name?: string;
  /** The prefix of the annotations still read (and purged) for a takeover; `kopf.zalando.org` by default. */
  prefix?: string;
  /** Fields left out of the essence, e.g. `spec.replicas` when an autoscaler changes it. */
  ignoredFields?: Iterable<FieldSpec>;
}

/** Where and how handling state lives on the objects (Kopf-compatible by default). */
export class PersistenceSettings {
  /** The finalizer the operator puts on objects that need deletion handling. */
  finalizer = "kopf.zalando.org/KopfFinalizerMarker";
  /** Where handlers' progress is kept: annotations, also reading `status.kopf.progress` (Kopf 1.44). */
  progressStorage: ProgressStorage = new SmartProgressStorage();
  /** Where the last handled essence is kept: the `kopf.zalando.org/last-handled-configuration` annotation. */
  diffbaseStorage: DiffBaseStorage = new AnnotationsDiffBaseStorage();
  /**
   * Seconds to wait for the watch to deliver the operator's own last patch before handlers that
   * depend on the stored state run anyway; 0 disables the wait.
   */
  consistencyTimeout = 5;
  /**
   * Seconds into a cycle after which, while a handler is still running, the outcomes of the
   * handlers finished so far are written (so that a crash does not re-run them); `null`: only at
   * the end of the cycle. Cycles faster than this write once, at their end.
   */
  checkpointDelay: number | null = 1;
  /**
   * Fields whose values are secret, in every resource (`"spec.password"` or `["spec", "password"]`),
   * in addition to the `data` and `stringData` of Secrets, which always are. Their values never
   * reach the diff-base or the framework's log lines: a salted digest (`sha256:...`, per key of a
   * mapping) stands for each, so changes are still detected, and `old`, `new` and `diff` show the
   * digests. Handlers read the values from `body`.
   */
  sensitiveFields: FieldSpec[] = [];

  /**
   * The lean preset: keeps the progress records (`status.kopf.progress.<id>`) and the diff-base
   * (`status.kopf.last-handled-configuration`, a JSON string) in the status, where the status PATCH
   * that carries the handlers' results carries them too. A cycle of a resource with a status
   * subresource so writes once instead of twice (a create with one handler returning a result: 1
   * write, the least possible; Kopf's default storages take 2), and no annotations are added.
   *
   * Kopf's annotations (`kopf.zalando.org/<id>`, `kopf.zalando.org/last-handled-configuration`) are
   * still read, and the records purged when done, so objects handled by Python Kopf or by the
   * default storages are taken over without re-running their handlers (the status wins once a
   * cycle has written there). The other direction is not compatible by default: Python Kopf (and
   * our default storages) read the diff-base from the annotation only, so objects handled in the
   * lean mode look new to them and their creation handlers run again -- unless that operator is
   * configured with `StatusDiffBaseStorage` (in Kopf: `settings.persistence.diffbase_storage =
   * kopf.StatusDiffBaseStorage()`, which reads the same field).
   *
   * The resource must keep unknown fields in its status (`x-kubernetes-preserve-unknown-fields`
   * on the status schema, as for handlers' results): a pruned status loses the state, and every
   * event then looks like a new object. Built-in resources (pods, ...) prune it: keep the default
   * storages for them.
   *
   * @returns these settings, for chaining.
   *
   * @example
   * ```ts
   * import * as kopf from "@kopf/kopf";
   * kopf.on.startup(function leanStorage({ settings }) {
   *   settings.persistence.useLeanStorage();
   * });
   * ```
   */
  useLeanStorage(options: LeanStorageOptions = {}): this {
    const ignoredFields = [...(options.ignoredFields ?? [])];
    this.progressStorage = new MultiProgressStorage([
      new StatusProgressStorage({ name: options.name }),
      new ReadOnlyAnnotationsProgressStorage({ prefix: options.prefix }),
    ]);
    this.diffbaseStorage = new MultiDiffBaseStorage([
      new StatusDiffBaseStorage({ name: options.name, ignoredFields }),
      new ReadOnlyAnnotationsDiffBaseStorage({ prefix: options.prefix, ignoredFields }),
    ]);
    return this;
  }
}
