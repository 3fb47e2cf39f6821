/**
 * A Deployment that runs an operator built with `kopf build` (the image of the Dockerfile recipe):
 * its ServiceAccount, the liveness probe on `--liveness`, the Prometheus metrics on `--metrics`,
 * leader election with several replicas (or a shard group), memory sized from the measured figures, a non-root,
 * read-only container.
 *
 * @module
 */

import type { KubernetesObject } from "../model/body.ts";

/** Options of {@linkcode deploymentManifest}. */
export interface DeploymentOptions {
  /** The Deployment's (and ServiceAccount's) name. */
  name: string;
  /** Where it runs. */
  installNamespace: string;
  /** The image (of the Dockerfile recipe: its entrypoint runs the bundle with the minimal permissions). */
  image: string;
  /** The served namespaces (`-n`); empty with `clusterwide`. */
  namespaces: readonly string[];
  /** All namespaces (`-A`). */
  clusterwide: boolean;
  /** Replicas; more than one turns leader election on, unless they form a shard group. */
  replicas: number;
  /** A shard group (`--shard-group`): every replica works on its share of the objects, no leader election. */
  shardGroup?: string;
  /** The namespace of the shard group's Leases; the operator's own (`installNamespace`) by default. */
  shardNamespace?: string;
  /** Peering on; off means `--standalone`. */
  peering?: boolean;
  /** The metrics endpoint's port ({@linkcode METRICS_PORT} by default); `false` serves no metrics. */
  metricsPort?: number | false;
}

/** The port of the liveness endpoint in the container. */
export const LIVENESS_PORT = 8080;

/**
 * The port of the metrics endpoint in the container: a port of its own (named `metrics`), so that a
 * PodMonitor or a scrape config selects it by name and the liveness probe stays apart.
 */
export const METRICS_PORT = 9090;

/** The user id of the `deno` user of the official Deno image. */
export const DENO_UID = 1993;

/**
 * The Deployment. Memory: an idle operator takes about 63 MiB and one with 1,000 timed objects
 * up to 120 MiB with the image's V8 flags (docs/performance/cpu.md, "A young generation of 8 MiB,
 * not 2"), so it requests 128 MiB and is limited to 256 MiB; CPU is requested, not limited, so
 * that bursts are not throttled.
 *
 * @param options What to run and where.
 */
export function deploymentManifest(options: DeploymentOptions): KubernetesObject {
  const { name, replicas, shardGroup } = options;
  const leaderElect = replicas > 1 && !shardGroup;
  const metricsPort = options.metricsPort ?? METRICS_PORT;
  const labels = { "app.kubernetes.io/name": name, "app.kubernetes.io/component": "operator" };
  // The annotations that Prometheus's kubernetes_sd_configs examples (and many Helm charts) relabel on.
  const annotations = metricsPort === false ? undefined : {
    "prometheus.io/scrape": "true",
    "prometheus.io/port": String(metricsPort),
    "prometheus.io/path": "/metrics",
  };
  const args = [
    "run",
    ...(options.clusterwide ? ["--all-namespaces"] : options.namespaces.flatMap((namespace) => ["-n", namespace])),
    ...(options.peering ? [] : ["--standalone"]),
    `--liveness=http://0.0.0.0:${LIVENESS_PORT}/healthz`,
    ...(metricsPort === false ? [] : [`--metrics=http://0.0.0.0:${metricsPort}/metrics`]),
    ...(leaderElect ? ["--leader-elect", `--leader-elect-resource-name=${name}`] : []),
    ...(shardGroup
      ? [`--shard-group=${shardGroup}`, `--shard-namespace=${options.shardNamespace ?? options.installNamespace}`]
      : []),
    "--log-format=json",
  ];
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: options.installNamespace, labels },
    spec: {
      replicas,
      // One replica without leader election: never two operators at once during a rollout. Shard
      // members may overlap: a new pod joins the group and gets its share only as the others hand over.
      strategy: replicas > 1 || shardGroup ? { type: "RollingUpdate" } : { type: "Recreate" },
      selector: { matchLabels: labels },
      template: {
        metadata: annotations ? { labels, annotations } : { labels },
        spec: {
          serviceAccountName: name,
          automountServiceAccountToken: true,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: DENO_UID,
            runAsGroup: DENO_UID,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [{
            name: "operator",
            image: options.image,
            args,
            env: [
              // The pod's name is the operator's identity in peering records and the Lease.
              { name: "POD_ID", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
              // Only with leader election: `kopf run` refuses its options without it.
              ...(leaderElect
                ? [{ name: "KOPF_RUN_LEADER_ELECT_RESOURCE_NAMESPACE", value: options.installNamespace }]
                : []),
              // The member's identity in the shard group, and so the name of its Lease.
              ...(shardGroup ? [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }] : []),
            ],
            ports: [
              { name: "health", containerPort: LIVENESS_PORT },
              ...(metricsPort === false ? [] : [{ name: "metrics", containerPort: metricsPort }]),
            ],
            livenessProbe: {
              httpGet: { path: "/healthz", port: "health" },
              initialDelaySeconds: 10,
              periodSeconds: 10,
              failureThreshold: 3,
            },
            resources: { requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "256Mi" } },
            securityContext: {
              allowPrivilegeEscalation: false,
              readOnlyRootFilesystem: true,
              capabilities: { drop: ["ALL"] },
            },
          }],
        },
      },
    },
  };
}
