/**
 * `kopf build`: one JavaScript file with the CLI, the handlers and one copy of the library, run
 * from an empty folder outside the repository with the minimal permissions; and the root cause of
 * lost handlers (two copies of the library in one process) fixed for any bundling.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { createExample, freshNamespace, getExample, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { createPeering } from "./support/peering.ts";
import { runKopf } from "./support/kopf_process.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** Builds examples/01-minimal into a fresh folder outside the repository; returns the bundle's path. */
async function buildMinimal(...flags: string[]): Promise<string> {
  const folder = await Deno.makeTempDir({ prefix: "kopf-build-test-" });
  const output = join(folder, "operator.js");
  const result = await runKopf(["build", "examples/01-minimal/example.ts", ...flags, "-o", output]);
  assert.equal(result.code, 0, result.stderr);
  return output;
}

/** Copies a file into an empty folder outside the repository; returns the copy's path. */
async function alone(file: string): Promise<string> {
  const folder = await Deno.makeTempDir({ prefix: "kopf-empty-" });
  assert.ok(!folder.startsWith(ROOT));
  const copy = join(folder, "operator.js");
  await Deno.copyFile(file, copy);
  assert.deepEqual([...Deno.readDirSync(folder)].map((entry) => entry.name), ["operator.js"]);
  return copy;
}

