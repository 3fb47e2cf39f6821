/**
 * `kopf init [DIR]`: a new operator project -- deno.json (imports and tasks), types.ts (the custom
 * resource as TypeScript) and crd.yaml generated from it, handlers.ts, a test against a LocalCluster
 * with KopfRunner, and deploy/ (the Dockerfile recipe).
 *
 * @module
 */

import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import * as kopf from "@kopf/kopf";
import { deploymentManifest, neededRules, rbacManifests, Registry, resolveHandledResources } from "@kopf/kopf/shipping";
import { IMAGE_DENO_FLAGS, IMAGE_ENVIRONMENT, OPERATOR_V8_FLAGS } from "./build.ts";
import { generateCrdCommand } from "./generate_crd.ts";
import { manifestsYaml } from "./manifest_options.ts";
import { type OptionSpec, parseCommand, processEnvironment } from "./options.ts";
import { UsageError } from "./usage.ts";
import denoJson from "./deno.json" with { type: "json" };

/** The usage line of `kopf init`. */
export const INIT_USAGE = "Usage: kopf init [OPTIONS] [DIR]";

/** The help of `kopf init`. */
export const INIT_HELP = `${INIT_USAGE}

  Make a new operator project in DIR (the current folder by default; it must have no deno.json):
  deno.json with the tasks run, test, check, crd, build, rbac and deployment; types.ts (the
  custom resource the handlers serve, as TypeScript) and crd.yaml (generated from it by
  'deno task crd'; 'deno task check' fails while it is not up to date); handlers.ts;
  handlers_test.ts (a LocalCluster and KopfRunner); deploy/ (the Dockerfile and the manifests:
  RBAC and a Deployment).

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
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
  // The same command as the project's `deno task crd`, by the CLI that runs now: the project
  // works at once, and its check finds crd.yaml up to date.
  await generateCrdCommand([join(dir, "types.ts"), ...CRD_ARGS, "-o", join(dir, "crd.yaml")]);
  const crd = await Deno.readTextFile(join(dir, "crd.yaml"));
  await Deno.writeTextFile(join(dir, "deploy", "operator.yaml"), await templateManifests(crd));
  const written = [...Object.keys(files), "crd.yaml", "deploy/operator.yaml"];
  console.log(`A new operator in ${dir}: ${written.join(", ")}.`);
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
  // node_modules is set up by `deno install` before each task (a few ms when nothing changed), not by
  // Deno's "auto" mode, which checks the whole folder again whenever a module graph loads: the CLI
  // and the handler files load in 0.06 s instead of 0.19.
  const install = "deno install --quiet && ";
  const config = {
    imports,
    tasks: {
      run: `${install}deno run -A ${OPERATOR_V8_FLAGS} ${cli} run -A handlers.ts`,
      test: `${install}deno test -A`,
      check: `${install}deno fmt --check && deno lint && deno check . && deno task crd --check`,
      crd: `${install}deno run -A ${cli} generate crd types.ts ${CRD_ARGS.join(" ")} -o crd.yaml`,
      build: `${install}deno run -A ${cli} build handlers.ts --minify -o dist/operator.js`,
      rbac: `${install}deno run -A ${cli} generate rbac handlers.ts -A --name my-operator --crd crd.yaml`,
      deployment:
        `${install}deno run -A ${cli} generate deployment handlers.ts -A --name my-operator --image my-operator:latest --crd crd.yaml`,
    },
    nodeModulesDir: "manual",
    // YAML (CRDs, manifests, fixtures) is kept as written or generated: \`deno fmt\` neither checks nor rewrites it.
    fmt: { lineWidth: 120, exclude: ["**/*.yaml", "**/*.yml"] },
  };
  return {
    "deno.json": JSON.stringify(config, null, 2) + "\n",
    "types.ts": TYPES,
    "handlers.ts": HANDLERS,
    "handlers_test.ts": TEST,
    "deploy/Dockerfile": DOCKERFILE,
    "deploy/README.md": DEPLOY_README,
  };
}

/** The options of `kopf generate crd` for the template's resource, after its file. */
const CRD_ARGS = ["--kind", "KopfExample", "--group", "kopf.dev", "--short-name", "kex"];

/**
 * The RBAC and Deployment of the new project, computed as `deno task deployment` does: from the
 * template's handler (registered here in a registry of its own, as handlers.ts registers it) and
 * the CRD generated from the template's types.
 */
async function templateManifests(crdYaml: string): Promise<string> {
  const registry = new Registry();
  kopf.on.create("kopfexamples.v1.kopf.dev", { registry }, function created() {});
  const crds = parseAllDocuments(crdYaml).map((document) => document.toJS());
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
  /** The package's exports (`.`, `./testing`, ...). */
  exports?: Record<string, string>;
  /** The package's own import map (its dependencies). */
  imports?: Record<string, string>;
}

const TYPES = `/**
 * The custom resource as TypeScript: the one source of its shape. \`deno task crd\` writes crd.yaml from
 * KopfExampleSpec and KopfExampleStatus (JSDoc text becomes descriptions, JSDoc tags validation markers);
 * \`deno task check\` fails while crd.yaml is not what this file gives. The markers: see docs/crds.md of kopf.
 *
 * @module
 */

