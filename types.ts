/**
 * The Kubernetes object types — `V1Pod`, `V1ConfigMap`, `V1Deployment`, … — as type-only
 * re-exports of `@kubernetes/client-node`'s models: they cost nothing at run time, since no
 * JavaScript of client-node is ever loaded.
 *
 * @example
 * ```ts
 * import type { V1ConfigMap } from "@kopf/kopf/types";
 * const child: V1ConfigMap = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" }, data: { a: "1" } };
 * ```
 *
 * @module
 */

export type * from "@kubernetes/client-node/dist/gen/models/all.js";
