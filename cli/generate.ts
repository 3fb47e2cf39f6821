/**
 * `kopf generate WHAT …`: manifests computed from the handler files, printed as YAML, or
 * TypeScript types computed from CRD files.
 *
 * @module
 */

import { generateDeployment } from "./generate_deployment.ts";
import { generateRbac } from "./generate_rbac.ts";
import { generateTypesCommand } from "./generate_types.ts";
import { UsageError } from "./usage.ts";

/** The usage line of `kopf generate`. */
export const GENERATE_USAGE = "Usage: kopf generate rbac|deployment|types [OPTIONS] FILES...";

/**
 * Runs `kopf generate` with the arguments after `generate`.
 *
 * @param args The arguments after `generate`.
 */
export async function generate(args: string[]): Promise<void> {
  const [what, ...rest] = args;
  switch (what) {
    case "rbac":
      return await generateRbac(rest);
    case "deployment":
      return await generateDeployment(rest);
    case "types":
      await generateTypesCommand(rest);
      return;
    default:
      throw new UsageError(what ? `No such thing to generate: ${what}.` : "Say what to generate.", GENERATE_USAGE);
  }
}