/** The operator's code in a bundle: the async functions' bodies that its entry module holds in comments, one per chunk. */
function bodyOf(bundle: string): string {
  const marker = bundle.match(/\.replaceAll\(("\*@kopf-end@*")/);
  assert.ok(marker, "the entry's marker of the comments' ends");
  const bodies = [...bundle.matchAll(/^function kopf\$chunk\d+\(\) \{\/\*(.*?)\*\/\}$/gms)].map((match) => match[1]);
  assert.ok(bodies.length > 0, "the entry's functions that hold the chunks");
  return bodies.join("\n").replaceAll(JSON.parse(marker[1]), "*/");
}

/** How many chunks a bundle's entry holds. */
function chunks(bundle: string): number {
  return bundle.match(/^function kopf\$chunk\d+\(\) \{\/\*/gm)?.length ?? 0;
}

/** The built-in modules that a bundle's entry imports (for its body). */
function entryImports(bundle: string): string[] {
  return [...bundle.matchAll(/^import \* as \S+ from ("node:[^"]+");$/gm)].map((match) => JSON.parse(match[1]));
}

/** Writes a JSON kubeconfig again as YAML, in a file of its own; returns its path. */
async function asYaml(kubeconfig: string): Promise<string> {
  const path = join(await Deno.makeTempDir({ prefix: "kopf-yaml-kubeconfig-" }), "config");
  const text = stringify(JSON.parse(await Deno.readTextFile(kubeconfig)));
  assert.doesNotMatch(text, /^\s*\{/, "YAML, not JSON");
  await Deno.writeTextFile(path, text);
  return path;
}

/** Runs `deno run <permissions> <script> <args>` in the script's folder, with only KUBECONFIG in the environment. */
function spawn(script: string, permissions: string[], args: string[], kubeconfig: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, script, ...args],
    cwd: join(script, ".."),
    clearEnv: true,
    // HOME only for Deno's own cache; the operator reads the kubeconfig that KUBECONFIG names.
    env: { NO_COLOR: "1", KUBECONFIG: kubeconfig, HOME: Deno.env.get("HOME") ?? "/" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Runs a spawned operator until an example object is handled, then stops it; returns its output. */
async function handlesAnObject(child: Deno.ChildProcess, namespace: string, name: string): Promise<string> {
  const { client } = await testCluster();
  const output = child.output();
  try {
    await createExample(client, namespace, name, { field: "value" });
    const message = await eventually(`status.createFn.message of ${name}`, async () => {
      const status = (await getExample(client, namespace, name)).status as
        | { createFn?: { message?: string } }
        | undefined;
      return status?.createFn?.message;
    });
    assert.equal(message, "hello world");
  } finally {
    try {
      child.kill("SIGTERM");
    } catch {
      // It has exited already: its output says why.
    }
  }
  const result = await output;
  const text = new TextDecoder().decode(result.stderr) + new TextDecoder().decode(result.stdout);
  assert.equal(result.code, 0, text);
  return text;
}

/**
 * Runs a bundle copied into an empty folder with the operator's minimal permissions over a fresh
 * namespace until an object there is handled; returns its output.
 */
async function handlesAloneWithMinimalPermissions(
  bundle: string,
  prefix: string,
  kubeconfig?: string,
): Promise<string> {
  const cluster = await testCluster();
  const client = cluster.client;
  kubeconfig ??= cluster.kubeconfig;
  const script = await alone(bundle);
  const namespace = await freshNamespace(client, prefix);
  const child = spawn(
    script,
    ["--allow-net", "--allow-env", `--allow-read=${kubeconfig}`],
    ["run", "-n", namespace, "--standalone"],
    kubeconfig,
  );
  return await handlesAnObject(child, namespace, `${prefix}-1`);
}

Deno.test("kopf build: the bundle holds one copy of the library and runs from an empty folder with --allow-net --allow-env --allow-read=KUBECONFIG", async () => {
  const bundle = await buildMinimal();
  const text = await Deno.readTextFile(bundle);
  assert.equal(bodyOf(text).split('"default-registry"').length - 1, 1, "exactly one copy of the registry's module");
  assert.ok(
    chunks(text) > 1,
    "split into chunks: the CLI's commands and the framework's optional parts load on demand",
  );
  // One character outside Latin-1 would make V8 keep the whole bundle as two bytes per character.
  assert.match(text, /^[^\u0080-\uffff]*$/, "the bundle is ASCII: its other characters are escaped");
  const output = await handlesAloneWithMinimalPermissions(bundle, "build");
  assert.match(output, /Handler 'createFn' succeeded\./);
  assert.doesNotMatch(output, /nothing to serve/i);
});

Deno.test("kopf build --minify: half the size or less, and the handlers keep their names (their ids)", async () => {
  const [plain, minified] = await Promise.all([buildMinimal(), buildMinimal("--minify")]);
  const sizes = await Promise.all([plain, minified].map(async (file) => (await Deno.stat(file)).size));
  assert.ok(sizes[1] * 2 <= sizes[0], `minified ${sizes[1]} bytes against ${sizes[0]}`);
  assert.match(await Deno.readTextFile(minified), /^[^\u0080-\uffff]*$/, "ASCII, minified too");
  // A YAML kubeconfig loads the yaml package, whose CommonJS requires a minified bundle once could not serve.
  const yamlKubeconfig = await asYaml((await testCluster()).kubeconfig);
  const output = await handlesAloneWithMinimalPermissions(minified, "build-minified", yamlKubeconfig);
  assert.match(output, /Handler 'createFn' succeeded\./, "the id from the function's name, as from source");
});

Deno.test("kopf build: neither bundle loads Node's module loader (node:module) at its start", async () => {
  for (const bundle of await Promise.all([buildMinimal(), buildMinimal("--minify")])) {
    const text = await Deno.readTextFile(bundle);
    assert.doesNotMatch(bodyOf(text), /getBuiltinModule\("node:module"\)|import\(\s*["']node:module/, bundle);
    assert.ok(!entryImports(text).includes("node:module"), bundle);
  }
});

Deno.test("kopf build: Deno's module graph holds the small entry alone, and the bundled `kopf init` writes what it writes from source", async () => {
  const bundle = await alone(await buildMinimal("--minify"));
  const info = await new Deno.Command(Deno.execPath(), { args: ["info", "--json", "--no-config", bundle] }).output();
  const graph = JSON.parse(new TextDecoder().decode(info.stdout)) as {
    modules: { kind: string; specifier: string; dependencies?: { specifier: string }[] }[];
  };
  const [entry, ...others] = graph.modules.sort((a, b) => a.kind === "esm" ? -1 : b.kind === "esm" ? 1 : 0);
  assert.equal(entry.kind, "esm");
  assert.deepEqual(
    others.map((module) => module.kind),
    others.map(() => "node"),
    "no module besides the entry and built-ins",
  );
  assert.deepEqual(
    (entry.dependencies ?? []).map((dependency) => dependency.specifier),
    entryImports(await Deno.readTextFile(bundle)),
  );
  // Its templates quote `import` declarations of Node's modules and `import.meta`: the rewrite left them as they are.
  const folders = await Promise.all(
    ["bundle", "source"].map((name) => Deno.makeTempDir({ prefix: `kopf-init-${name}-` })),
  );
  const [fromBundle, fromSource] = folders.map((folder) => join(folder, "project"));
  const runs = [[[bundle, "init", fromBundle], join(bundle, "..")], [
    ["cli/main.ts", "init", fromSource],
    ROOT,
  ]] as const;
  for (const [args, cwd] of runs) {
    const result = await new Deno.Command(Deno.execPath(), { args: ["run", "-A", ...args], cwd, stdin: "null" })
      .output();
    assert.equal(result.code, 0, new TextDecoder().decode(result.stderr));
  }
  const files = (root: string): string[] =>
    [...Deno.readDirSync(root)].flatMap((entry) =>
      entry.isDirectory ? files(join(root, entry.name)).map((name) => `${entry.name}/${name}`) : [entry.name]
    ).sort();
  assert.deepEqual(files(fromBundle), files(fromSource));
  assert.ok(files(fromSource).length >= 5, files(fromSource).join(", "));
  for (const name of files(fromSource)) {
    assert.equal(
      await Deno.readTextFile(join(fromBundle, name)),
      await Deno.readTextFile(join(fromSource, name)),
      name,
    );
  }
  assert.match(
    await Deno.readTextFile(join(fromBundle, "handlers_test.ts")),
    /^import assert from "node:assert\/strict";/,
  );
});

Deno.test("kopf build: modules whose chunks would share a variable that changes are bundled whole, and read it as it is", async () => {
  const folder = await Deno.makeTempDir({ prefix: "kopf-build-test-" });
  const output = join(folder, "operator.js");
  const built = await runKopf(["build", "tests/fixtures/shipping/changing/handlers.ts", "-o", output]);
  assert.equal(built.code, 0, built.stderr);
  const text = await Deno.readTextFile(output);
  assert.equal(
    chunks(text),
    1,
    "one chunk: split, the later chunk would have read the state as it was when it started",
  );
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-config", output, "--version"],
    cwd: folder,
    stdin: "null",
  }).output();
  assert.equal(result.code, 0, new TextDecoder().decode(result.stderr));
  const [printed, version] = new TextDecoder().decode(result.stdout).trim().split("\n");
  assert.deepEqual(JSON.parse(printed), { state: 1, later: 1 });
  assert.match(version, /^kopf \S+$/);
});

Deno.test("kopf build: the parts that load on demand run from the minified bundle: peering and leader election", async () => {
  const { client, kubeconfig } = await testCluster();
  const script = await alone(await buildMinimal("--minify"));
  const namespace = await freshNamespace(client, "build-parts");
  const peering = await createPeering(namespace);
  // Peering starts once the leader is elected: both parts load from their chunks.
  const parts = ["--peering", peering, "--leader-elect", `--leader-elect-resource-namespace=${namespace}`];
  const permissions = ["--allow-net", "--allow-env", `--allow-read=${kubeconfig}`];
  const child = spawn(script, permissions, ["run", "-n", namespace, ...parts, "--debug"], kubeconfig);
  const output = await handlesAnObject(child, namespace, "build-parts-1");
  assert.match(output, /Became the leader with the Lease/, "the leader election's chunk");
  assert.match(output, /peering is active/, "the peering's chunk, loaded by the leader");
  assert.doesNotMatch(output, /Traceback|TypeError|ReferenceError|is not a function/, output);
  assert.ok(chunks(await Deno.readTextFile(script)) > 1, "split into chunks");
});

Deno.test("kopf build: without one of the minimal permissions, the bundle stops at once and names the flag", async () => {
  const { kubeconfig } = await testCluster();
  const script = await alone(await buildMinimal());
  const all = ["--allow-net", "--allow-env", `--allow-read=${kubeconfig}`];
  for (const missing of all) {
    const permissions = all.filter((flag) => flag !== missing);
    const child = spawn(script, permissions, ["run", "-n", "default", "--standalone"], kubeconfig);
    const result = await child.output();
    const stderr = new TextDecoder().decode(result.stderr);
    assert.equal(result.code, 1, `without ${missing}:\n${stderr}`);
    const flag = missing.split("=")[0];
    assert.match(stderr, new RegExp(`^kopf: .*run again with the ${flag} flag`, "m"), `without ${missing}:\n${stderr}`);
  }
});

Deno.test("a CLI bundled alone with `deno bundle` still finds handlers that load the library from source (one registry per process)", async () => {
  const { client, kubeconfig } = await testCluster();
  const folder = await Deno.makeTempDir({ prefix: "kopf-cli-bundle-" });
  const cli = join(folder, "kopf.js");
  const bundled = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--quiet", "-o", cli, "cli/main.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(bundled.code, 0, new TextDecoder().decode(bundled.stderr));
  const namespace = await freshNamespace(client, "cli-bundle");
  const child = new Deno.Command(Deno.execPath(), {
    // The handler file's import map is the repository's: it loads @kopf/kopf from source, a second copy.
    args: [
      "run",
      "-A",
      "--config",
      "deno.json",
      cli,
      "run",
      "-n",
      namespace,
      "--standalone",
      "examples/01-minimal/example.ts",
    ],
    cwd: ROOT,
    env: { NO_COLOR: "1", KUBECONFIG: kubeconfig },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = await handlesAnObject(child, namespace, "two-copies-1");
  assert.doesNotMatch(output, /nothing to serve/i);
});

Deno.test("kopf build --compile makes an executable where denort can be had, and says clearly why not otherwise", async () => {
  const folder = await Deno.makeTempDir({ prefix: "kopf-compile-test-" });
  const output = join(folder, "operator.js");
  const result = await runKopf(["build", "examples/01-minimal/example.ts", "-o", output, "--compile"]);
  assert.ok((await Deno.stat(output)).isFile, "the bundle is written first");
  if (result.code === 0) {
    const version = await new Deno.Command(join(folder, "operator"), { args: ["--version"] }).output();
    assert.match(new TextDecoder().decode(version.stdout), /^kopf \d/);
  } else {
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /'deno compile' needs 'denort'/);
    assert.match(result.stderr, /DENORT_BIN/);
    assert.match(result.stderr, /The bundle .*operator\.js is complete: run it with 'deno run --allow-net/);
  }
});
