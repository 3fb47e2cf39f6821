/**
 * What `kopf generate rbac` and `kopf generate deployment` share: the handler files, the scope,
 * the features, the handlers loaded and their resources resolved, YAML out.
 *
 * @module
 */

import { Document, isCollection, isPair, isScalar, parse, parseAllDocuments, visit } from "yaml";
import { ApiConnectionError, ApiUnauthorizedError, type KubernetesObject, LoginError } from "@kopf/kopf";
import {
  defaultRegistry,
  type PolicyRule,
  type RbacOptions,
  type ResolvedSelectors,
  resolveHandledResources,
} from "@kopf/kopf/shipping";
import { loadHandlers } from "./loading.ts";
import { type OptionSpec, parseCommand, type ParsedCommand, processEnvironment, resolveScope } from "./options.ts";
import { UsageError } from "./usage.ts";

/** The options both commands have. */
export const MANIFEST_OPTIONS: readonly OptionSpec[] = [
  { long: "module", short: "m", type: "string", multiple: true, env: false },
  { long: "namespace", short: "n", type: "string", multiple: true, env: false },
  { long: "all-namespaces", short: "A", type: "boolean", env: false },
  { long: "name", type: "string", env: false },
  { long: "install-namespace", type: "string", env: false },
  { long: "peering", type: "boolean", env: false },
  { long: "shard-group", type: "string", env: false },
  { long: "shard-namespace", type: "string", env: false },
  { long: "managed-admission", type: "string", env: false },
  { long: "extra-rules", type: "string", env: false },
  { long: "context", type: "string", env: false },
  { long: "crd", type: "string", multiple: true, env: false },
];

/** The parsed common options, with the handlers loaded and resolved. */
export interface ManifestInput {
  rbac: RbacOptions;
  resolved: ResolvedSelectors;
}

/**
 * Parses the common options, loads the handler files and resolves their resources.
 *
 * @param usage The usage line.
 * @param specs The command's own options (added to the common ones).
 * @param args The arguments.
 * @param checkOwn Checks the command's own options, so that a usage error comes before the
 *   handlers are loaded and the cluster is asked.
 */
export async function parseManifestCommand(
  usage: string,
  specs: readonly OptionSpec[],
  args: string[],
  checkOwn?: (parsed: ParsedCommand) => void,
): Promise<{ parsed: ParsedCommand; input?: ManifestInput }> {
  const parsed = parseCommand("generate", usage, [...MANIFEST_OPTIONS, ...specs], args, processEnvironment);
  if (parsed.help) return { parsed };
  checkOwn?.(parsed);
  const values = parsed.values;
  checkSharding(values, usage);
  const modules = (values.module as string[] | undefined) ?? [];
  if (parsed.positionals.length === 0 && modules.length === 0) {
    throw new UsageError("Nothing to generate for: give handler files or -m modules.", usage);
  }
  const scope = resolveScope("generate", parsed, () => undefined, usage);
  if (!scope.clusterwide && scope.namespaces.length === 0) {
    throw new UsageError("Give the served namespaces (-n NS\u2026) or all of them (-A).", usage);
  }
  const name = (values.name as string | undefined) ?? "kopf-operator";
  const installNamespace = (values["install-namespace"] as string | undefined) ??
    (scope.clusterwide ? "default" : scope.namespaces.find((namespace) => /^[a-z0-9-]+$/.test(namespace)) ?? "default");
  await loadHandlers(parsed.positionals, modules);
  const extraRules = values["extra-rules"] ? await readExtraRules(values["extra-rules"] as string, usage) : [];
  const crdFiles = values.crd as string[] | undefined;
  const crds = crdFiles ? await readCrds(crdFiles, usage) : undefined;
  const resolved = await resolveResources(values.context as string | undefined, crds);
  const webhooks = defaultRegistry.webhooks.length + defaultRegistry.converters.length;
  if (webhooks && values["managed-admission"] === undefined) {
    // The name is set by a startup handler (settings.admission.managed), which is not run here.
    console.error(
      "kopf: the handlers include admission webhooks or converters; if settings.admission.managed is set, give " +
        "--managed-admission NAME for the rules to patch the webhook configurations and the CRDs' conversion.",
    );
  }
  return {
    parsed,
    input: {
      resolved,
      rbac: {
        namespaces: scope.namespaces,
        clusterwide: scope.clusterwide,
        name,
        installNamespace,
        peering: values.peering === true,
        shardGroup: values["shard-group"] as string | undefined,
        shardNamespace: values["shard-namespace"] as string | undefined,
        managedAdmission: values["managed-admission"] as string | undefined,
        extraRules,
      },
    },
  };
}

/**
 * Resolves the handlers' resources against the CRDs given, or else by the cluster's discovery; a
 * cluster that cannot be reached or logged into is an error that names both ways.
 */