/** Whole numbers: \`type: integer\` in the CRD. */
export type Integer = number;

/** What a KopfExample asks for. */
export interface KopfExampleSpec {
  /**
   * Whom to greet.
   * @minLength 1
   * @default world
   */
  greet?: string;
  /**
   * How many times to say it.
   * @minimum 1
   * @maximum 3
   * @default 1
   */
  times?: Integer;
  /** How to say it. */
  tone?: "Quiet" | "Loud";
}

/**
 * What the operator reports: handlers' results go here under their ids, so it keeps undeclared fields.
 * @preserveUnknownFields
 */
export interface KopfExampleStatus {
  /** The result of the handler \`created\`. */
  created?: { message?: string };
  [key: string]: unknown;
}

/** A KopfExample as handlers and the client see it: \`kopf.on.create<KopfExample>(...)\`, \`api.get<KopfExample>(...)\`. */
export interface KopfExample {
  apiVersion?: "kopf.dev/v1";
  kind?: "KopfExample";
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: KopfExampleSpec;
  status?: KopfExampleStatus;
}
`;

const HANDLERS = `/** The operator's handlers: run them with \`deno task run\`. */

import * as kopf from "@kopf/kopf";
import type { KopfExample } from "./types.ts";

// The type argument types \`spec\` (and \`body\`, \`status\`) as types.ts declares them.
kopf.on.create<KopfExample>("kopfexamples.v1.kopf.dev", function created({ spec, logger }) {
  logger.info(\`Created with spec: \${JSON.stringify(spec)}\`);
  const greeting = \`hello \${spec.greet ?? "world"}\`;
  const message = Array(spec.times ?? 1).fill(spec.tone === "Loud" ? greeting.toUpperCase() : greeting).join(", ");
  return { message }; // stored at status.created
});
`;

const TEST = `import assert from "node:assert/strict";
import { parse } from "yaml";
import * as kopf from "@kopf/kopf";
import { KopfRunner, LocalCluster } from "@kopf/kopf/testing";
import type { KopfExample } from "./types.ts";

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

  // The API server validates objects by the CRD's schema, i.e. by the markers of types.ts.
  await assert.rejects(
    api.create<KopfExample>({
      apiVersion: "kopf.dev/v1",
      kind: "KopfExample",
      metadata: { name: "too-many", namespace: "default" },
      spec: { times: 4 },
    }),
    /spec\\.times/,
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
    spec: { tone: "Loud" },
  });
  await runner.waitFor("Handler 'created' succeeded.", 60);
  const examples = api.watch<KopfExample>("kopfexamples", {
    namespace: "default",
    fieldSelector: "metadata.name=example",
    signal,
  });
  const example = await first(examples, (it) => it.status?.created !== undefined);
  assert.equal(example.status?.created?.message, "HELLO WORLD"); // greet and times: the CRD's defaults

  await runner.stop(); // rejects if the operator exited with an error
  assert.match(runner.output, /Created with spec: .*"greet":"world"/);
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
# Deno looks for a newer release of itself in the background at every start of a fresh container
# (a DNS lookup and an HTTPS request to dl.deno.land); an operator has no use for it.
ENV DENO_NO_UPDATE_CHECK=1
# glibc's allocator gives blocks of 128 KiB and more back when they are freed (by default it keeps
# them once it has freed one): the start reads the operator's code as one large string.
${Object.entries(IMAGE_ENVIRONMENT).map(([name, value]) => `ENV ${name}=${value}`).join("\n")}
USER deno
# No V8 code cache: each new container starts with an empty Deno cache, so where it can write one, one
# would be made at every start and never read (2 MiB of memory).
ENTRYPOINT ["deno", "run", "--allow-net", "--allow-env", \\
  "--allow-read=/var/run/secrets/kubernetes.io/serviceaccount", "${OPERATOR_V8_FLAGS}", \\
  ${IMAGE_DENO_FLAGS.map((flag) => `"${flag}", `).join("")}"/app/operator.js"]
CMD ["run", "--all-namespaces", "--standalone", "--liveness=http://0.0.0.0:8080/healthz", \\
  "--metrics=http://0.0.0.0:9090/metrics"]
`;

const DEPLOY_README = `# Deploying

1. The image: \`docker build -f deploy/Dockerfile -t REGISTRY/my-operator:1.0 .\` and push it.
2. The manifests: \`deploy/operator.yaml\` (a ServiceAccount, the RBAC, a Deployment) is computed from the handlers and
   \`crd.yaml\` (itself generated from \`types.ts\` by \`deno task crd\`); after changing them,
   \`deno task deployment > deploy/operator.yaml\` computes it again (edit the task for --image, -n/-A, --replicas,
   --peering; drop --crd to resolve the resources against your cluster instead), or only the RBAC: \`deno task rbac\`.
3. \`kubectl apply -f crd.yaml -f deploy/operator.yaml\`.

The Deployment's arguments replace the Dockerfile's CMD; the ENTRYPOINT keeps the permissions.
`;
