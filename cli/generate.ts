/**
 * `kopf generate WHAT ...`: manifests computed from the handler files, printed as YAML, TypeScript
 * types computed from CRD files, or a CRD computed from TypeScript declarations.
 *
 * @module
 */

import { generateCrdCommand } from "./generate_crd.ts";
import { generateDeployment } from "./generate_deployment.ts";
import { generateRbac } from "./generate_rbac.ts";
import { generateTypesCommand } from "./generate_types.ts";
import { UsageError } from "./usage.ts";

/** The usage line of `kopf generate`. */
export const GENERATE_USAGE = "Usage: kopf generate rbac|deployment|types|crd [OPTIONS] FILES...";

/** The help of `kopf generate`. */
export const GENERATE_HELP = `${GENERATE_USAGE}

Print what the handler files need, computed from what they register (rbac, deployment),
TypeScript interfaces of custom resources computed from their CRD files (types), or a CRD
computed from TypeScript declarations (crd).

Generators:
  rbac        A ServiceAccount, (Cluster)Roles and bindings with the rules the operator needs.
  deployment  The RBAC above and a Deployment running the operator.
  types       Interfaces for each kind and served version of the CRDs.
  crd         A CustomResourceDefinition from the declarations of a kind's spec and status.

See 'kopf generate GENERATOR --help' for the options of each.
`;

/**
 * Runs `kopf generate` with the arguments after `generate`.
 *
 * @param args The arguments after `generate`.
 */
export async function generate(args: string[]): Promise<void> {
  const [what, ...rest] = args;
  switch (what) {
    case "--help":
    case "-h":
      console.log(GENERATE_HELP);
      return;
    case "rbac":
      return await generateRbac(rest);
    case "deployment":
      return await generateDeployment(rest);
    case "types":
      await generateTypesCommand(rest);
      return;
    case "crd":
      await generateCrdCommand(rest);
      return;
    default:
      throw new UsageError(what ? `No such thing to generate: ${what}.` : "Say what to generate.", GENERATE_USAGE);
  }
}
