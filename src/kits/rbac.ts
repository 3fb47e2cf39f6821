/**
 * RBAC computed from what an operator registers: the rules its handlers and enabled features need
 * and nothing else, as a ServiceAccount, (Cluster)Roles and their bindings. Users add what their
 * handlers touch through their own client as extra rules.
 *
 * @module
 */

import type { Registry } from "../handling/registry.ts";
import type { JsonValue, KubernetesObject } from "../model/body.ts";
import { NamespacePatterns } from "../model/namespace_patterns.ts";
import type { Resource } from "../model/resource.ts";
import type { Selector } from "../model/selector.ts";

/** One RBAC policy rule, as in a (Cluster)Role. */
export interface PolicyRule {
  /** The API groups (`""` for the core group). */
  apiGroups: string[];
  /** The resources, with subresources as `plural/status`. */
  resources: string[];
  /** The verbs. */
  verbs: string[];
  /** Restricts the rule to these object names. */
  resourceNames?: string[];
}

/** A rule with why the operator needs it and where (namespaced rules go to Roles under `-n`). */
export interface NeededRule extends PolicyRule {
  /** What needs it, for the comment line of the manifest and for messages. */
  reason: string;
  /** `cluster`: a ClusterRole in any case; `namespaced`: a Role per served namespace under `-n`; `install`: a Role in the operator's own namespace. */
  scope: "cluster" | "namespaced" | "install";
  /** For `install` rules: the namespace of the Role when it is not the operator's own (`--shard-namespace`). */
  namespace?: string;
}

/** Options of {@linkcode neededRules} and {@linkcode rbacManifests}. */
export interface RbacOptions {
  /** The served namespaces or patterns (`-n`); empty with `clusterwide`. */
  namespaces: readonly string[];
  /** All namespaces (`-A`). */
  clusterwide: boolean;
  /** The name of the ServiceAccount, roles and bindings. */
  name: string;
  /** Where the ServiceAccount (and the Lease, and the Deployment) live. */
  installNamespace: string;
  /** Leader election on (`--leader-elect`): its Lease. */
  leaderElect?: boolean;
  /** The Lease's name; `kopf` by default. */
  leaseName?: string;
  /** Peering on (`--peering`): the peering objects; off means the operator runs with `--standalone`. */
  peering?: boolean;
  /** Sharding on (`--shard-group NAME`): the Leases of the group's members; not with `leaderElect`. */
  shardGroup?: string;
  /** The namespace of the shard group's Leases (`--shard-namespace`); the operator's own by default. */
  shardNamespace?: string;
  /** The name of the managed admission webhook configurations (`settings.admission.managed`). */
  managedAdmission?: string;
  /** The user's own rules (`--extra-rules`), for what handlers touch through their own client; cluster-wide under `-A`, per namespace under `-n`. */
  extraRules?: readonly PolicyRule[];
}

/** The resources each handler selector resolved to (by discovery). */
export type ResolvedSelectors = ReadonlyMap<Selector, readonly Resource[]>;

/**
 * The rules an operator needs: per handled resource `list`+`watch` (every handler kind), `patch`
 * and `get` where the framework keeps state on objects (change handlers, daemons, timers: progress,
 * results, finalizers -- `get` re-reads an object after a finalizer conflict), `patch` of `status`
 * where it is a subresource; Events (`create`, `patch`) where objects are handled; CRDs (`list`,
 * `watch`) to follow resources appearing; namespaces (`list`, `watch`) for patterns; peering
 * objects, the Lease, the shard group's Leases, the managed webhook configurations and the
 * converted CRDs' `spec.conversion` when those features are on.
 *
 * @param registry The registered handlers.
 * @param resolved What their selectors resolve to.
 * @param options The scope and features.
 */
export function neededRules(registry: Registry, resolved: ResolvedSelectors, options: RbacOptions): NeededRule[] {
  return [
    ...handledResourceRules(registry, resolved),
    ...discoveryRules(options),
    ...(options.peering ? [peeringRule(options.clusterwide)] : []),
    ...(options.leaderElect ? leaderElectionRules(options.leaseName) : []),
    ...(options.shardGroup ? shardingRules(options.shardNamespace) : []),
    ...managedAdmissionRules(registry, options),
    ...conversionRules(registry, resolved, options),
    ...(options.extraRules ?? []).map((rule): NeededRule => ({
      ...rule,
      reason: "extra rules (--extra-rules)",
      scope: "namespaced",
    })),
  ];
}

/**
 * Per handled resource (sorted by group and plural): `list`+`watch` for every handler kind, and
 * `get`+`patch` (and `patch` of `status` where it is a subresource) where change handlers, daemons
 * or timers keep state on the objects; then Events about the handled objects, if any.
 */