async function resolveResources(
  context: string | undefined,
  crds: KubernetesObject[] | undefined,
): Promise<ResolvedSelectors> {
  if (crds) return await resolveHandledResources(undefined, { crds });
  try {
    return await resolveHandledResources(undefined, { context });
  } catch (error) {
    const unreachable = error instanceof LoginError || error instanceof ApiConnectionError ||
      error instanceof ApiUnauthorizedError;
    if (!unreachable) throw error;
    const reason = error.message.replace(/\.$/, "");
    throw new Error(
      "The handlers' resources are resolved by the cluster's discovery, which needs a cluster and its " +
        `credentials (the kubeconfig, as for 'kopf run'): ${reason}. Point KUBECONFIG (or --context) at a ` +
        "cluster that serves the resources, or resolve them offline, without a cluster, from their " +
        "CustomResourceDefinitions: --crd FILE (YAML; repeatable).",
      { cause: error },
    );
  }
}

/** `--shard-namespace` needs `--shard-group`; both are names, as for `kopf run`. */
function checkSharding(values: ParsedCommand["values"], usage: string): void {
  if (values["shard-group"] === undefined && values["shard-namespace"] !== undefined) {
    throw new UsageError("--shard-namespace needs --shard-group NAME.", usage);
  }
  for (const long of ["shard-group", "shard-namespace"]) {
    const value = values[long] as string | undefined;
    if (value !== undefined && !/^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/.test(value)) {
      throw new UsageError(
        `--${long} must be a name of lower-case letters, digits, "-" and "." (at most 63), not "${value}".`,
        usage,
      );
    }
  }
}

/** Reads `--crd FILE`s: YAML streams of CustomResourceDefinitions. */
async function readCrds(files: readonly string[], usage: string): Promise<KubernetesObject[]> {
  const crds: KubernetesObject[] = [];
  for (const file of files) {
    try {
      for (const document of parseAllDocuments(await Deno.readTextFile(file))) {
        const object = document.toJS() as KubernetesObject | null;
        if (object) crds.push(object);
      }
    } catch (error) {
      throw new UsageError(`--crd ${file}: ${error instanceof Error ? error.message : String(error)}`, usage);
    }
  }
  return crds;
}

/** Reads `--extra-rules FILE`: a YAML list of policy rules (or an object with `rules:`, as a Role). */
async function readExtraRules(file: string, usage: string): Promise<PolicyRule[]> {
  let data: unknown;
  try {
    data = parse(await Deno.readTextFile(file));
  } catch (error) {
    throw new UsageError(`--extra-rules ${file}: ${error instanceof Error ? error.message : String(error)}`, usage);
  }
  const rules = Array.isArray(data) ? data : (data as { rules?: unknown } | null)?.rules;
  const valid = Array.isArray(rules) &&
    rules.every((rule) =>
      Array.isArray(rule?.apiGroups) && Array.isArray(rule?.resources) && Array.isArray(rule?.verbs)
    );
  if (!valid) {
    throw new UsageError(
      `--extra-rules ${file}: expected a list of rules with apiGroups, resources and verbs (as in a Role).`,
      usage,
    );
  }
  return rules as PolicyRule[];
}

/** The line width of `deno fmt` in our projects and in those of `kopf init`, which format the manifests too. */
const LINE_WIDTH = 120;

/**
 * Manifests as one YAML stream; lists of plain values (verbs, resources, args) on one line, as
 * kubectl users write them, when that line fits in {@linkcode LINE_WIDTH} (`deno fmt` would break it).
 */
export function manifestsYaml(manifests: readonly KubernetesObject[]): string {
  const documents = manifests.map((manifest) => {
    const document = new Document(manifest, { aliasDuplicateObjects: false });
    visit(document, {
      Seq(_, node, path) {
        if (!node.items.every(isScalar)) return;
        // Two columns per enclosing collection but the document's root map; the key and ": "; then
        // "[a, b]", counting each value as if quoted, so that the estimate errs on the block side.
        const indent = 2 * (path.filter((ancestor) => isCollection(ancestor)).length - 1);
        const pair = path.at(-1);
        const key = isPair(pair) && isScalar(pair.key) ? String(pair.key.value).length + 2 : 2;
        const values = node.items.reduce((sum, item) => sum + String(item.value).length + 4, 0);
        node.flow = indent + key + values <= LINE_WIDTH;
      },
    });
    return document.toString({ lineWidth: 0, flowCollectionPadding: false }).trimEnd();
  });
  return documents.join("\n---\n") + "\n";
}

/** Prints manifests as one YAML stream. */
export function printManifests(manifests: readonly KubernetesObject[]): void {
  console.log(manifestsYaml(manifests).trimEnd());
}
