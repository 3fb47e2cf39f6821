/**
 * `kopf generate rbac FILES... [-m SPEC]... [-n NS... | -A] [--name NAME] [--leader-elect | --shard-group NAME]
 * [--peering]`: a ServiceAccount, (Cluster)Roles and bindings with the rules the handlers and features need.
 *
 * @module
 */

import { defaultRegistry, neededRules, rbacManifests } from "@kopf/kopf/shipping";
import { parseManifestCommand, printManifests } from "./manifest_options.ts";
import { UsageError } from "./usage.ts";

/** The usage line of `kopf generate rbac`. */
export const RBAC_USAGE = "Usage: kopf generate rbac [OPTIONS] FILES...";

/** The help of `kopf generate rbac`. */
export const RBAC_HELP = `${RBAC_USAGE}

  Print a ServiceAccount, (Cluster)Roles and bindings with exactly the rules that the handlers of
  FILES and the enabled features need. The handlers' resources are resolved by the cluster's
  discovery (the kubeconfig, as for 'kopf run'), or by --crd files. With -n: Roles in those namespaces (a ClusterRole
  for what is cluster-wide); with -A: a ClusterRole.

Options:
  -m, --module SPEC              A module with handlers (repeatable).
  -n, --namespace NS             A served namespace or pattern (repeatable).
  -A, --all-namespaces           Serve all namespaces.
      --name NAME                The ServiceAccount's and roles' name (kopf-operator).
      --install-namespace NS     Where the ServiceAccount lives (the first -n, or default).
      --leader-elect             Leader election: the Lease (get, list, watch, update by name;
                                 create).
      --leader-elect-resource-name NAME
                                 The Lease's name, as for 'kopf run' (kopf).
      --shard-group NAME         Sharding, as for 'kopf run': the group's Leases (list, watch,
                                 create, patch, delete; not by name, as the members' Leases
                                 are named after their pods). Not with --leader-elect.
      --shard-namespace NS       The namespace of the group's Leases, as for 'kopf run'
                                 (default: --install-namespace).
      --peering                  Peering: the peering objects (list, watch, patch).
      --managed-admission NAME   settings.admission.managed: the webhook configurations.
      --extra-rules FILE         More rules (YAML: a list of rules, or a Role) for what the
                                 handlers touch through their own client; they go where the
                                 handled resources go (the Roles with -n, the ClusterRole
                                 with -A or patterns).
      --context NAME             The kubeconfig context for discovery.
      --crd FILE                 Resolve the handlers' resources against these CRDs (YAML;
                                 repeatable) instead of the cluster: no cluster is needed.
  -h, --help                     Show this message and exit.
`;

/**
 * Runs `kopf generate rbac`.
 *
 * @param args The arguments after `generate rbac`.
 */
export async function generateRbac(args: string[]): Promise<void> {
  const { parsed, input } = await parseManifestCommand(
    RBAC_USAGE,
    [
      { long: "leader-elect", type: "boolean", env: false },
      { long: "leader-elect-resource-name", type: "string", env: false },
    ],
    args,
    (own) => {
      if (own.values["leader-elect"] === true && own.values["shard-group"] !== undefined) {
        throw new UsageError(
          "--shard-group and --leader-elect do not go together: choose one, as for 'kopf run' (leader election: one " +
            "replica works, the others stand by; sharding: every replica works on its share of the objects).",
          RBAC_USAGE,
        );
      }
    },
  );
  if (!input) {
    console.log(RBAC_HELP);
    return;
  }
  const options = {
    ...input.rbac,
    leaderElect: parsed.values["leader-elect"] === true,
    leaseName: parsed.values["leader-elect-resource-name"] as string | undefined,
  };
  printManifests(rbacManifests(neededRules(defaultRegistry, input.resolved, options), options));
}
