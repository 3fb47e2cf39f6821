/**
 * `kopf init [DIR]`: a new operator project — deno.json (imports and tasks), handlers.ts, crd.yaml,
 * a test against a LocalCluster with KopfRunner, and deploy/ (the Dockerfile recipe).
 *
 * @module
 */

import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import * as kopf from "@kopf/kopf";
import { deploymentManifest, neededRules, rbacManifests, Registry, resolveHandledResources } from "@kopf/kopf/shipping";
import { manifestsYaml } from "./manifest_options.ts";
import { type OptionSpec, parseCommand, processEnvironment } from "./options.ts";
import { UsageError } from "./usage.ts";
import denoJson from "./deno.json" with { type: "json" };

/** The usage line of `kopf init`. */
export const INIT_USAGE = "Usage: kopf init [OPTIONS] [DIR]";

/** The help of `kopf init`. */
export const INIT_HELP = `${INIT_USAGE}

  Make a new operator project in DIR (the current folder by default; it must have no deno.json):
  deno.json with the tasks run, test, check, build, rbac and deployment; handlers.ts; crd.yaml (the
  resource the handlers serve); handlers_test.ts (a LocalCluster and KopfRunner); deploy/ (the
  Dockerfile and the manifests: RBAC and a Deployment).

Options:
      --kopf SPEC  Where @kopf/kopf and @kopf/cli come from: a folder of a checkout (for development),
                   or a version of JSR (jsr:@kopf/kopf@^${denoJson.version} by default).
  -h, --help       Show this message and exit.
`;

const INIT_OPTIONS: readonly OptionSpec[] = [
  { long: "kopf", type: "string", env: false },
];

/**
 * Runs `kopf init`.
 *
 * @param args The arguments after `init`.
 */
export async function init(args: string[]): Promise<void> {
  const parsed = parseCommand("init", INIT_USAGE, INIT_OPTIONS, args, processEnvironment);
  if (parsed.help) {
    console.log(INIT_HELP);
    return;
  }
  if (parsed.positionals.length > 1) throw new UsageError("Give one folder at most.", INIT_USAGE);
  const dir = resolve(parsed.positionals[0] ?? ".");
  if (await Deno.stat(join(dir, "deno.json")).catch(() => null)) {
    throw new UsageError(`${dir} has a deno.json already: give a new or empty folder.`, INIT_USAGE);
  }
  const given = parsed.values.kopf as string | undefined;
  const source = given ?? `jsr:@kopf/kopf@^${denoJson.version}`;
  let checkout: CheckoutConfig | undefined;
  if (!/^(jsr|npm|https?):/.test(source)) {
    try {
      checkout = JSON.parse(await Deno.readTextFile(join(source, "deno.json")));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new UsageError(`--kopf ${source}: not a checkout of kopf (its deno.json: ${reason}).`, INIT_USAGE);
    }
  }
  const files = projectFiles(source, checkout);
  files["deploy/operator.yaml"] = await templateManifests();
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
  console.log(`A new operator in ${dir}: ${Object.keys(files).join(", ")}.`);
  console.log("Next: deno task test; deno task run; deno task build; see deploy/Dockerfile.");
}

/**
 * The project's files by path.
 *
 * @param source A folder with a checkout of kopf (its `deno.json`), or a JSR specifier of @kopf/kopf.
 * @param checkout The checkout's `deno.json` when `source` is a folder.
 */
