/**
 * `kopf generate deployment FILES… [--image IMAGE] [--name NAME] [-n NS | -A] [--replicas N]`: the
 * RBAC of `kopf generate rbac` and a Deployment running the operator.
 *
 * @module
 */

import { defaultRegistry, deploymentManifest, neededRules, rbacManifests } from "@kopf/kopf/shipping";
import { parseManifestCommand, printManifests } from "./manifest_options.ts";
import { integerOption } from "./options.ts";

/** The usage line of `kopf generate deployment`. */
export const DEPLOYMENT_USAGE = "Usage: kopf generate deployment [OPTIONS] FILES...";

/** The help of `kopf generate deployment`. */
export const DEPLOYMENT_HELP = `${DEPLOYMENT_USAGE}

  Print the RBAC of 'kopf generate rbac' and a Deployment that runs the operator image (built
  with the Dockerfile of 'kopf init'): the liveness probe, a non-root read-only container, memory
  requests from the measured figures, and leader election when --replicas is more than 1.

Options: those of 'kopf generate rbac' (but --leader-elect, which follows --replicas), and
      --image IMAGE   The operator's image (kopf-operator:latest).
      --replicas N    Replicas (1); more than 1 turns leader election on.
  -h, --help          Show this message and exit.
`;

/**
 * Runs `kopf generate deployment`.
 *
 * @param args The arguments after `generate deployment`.
 */
export async function generateDeployment(args: string[]): Promise<void> {
  const { parsed, input } = await parseManifestCommand(DEPLOYMENT_USAGE, [
    { long: "image", type: "string", env: false },
    { long: "replicas", type: "string", env: false },
  ], args);
  if (!input) {
    console.log(DEPLOYMENT_HELP);
    return;
  }
  const replicas = integerOption("generate", parsed, "replicas", DEPLOYMENT_USAGE, { min: 1 }) ?? 1;
  const options = { ...input.rbac, leaderElect: replicas > 1, leaseName: input.rbac.name };
  printManifests([
    ...rbacManifests(neededRules(defaultRegistry, input.resolved, options), options),
    deploymentManifest({
      name: options.name,
      installNamespace: options.installNamespace,
      image: (parsed.values.image as string | undefined) ?? "kopf-operator:latest",
      namespaces: options.namespaces,
      clusterwide: options.clusterwide,
      replicas,
      peering: options.peering,
    }),
  ]);
}