function handledResourceRules(registry: Registry, resolved: ResolvedSelectors): NeededRule[] {
  const rules: NeededRule[] = [];
  const watched = new Map<string, Resource>();
  const patched = new Set<string>();
  const key = (resource: Resource) => `${resource.group}/${resource.plural}`;
  for (const handler of registry.handlers) {
    for (const resource of resolved.get(handler.selector) ?? []) {
      watched.set(key(resource), resource);
      if (handler.kind === "change" || handler.kind === "daemon" || handler.kind === "timer") {
        patched.add(key(resource));
      }
    }
  }
  const scopeOf = (resource: Resource): NeededRule["scope"] => resource.namespaced ? "namespaced" : "cluster";
  for (const [id, resource] of [...watched].sort(([a], [b]) => a.localeCompare(b))) {
    const state = patched.has(id);
    rules.push({
      reason: state
        ? `handlers of ${resource.plural}: watching, state on the objects`
        : `handlers of ${resource.plural}: watching`,
      scope: scopeOf(resource),
      apiGroups: [resource.group],
      resources: [resource.plural],
      verbs: state ? ["get", "list", "watch", "patch"] : ["list", "watch"],
    });
    if (state && resource.subresources.includes("status")) {
      rules.push({
        reason: `handlers of ${resource.plural}: results and progress in the status subresource`,
        scope: scopeOf(resource),
        apiGroups: [resource.group],
        resources: [`${resource.plural}/status`],
        verbs: ["patch"],
      });
    }
  }
  if (watched.size > 0) {
    rules.push({
      reason: "Events about the handled objects",
      scope: [...watched.values()].some((resource) => resource.namespaced) ? "namespaced" : "cluster",
      apiGroups: [""],
      resources: ["events"],
      verbs: ["create", "patch"],
    });
  }
  return rules;
}

/** CRDs to follow resources appearing and going, always; namespaces when `-n` has a pattern. */
function discoveryRules(options: RbacOptions): NeededRule[] {
  const rules: NeededRule[] = [{
    reason: "discovery: resources that appear or go with their CRDs",
    scope: "cluster",
    apiGroups: ["apiextensions.k8s.io"],
    resources: ["customresourcedefinitions"],
    verbs: ["list", "watch"],
  }];
  if (
    !options.clusterwide && options.namespaces.some((pattern) => new NamespacePatterns([pattern]).allExact !== true)
  ) {
    rules.push({
      reason: "namespace patterns: the namespaces that match",
      scope: "cluster",
      apiGroups: [""],
      resources: ["namespaces"],
      verbs: ["list", "watch"],
    });
  }
  return rules;
}

/** The peering objects: cluster-wide ones under `-A`, namespaced ones under `-n`. */
function peeringRule(clusterwide: boolean): NeededRule {
  return {
    reason: "peering: keep-alive records of the operators",
    scope: clusterwide ? "cluster" : "namespaced",
    apiGroups: ["kopf.dev"],
    resources: [clusterwide ? "clusterkopfpeerings" : "kopfpeerings"],
    verbs: ["list", "watch", "patch"],
  };
}

/**
 * The elector reads and watches its Lease by name (a field selector), so all but the creation
 * can be limited to that one object.
 */
function leaderElectionRules(leaseName: string | undefined): NeededRule[] {
  return [{
    reason: "leader election: following and renewing the Lease",
    scope: "install",
    apiGroups: ["coordination.k8s.io"],
    resources: ["leases"],
    verbs: ["get", "list", "watch", "update"],
    resourceNames: [leaseName ?? "kopf"],
  }, {
    reason: "leader election: creating the Lease",
    scope: "install",
    apiGroups: ["coordination.k8s.io"],
    resources: ["leases"],
    verbs: ["create"],
  }];
}

/**
 * With managed webhooks and admission handlers, the webhook configurations: both are kept, whichever
 * kinds of handlers there are (the other one is kept empty); after the creation, by name only.
 */
function managedAdmissionRules(registry: Registry, options: RbacOptions): NeededRule[] {
  if (!options.managedAdmission || registry.webhooks.length === 0) return [];
  const types = new Set(["mutatingwebhookconfigurations", "validatingwebhookconfigurations"]);
  return [{
    reason: "managed admission: creating the webhook configurations",
    scope: "cluster",
    apiGroups: ["admissionregistration.k8s.io"],
    resources: [...types].sort(),
    verbs: ["create"],
  }, {
    reason: "managed admission: keeping the webhooks up to date",
    scope: "cluster",
    apiGroups: ["admissionregistration.k8s.io"],
    resources: [...types].sort(),
    verbs: ["patch"],
    resourceNames: [options.managedAdmission],
  }];
}

/**
 * With managed webhooks, the operator reads and patches the `spec.conversion` of the CRDs that its
 * converters convert (by name: the CRDs are known from the converters' resources).
 */