export function projectFiles(source: string, checkout?: CheckoutConfig): Record<string, string> {
  const imports: Record<string, string> = {};
  let cli: string;
  if (checkout) {
    // A checkout's modules import their dependencies by bare names: the project's import map must
    // know them too, and every export of the package by its subpath.
    const root = resolve(source);
    for (const [key, target] of Object.entries(checkout.exports ?? {})) {
      imports[`@kopf/kopf${key.slice(1)}`] = join(root, target);
    }
    Object.assign(imports, checkout.imports ?? {});
    cli = join(root, "cli", "main.ts");
    imports["@kopf/cli"] = cli;
  } else {
    imports["@kopf/kopf"] = source;
    cli = source.replace("@kopf/kopf", "@kopf/cli");
    imports["@kopf/cli"] = cli;
    imports["yaml"] = "npm:yaml@^2.9.1";
  }
  const config = {
    imports,
    tasks: {
      run: `deno run -A --v8-flags=--max-semi-space-size=2 ${cli} run -A handlers.ts`,
      test: "deno test -A",
      check: "deno fmt --check && deno lint && deno check .",
      build: `deno run -A ${cli} build handlers.ts -o dist/operator.js`,
      rbac: `deno run -A ${cli} generate rbac handlers.ts -A --name my-operator --crd crd.yaml`,
      deployment:
        `deno run -A ${cli} generate deployment handlers.ts -A --name my-operator --image my-operator:latest --crd crd.yaml`,
    },
    nodeModulesDir: "auto",
    // YAML (CRDs, manifests, fixtures) is kept as written or generated: \`deno fmt\` neither checks nor rewrites it.
    fmt: { lineWidth: 120, exclude: ["**/*.yaml", "**/*.yml"] },
  };
  return {
    "deno.json": JSON.stringify(config, null, 2) + "\n",
    "handlers.ts": HANDLERS,
    "handlers_test.ts": TEST,
    "crd.yaml": CRD,
    "deploy/Dockerfile": DOCKERFILE,
    "deploy/README.md": DEPLOY_README,
  };
}

/**
 * The RBAC and Deployment of the new project, computed as `deno task deployment` does: from the
 * template's handler (registered here in a registry of its own, as handlers.ts registers it) and
 * the template's CRD.
 */
async function templateManifests(): Promise<string> {
  const registry = new Registry();
  kopf.on.create("kopfexamples.v1.kopf.dev", { registry }, function created() {});
  const crds = parseAllDocuments(CRD).map((document) => document.toJS());
  const resolved = await resolveHandledResources(registry, { crds });
  const options = { namespaces: [], clusterwide: true, name: "my-operator", installNamespace: "default" };
  const header = "# Computed by kopf init for the template's handlers; `deno task deployment > deploy/operator.yaml` " +
    "computes it again for yours.\n";
  return header + manifestsYaml([
    ...rbacManifests(neededRules(registry, resolved, options), options),
    deploymentManifest({ ...options, image: "my-operator:latest", replicas: 1 }),
  ]);
}

/** What `kopf init --kopf FOLDER` reads from the checkout's `deno.json`. */
export interface CheckoutConfig {
  /** The package's exports (`.`, `./testing`, …). */
  exports?: Record<string, string>;
  /** The package's own import map (its dependencies). */
  imports?: Record<string, string>;
}

const HANDLERS = `/** The operator's handlers: run them with \`deno task run\`. */

import * as kopf from "@kopf/kopf";

kopf.on.create("kopfexamples.v1.kopf.dev", function created({ spec, logger }) {
  logger.info(\`Created with spec: \${JSON.stringify(spec)}\`);
  return { message: "hello world" }; // stored at status.created
});
`;

