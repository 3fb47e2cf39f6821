/**
 * `kopf generate deployment FILES... [--image IMAGE] [--name NAME] [-n NS | -A] [--replicas N]
 * [--shard-group NAME] [--metrics-port PORT | --no-metrics]`: the RBAC of `kopf generate rbac` and a Deployment running
 * the operator.
 *
 * @module
 */

import {
  defaultRegistry,
  deploymentManifest,
  LIVENESS_PORT,
  METRICS_PORT,
  neededRules,
  rbacManifests,
} from "@kopf/kopf/shipping";
import { parseManifestCommand, printManifests } from "./manifest_options.ts";
import { integerOption, type ParsedCommand } from "./options.ts";
import { UsageError } from "./usage.ts";

/** The usage line of `kopf generate deployment`. */
export const DEPLOYMENT_USAGE = "Usage: kopf generate deployment [OPTIONS] FILES...";

/** The help of `kopf generate deployment`. */
export const DEPLOYMENT_HELP = `${DEPLOYMENT_USAGE}

  Print the RBAC of 'kopf generate rbac' and a Deployment that runs the operator image (built
  with the Dockerfile of 'kopf init'): the liveness probe, the Prometheus metrics on a port named
  'metrics' with the prometheus.io/scrape|port|path pod annotations, a non-root read-only
  container, memory requests from the measured figures, and leader election when --replicas is
  more than 1 \u2014 or, with --shard-group, replicas that share the objects between them.

Options: those of 'kopf generate rbac' (but --leader-elect, which follows --replicas), and
      --image IMAGE        The operator's image (kopf-operator:latest).
      --replicas N         Replicas (1); more than 1 turns leader election on, unless
                           --shard-group: then each replica runs with --shard-group NAME
                           (its pod's name as its identity) and handles its share.
      --metrics-port PORT  The port of the metrics endpoint, /metrics (${METRICS_PORT}).
      --no-metrics         Serve no metrics: no --metrics, no port, no annotations.
  -h, --help               Show this message and exit.
`;

/**
 * Runs `kopf generate deployment`.
 *
 * @param args The arguments after `generate deployment`.
 */
export async function generateDeployment(args: string[]): Promise<void> {
  let replicas = 1;
  let port: number | false = METRICS_PORT;
  const { parsed, input } = await parseManifestCommand(
    DEPLOYMENT_USAGE,
    [
      { long: "image", type: "string", env: false },
      { long: "replicas", type: "string", env: false },
      { long: "metrics-port", type: "string", env: false },
      { long: "no-metrics", type: "boolean", env: false },
    ],
    args,
    (own) => {
      replicas = integerOption("generate", own, "replicas", DEPLOYMENT_USAGE, { min: 1 }) ?? 1;
      port = metricsPort(own);
    },
  );
  if (!input) {
    console.log(DEPLOYMENT_HELP);
    return;
  }
  const options = { ...input.rbac, leaderElect: replicas > 1 && !input.rbac.shardGroup, leaseName: input.rbac.name };
  printManifests([
    ...rbacManifests(neededRules(defaultRegistry, input.resolved, options), options),
    deploymentManifest({
      name: options.name,
      installNamespace: options.installNamespace,
      image: (parsed.values.image as string | undefined) ?? "kopf-operator:latest",
      namespaces: options.namespaces,
      clusterwide: options.clusterwide,
      replicas,
      shardGroup: options.shardGroup,
      shardNamespace: options.shardNamespace,
      peering: options.peering,
      metricsPort: port,
    }),
  ]);
}

/** `--metrics-port PORT` (a valid port other than the liveness endpoint's), or `false` for `--no-metrics`. */
function metricsPort(parsed: ParsedCommand): number | false {
  const port = integerOption("generate", parsed, "metrics-port", DEPLOYMENT_USAGE, { min: 1 });
  if (parsed.values["no-metrics"]) {
    if (port !== undefined) {
      throw new UsageError("Either --metrics-port or --no-metrics can be used, not both.", DEPLOYMENT_USAGE);
    }
    return false;
  }
  if (port === undefined) return METRICS_PORT;
  if (port > 65535) throw new UsageError(`--metrics-port must be at most 65535, not ${port}.`, DEPLOYMENT_USAGE);
  if (port === LIVENESS_PORT) {
    throw new UsageError(
      `--metrics-port ${port} is the liveness endpoint's port; give another (the default is ${METRICS_PORT}).`,
      DEPLOYMENT_USAGE,
    );
  }
  return port;
}
