/**
 * The Kubernetes object types -- `V1Pod`, `V1ConfigMap`, `V1Deployment`, ... -- as type-only
 * re-exports of `@kubernetes/client-node`'s models: they cost nothing at run time, since no
 * JavaScript of client-node is ever loaded. Timestamps are typed as what the objects hold: RFC 3339
 * strings (`metadata.creationTimestamp: "2024-05-01T12:00:00Z"`), not client-node's `Date`s.
 *
 * @example
 * ```ts
 * import type { V1ConfigMap } from "@kopf/kopf/types";
 * const child: V1ConfigMap = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" }, data: { a: "1" } };
 * ```
 *
 * @module
 */

export type * from "./src/model/k8s_models.ts";