const TEST = `import assert from "node:assert/strict";
import { parse } from "yaml";
import * as kopf from "@kopf/kopf";
import { KopfRunner, LocalCluster } from "@kopf/kopf/testing";

/** The resource as this test reads it (\`kopf generate types crd.yaml\` writes such types from the CRD). */
interface KopfExample {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: Record<string, unknown>;
  status?: { created?: { message?: string } };
}

/** The first object a watch delivers that passes \`check\`; the watch's signal bounds a broken test. */
async function first<T>(events: AsyncIterable<kopf.ApiWatchEvent<T>>, check: (object: T) => boolean): Promise<T> {
  for await (const event of events) {
    if (event.type !== "LISTED" && check(event.object)) return event.object;
  }
  throw new Error("The watch ended (timed out) before the object got there.");
}

Deno.test("a new KopfExample gets status.created.message", async () => {
  await using cluster = await LocalCluster.start();
  // The test's own requests use the same client that handlers get as \`api\`.
  using api = await kopf.connect({ kubeconfig: cluster.kubeconfig });
  const signal = AbortSignal.timeout(60_000); // a bound for hangs, not a timing

  const crd = parse(await Deno.readTextFile(new URL("./crd.yaml", import.meta.url)));
  await api.create(crd);
  const crds = api.watch("customresourcedefinitions", { fieldSelector: \`metadata.name=\${crd.metadata.name}\`, signal });
  await first(
    crds,
    (it) => it.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") ?? false,
  );

  await using runner = await KopfRunner.start(["run", "-n", "default", "--standalone", "handlers.ts"], {
    kubeconfig: cluster.kubeconfig,
    cli: import.meta.resolve("@kopf/cli"),
    cwd: new URL(".", import.meta.url),
  });
  await api.create<KopfExample>({
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "example", namespace: "default" },
    spec: {},
  });
  await runner.waitFor("Handler 'created' succeeded.", 60);
  const examples = api.watch<KopfExample>("kopfexamples", {
    namespace: "default",
    fieldSelector: "metadata.name=example",
    signal,
  });
  const example = await first(examples, (it) => it.status?.created !== undefined);
  assert.equal(example.status?.created?.message, "hello world");

  await runner.stop(); // rejects if the operator exited with an error
  assert.match(runner.output, /Created with spec: \\{\\}/);
});
`;

const DOCKERFILE = `# The operator as one bundle (kopf build: the CLI, the handlers and every dependency in one file,
# so nothing is downloaded when it starts) on the official Deno image, run as the image's non-root
# user "deno" with the minimal permissions: the API server and the probe (--allow-net), the
# environment (--allow-env: KUBERNETES_SERVICE_*, POD_ID, KOPF_RUN_*), and the service account's
# token and CA (--allow-read of its folder). Build it from the project's folder:
#   docker build -f deploy/Dockerfile -t my-operator:1.0 .
FROM denoland/deno:${Deno.version.deno} AS build
WORKDIR /src
COPY . .
RUN deno task build

FROM denoland/deno:${Deno.version.deno}
WORKDIR /app
COPY --from=build /src/dist/operator.js /app/operator.js
USER deno
ENTRYPOINT ["deno", "run", "--allow-net", "--allow-env", \\
  "--allow-read=/var/run/secrets/kubernetes.io/serviceaccount", "--v8-flags=--max-semi-space-size=2", \\
  "/app/operator.js"]
CMD ["run", "--all-namespaces", "--standalone", "--liveness=http://0.0.0.0:8080/healthz", \\
  "--metrics=http://0.0.0.0:9090/metrics"]
`;

const DEPLOY_README = `# Deploying

1. The image: \`docker build -f deploy/Dockerfile -t REGISTRY/my-operator:1.0 .\` and push it.
2. The manifests: \`deploy/operator.yaml\` (a ServiceAccount, the RBAC, a Deployment) is computed from the handlers and
   \`crd.yaml\`; after changing them, \`deno task deployment > deploy/operator.yaml\` computes it again (edit the task for
   --image, -n/-A, --replicas, --peering; drop --crd to resolve the resources against your cluster instead), or only the
   RBAC: \`deno task rbac\`.
3. \`kubectl apply -f crd.yaml -f deploy/operator.yaml\`.

The Deployment's arguments replace the Dockerfile's CMD; the ENTRYPOINT keeps the permissions.
`;

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: kopfexamples.kopf.dev
spec:
  group: kopf.dev
  names: { kind: KopfExample, plural: kopfexamples, singular: kopfexample, shortNames: [kex] }
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      subresources: { status: {} }
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
`;
