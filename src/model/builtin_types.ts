/**
 * The object types of built-in resources by their plural: what handlers of `"configmaps"` and
 * `api.get("pods", ...)` are typed with. Type-only: client-node's models are never loaded at run time.
 *
 * @module
 */

import type * as k8s from "./k8s_models.ts";
import type { KubernetesObject } from "./body.ts";
import type { SelectorInput } from "./selector.ts";

/**
 * The plurals of built-in resources and their object types, e.g. `configmaps` -> `V1ConfigMap`.
 *
 * @example
 * ```ts
 * import type { BuiltinTypes } from "@kopf/kopf";
 * type Pod = BuiltinTypes["pods"]; // V1Pod
 * ```
 */
export interface BuiltinTypes {
  /** Core `v1`. */
  configmaps: k8s.V1ConfigMap;
  /** Core `v1`. */
  endpoints: k8s.V1Endpoints;
  /** Core `v1`. */
  events: k8s.CoreV1Event;
  /** Core `v1`. */
  limitranges: k8s.V1LimitRange;
  /** Core `v1`. */
  namespaces: k8s.V1Namespace;
  /** Core `v1`. */
  nodes: k8s.V1Node;
  /** Core `v1`. */
  persistentvolumeclaims: k8s.V1PersistentVolumeClaim;
  /** Core `v1`. */
  persistentvolumes: k8s.V1PersistentVolume;
  /** Core `v1`. */
  pods: k8s.V1Pod;
  /** Core `v1`. */
  replicationcontrollers: k8s.V1ReplicationController;
  /** Core `v1`. */
  resourcequotas: k8s.V1ResourceQuota;
  /** Core `v1`. */
  secrets: k8s.V1Secret;
  /** Core `v1`. */
  serviceaccounts: k8s.V1ServiceAccount;
  /** Core `v1`. */
  services: k8s.V1Service;
  /** `apps/v1`. */
  controllerrevisions: k8s.V1ControllerRevision;
  /** `apps/v1`. */
  daemonsets: k8s.V1DaemonSet;
  /** `apps/v1`. */
  deployments: k8s.V1Deployment;
  /** `apps/v1`. */
  replicasets: k8s.V1ReplicaSet;
  /** `apps/v1`. */
  statefulsets: k8s.V1StatefulSet;
  /** `batch/v1`. */
  cronjobs: k8s.V1CronJob;
  /** `batch/v1`. */
  jobs: k8s.V1Job;
  /** `autoscaling/v2`. */
  horizontalpodautoscalers: k8s.V2HorizontalPodAutoscaler;
  /** `networking.k8s.io/v1`. */
  ingresses: k8s.V1Ingress;
  /** `networking.k8s.io/v1`. */
  ingressclasses: k8s.V1IngressClass;
  /** `networking.k8s.io/v1`. */
  networkpolicies: k8s.V1NetworkPolicy;
  /** `discovery.k8s.io/v1`. */
  endpointslices: k8s.V1EndpointSlice;
  /** `policy/v1`. */
  poddisruptionbudgets: k8s.V1PodDisruptionBudget;
  /** `rbac.authorization.k8s.io/v1`. */
  clusterrolebindings: k8s.V1ClusterRoleBinding;
  /** `rbac.authorization.k8s.io/v1`. */
  clusterroles: k8s.V1ClusterRole;
  /** `rbac.authorization.k8s.io/v1`. */
  rolebindings: k8s.V1RoleBinding;
  /** `rbac.authorization.k8s.io/v1`. */
  roles: k8s.V1Role;
  /** `coordination.k8s.io/v1`. */
  leases: k8s.V1Lease;
  /** `apiextensions.k8s.io/v1`. */
  customresourcedefinitions: k8s.V1CustomResourceDefinition;
  /** `storage.k8s.io/v1`. */
  storageclasses: k8s.V1StorageClass;
  /** `scheduling.k8s.io/v1`. */
  priorityclasses: k8s.V1PriorityClass;
  /** `admissionregistration.k8s.io/v1`. */
  mutatingwebhookconfigurations: k8s.V1MutatingWebhookConfiguration;
  /** `admissionregistration.k8s.io/v1`. */
  validatingwebhookconfigurations: k8s.V1ValidatingWebhookConfiguration;
}

/**
 * The object type of a resource argument: the model of a built-in plural, else any object.
 *
 * @example
 * ```ts
 * import type { ObjectOf } from "@kopf/kopf/advanced";
 * type A = ObjectOf<"pods">; // V1Pod
 * type B = ObjectOf<"kopfexamples">; // KubernetesObject
 * ```
 */
export type ObjectOf<R extends SelectorInput> = R extends keyof BuiltinTypes ? BuiltinTypes[R] : KubernetesObject;

/**
 * The type of handled objects: the explicit type argument `T` if given, else by the resource.
 * `never` is the marker of "not given" (a type argument cannot be `never` in practice).
 */
export type HandledObject<T, R extends SelectorInput> = [T] extends [never] ? ObjectOf<R> : T;

/** The plurals of {@linkcode BuiltinTypes} whose objects live outside namespaces. */
export type ClusterScopedPlural =
  | "namespaces"
  | "nodes"
  | "persistentvolumes"
  | "clusterrolebindings"
  | "clusterroles"
  | "customresourcedefinitions"
  | "storageclasses"
  | "priorityclasses"
  | "ingressclasses"
  | "mutatingwebhookconfigurations"
  | "validatingwebhookconfigurations";

/**
 * The type of `namespace` in the handlers of a resource: `undefined` for cluster-scoped built-in
 * resources, `string` for the other built-in ones, either for anything else (a custom resource's
 * scope is in its CRD, which the types do not see).
 *
 * @example
 * ```ts
 * import type { NamespaceOf } from "@kopf/kopf/advanced";
 * const nodes: NamespaceOf<"nodes"> = undefined;
 * const pods: NamespaceOf<"pods"> = "default";
 * const custom: NamespaceOf<"kopfexamples"> = Math.random() > 0.5 ? "default" : undefined;
 * ```
 */
export type NamespaceOf<R extends SelectorInput> = R extends ClusterScopedPlural ? undefined
  : R extends keyof BuiltinTypes ? string
  : string | undefined;