function conversionRules(registry: Registry, resolved: ResolvedSelectors, options: RbacOptions): NeededRule[] {
  if (!options.managedAdmission) return [];
  const crds = new Set<string>();
  for (const converter of registry.converters) {
    for (const resource of resolved.get(converter.selector) ?? []) {
      if (resource.group) crds.add(`${resource.plural}.${resource.group}`);
    }
  }
  if (crds.size === 0) return [];
  return [{
    reason: "managed conversion webhooks: the CRDs' spec.conversion",
    scope: "cluster",
    apiGroups: ["apiextensions.k8s.io"],
    resources: ["customresourcedefinitions"],
    verbs: ["get", "patch"],
    resourceNames: [...crds].sort(),
  }];
}

/**
 * A shard group's member lists and watches the group's Leases by their label, and creates, renews
 * (a merge patch) and finally deletes its own Lease. RBAC cannot narrow either part: a rule's
 * `resourceNames` does not apply to lists and watches by label, nor to creation, and the own
 * Lease's name comes from the member's identity (the pod's name), which is not known in advance.
 */
function shardingRules(namespace: string | undefined): NeededRule[] {
  const where = namespace === undefined ? {} : { namespace };
  return [{
    reason: "sharding: following the group's Leases (by their label, which resourceNames cannot restrict)",
    scope: "install",
    ...where,
    apiGroups: ["coordination.k8s.io"],
    resources: ["leases"],
    verbs: ["list", "watch"],
  }, {
    reason: "sharding: the member's own Lease, created, renewed, removed (named after the pod: not known in advance)",
    scope: "install",
    ...where,
    apiGroups: ["coordination.k8s.io"],
    resources: ["leases"],
    verbs: ["create", "patch", "delete"],
  }];
}

/**
 * The manifests: a ServiceAccount; with `-A` a ClusterRole and its binding for everything; with
 * `-n` a ClusterRole for what is cluster-wide by nature (CRDs, namespaces, cluster-scoped resources,
 * webhook configurations), and a Role and binding per served namespace (for patterns, the
 * namespaced rules go to the ClusterRole: the namespaces are not known in advance); the Leases'
 * Role in the operator's own namespace (or the shard group's, `--shard-namespace`).
 *
 * @param rules From {@linkcode neededRules}.
 * @param options The same options.
 */
export function rbacManifests(rules: readonly NeededRule[], options: RbacOptions): KubernetesObject[] {
  const { name, installNamespace } = options;
  const subject = { kind: "ServiceAccount", name, namespace: installNamespace };
  const exactNamespaces = options.clusterwide
    ? null
    : options.namespaces.every((pattern) => new NamespacePatterns([pattern]).allExact)
    ? [...new Set(options.namespaces)]
    : null;
  const plain = (rule: NeededRule): PolicyRule => ({
    apiGroups: rule.apiGroups,
    resources: rule.resources,
    ...(rule.resourceNames ? { resourceNames: rule.resourceNames } : {}),
    verbs: rule.verbs,
  });
  const clusterRules: PolicyRule[] = [];
  const namespacedRules: PolicyRule[] = [];
  const installRules = new Map<string, PolicyRule[]>();
  for (const rule of rules) {
    if (rule.scope === "install") {
      const namespace = rule.namespace ?? installNamespace;
      installRules.set(namespace, [...(installRules.get(namespace) ?? []), plain(rule)]);
    } else if (rule.scope === "namespaced" && exactNamespaces) namespacedRules.push(plain(rule));
    else clusterRules.push(plain(rule));
  }
  const manifests: KubernetesObject[] = [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace: installNamespace } },
  ];
  const rbac = "rbac.authorization.k8s.io/v1";
  const roleRef = (kind: string) => ({ apiGroup: "rbac.authorization.k8s.io", kind, name });
  if (clusterRules.length) {
    manifests.push({
      apiVersion: rbac,
      kind: "ClusterRole",
      metadata: { name },
      rules: clusterRules as unknown as JsonValue,
    });
    manifests.push({
      apiVersion: rbac,
      kind: "ClusterRoleBinding",
      metadata: { name },
      roleRef: roleRef("ClusterRole"),
      subjects: [subject],
    });
  }
  const roles = new Map<string, PolicyRule[]>();
  for (const namespace of namespacedRules.length ? exactNamespaces ?? [] : []) {
    roles.set(namespace, [...namespacedRules]);
  }
  for (const [namespace, extra] of installRules) roles.set(namespace, [...(roles.get(namespace) ?? []), ...extra]);
  for (const [namespace, roleRules] of roles) {
    manifests.push({
      apiVersion: rbac,
      kind: "Role",
      metadata: { name, namespace },
      rules: roleRules as unknown as JsonValue,
    });
    manifests.push({
      apiVersion: rbac,
      kind: "RoleBinding",
      metadata: { name, namespace },
      roleRef: roleRef("Role"),
      subjects: [subject],
    });
  }
  return manifests;
}
