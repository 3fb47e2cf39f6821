/**
 * `kopf init`: a new project whose own `deno task check` and `deno task test` (a LocalCluster and
 * KopfRunner) pass against this checkout, and whose crd.yaml is generated from its types.ts.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { projectFiles } from "../cli/init.ts";
import { freshNamespace, testCluster } from "./support/cluster.ts";
import { parseManifests } from "./support/identity.ts";
import { runKopf } from "./support/kopf_process.ts";

const ROOT = new URL("..", import.meta.url).pathname;

async function task(cwd: string, name: string, ...args: string[]): Promise<{ code: number; output: string }> {
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["task", name, ...args],
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: result.code, output: decoder.decode(result.stdout) + decoder.decode(result.stderr) };
}

Deno.test("kopf init --kopf CHECKOUT: the new project's deno task check and deno task test pass", async () => {
  const folder = join(await Deno.makeTempDir({ prefix: "kopf-init-" }), "my-operator");
  const made = await runKopf(["init", folder, "--kopf", ROOT]);
  assert.equal(made.code, 0, made.stderr);
  const names = [...Deno.readDirSync(folder)].map((entry) => entry.name).sort();
  assert.deepEqual(names, ["crd.yaml", "deno.json", "deploy", "handlers.ts", "handlers_test.ts", "types.ts"]);
  const deploy = [...Deno.readDirSync(join(folder, "deploy"))].map((entry) => entry.name).sort();
  assert.deepEqual(deploy, ["Dockerfile", "README.md", "operator.yaml"]);
  // The generated test talks to the cluster as docs/testing.md does: the client and the runner.
  const generated = await Deno.readTextFile(join(folder, "handlers_test.ts"));
  assert.match(generated, /kopf\.connect\(\{ kubeconfig: cluster\.kubeconfig \}\)/);
  assert.match(generated, /runner\.waitFor\(/);
  assert.doesNotMatch(generated, /fetch\(|Authorization|setTimeout/, "no raw requests, no hand-made polling");
  // One source of the resource's shape: the handlers take their types from types.ts, crd.yaml is made of it.
  assert.match(await Deno.readTextFile(join(folder, "handlers.ts")), /kopf\.on\.create<KopfExample>\(/);
  const options = ["--kind", "KopfExample", "--group", "kopf.dev", "--short-name", "kex"];
  const generatedCrd = await runKopf(["generate", "crd", join(folder, "types.ts"), ...options]);
  assert.equal(generatedCrd.code, 0, generatedCrd.stderr);
  assert.equal(await Deno.readTextFile(join(folder, "crd.yaml")), generatedCrd.stdout);
  // YAML as users keep it (kubectl's output, fixtures): the check task neither fails on it nor rewrites it.
  const fixture = "apiVersion:   v1\nkind: ConfigMap\nmetadata: {name: fixture}\ndata:\n    key:   'value'\n";
  await Deno.writeTextFile(join(folder, "fixture.yaml"), fixture);
  const check = await task(folder, "check");
  assert.equal(check.code, 0, check.output);
  assert.equal(await Deno.readTextFile(join(folder, "fixture.yaml")), fixture);
  const test = await task(folder, "test");
  assert.equal(test.code, 0, test.output);
  assert.match(test.output, /ok \| 1 passed \| 0 failed/);
});

Deno.test("kopf init refuses a folder that has a deno.json", async () => {
  const folder = await Deno.makeTempDir({ prefix: "kopf-init-" });
  await Deno.writeTextFile(join(folder, "deno.json"), "{}");
  const result = await runKopf(["init", folder]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /has a deno\.json already/);
});

Deno.test("kopf init without --kopf imports @kopf/kopf and @kopf/cli from JSR", () => {
  const config = JSON.parse(projectFiles("jsr:@kopf/kopf@^0.1.0")["deno.json"]);
  assert.equal(config.imports["@kopf/kopf"], "jsr:@kopf/kopf@^0.1.0");
  assert.equal(config.imports["@kopf/cli"], "jsr:@kopf/cli@^0.1.0");
  assert.match(
    config.tasks.run,
    /^deno install --quiet && deno run -A .* jsr:@kopf\/cli@\^0\.1\.0 run -A handlers\.ts$/,
  );
  assert.equal(config.nodeModulesDir, "manual");
  assert.deepEqual(Object.keys(config.tasks), ["run", "test", "check", "crd", "build", "rbac", "deployment"]);
  assert.equal(
    config.tasks.crd,
    "deno install --quiet && deno run -A jsr:@kopf/cli@^0.1.0 generate crd types.ts --kind KopfExample --group kopf.dev --short-name kex " +
      "-o crd.yaml",
  );
  assert.match(config.tasks.check, / && deno task crd --check$/);
});

Deno.test("kopf init: the project's deno task check fails while crd.yaml is older than types.ts; deno task crd updates it", async () => {
  const folder = join(await Deno.makeTempDir({ prefix: "kopf-init-" }), "my-operator");
  const made = await runKopf(["init", folder, "--kopf", ROOT]);
  assert.equal(made.code, 0, made.stderr);
  const types = join(folder, "types.ts");
  const source = await Deno.readTextFile(types);
  const edited = source.replace(`tone?: "Quiet" | "Loud";`, `tone?: "Quiet" | "Loud" | "Whisper";`);
  assert.notEqual(edited, source);
  await Deno.writeTextFile(types, edited);
  const stale = await task(folder, "check");
  assert.equal(stale.code, 1, stale.output);
  assert.match(stale.output, /kopf: crd\.yaml is not what types\.ts gives now: generate it again/);
  const crd = await task(folder, "crd");
  assert.equal(crd.code, 0, crd.output);
  assert.match(await Deno.readTextFile(join(folder, "crd.yaml")), /enum: \[Quiet, Loud, Whisper\]/);
  const fresh = await task(folder, "crd", "--check");
  assert.equal(fresh.code, 0, fresh.output);
});

Deno.test("kopf init: the project's deno task build writes the image's bundle, minified and in ASCII, and it runs", async () => {
  const folder = join(await Deno.makeTempDir({ prefix: "kopf-init-" }), "my-operator");
  const made = await runKopf(["init", folder, "--kopf", ROOT]);
  assert.equal(made.code, 0, made.stderr);
  const built = await task(folder, "build");
  assert.equal(built.code, 0, built.output);
  const bundle = join(folder, "dist", "operator.js");
  const text = await Deno.readTextFile(bundle);
  assert.match(text, /^[^\u0080-\uffff]*$/, "ASCII: one other character would double its size in V8's heap");
  assert.ok(text.split("\n").length < 1000, `minified: ${text.split("\n").length} lines`);
  // As the image runs it: the Dockerfile's ENTRYPOINT (its permissions and V8 flags) and its environment.
  const dockerfile = await Deno.readTextFile(join(folder, "deploy", "Dockerfile"));
  const entrypoint = dockerfile.match(/^ENTRYPOINT (\[[^\]]*\])/m)?.[1].replaceAll("\\\n", "");
  assert.ok(entrypoint, dockerfile);
  const [deno, ...args] = JSON.parse(entrypoint) as string[];
  assert.equal(deno, "deno");
  assert.ok(args.includes("--v8-flags=--max-semi-space-size=8,--expose-gc"), entrypoint);
  assert.ok(args.includes("--no-code-cache"), entrypoint); // a new container's Deno cache is always empty
  const environment = Object.fromEntries(
    [...dockerfile.matchAll(/^ENV (\w+)=(.+)$/gm)].map((match) => [match[1], match[2]]),
  );
  assert.equal(environment.MALLOC_MMAP_THRESHOLD_, "131072", dockerfile);
  assert.doesNotMatch(dockerfile, /LD_PRELOAD|jemalloc/, "glibc's allocator, no other one to install");
  const help = await new Deno.Command(Deno.execPath(), {
    args: [...args.map((arg) => arg === "/app/operator.js" ? bundle : arg), "run", "--help"],
    env: environment,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(help.code, 0, new TextDecoder().decode(help.stderr));
  assert.match(new TextDecoder().decode(help.stdout), /Usage: kopf run/);
});

Deno.test("kopf init: deploy/operator.yaml is what the project's deno task deployment computes, and the API server accepts it", async () => {
  const { client, kubeconfig } = await testCluster();
  const folder = join(await Deno.makeTempDir({ prefix: "kopf-init-" }), "my-operator");
  const made = await runKopf(["init", folder, "--kopf", ROOT]);
  assert.equal(made.code, 0, made.stderr);
  const written = await Deno.readTextFile(join(folder, "deploy", "operator.yaml"));
  const computed = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "deployment"],
    cwd: folder,
    env: { NO_COLOR: "1", KUBECONFIG: "/nonexistent" }, // --crd crd.yaml: no cluster needed
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(computed.code, 0, new TextDecoder().decode(computed.stderr));
  assert.equal(written.replace(/^#.*\n/, ""), new TextDecoder().decode(computed.stdout));
  const manifests = parseManifests(written);
  assert.deepEqual(manifests.map((manifest) => manifest.kind), [
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Deployment",
  ]);
  // The names are the template's: a fresh namespace of this test holds them for the dry run.
  const namespace = await freshNamespace(client, "init-deploy");
  const namespaced = manifests.map((manifest) =>
    manifest.metadata.namespace ? { ...manifest, metadata: { ...manifest.metadata, namespace } } : manifest
  );
  const applied = await new Deno.Command("kubectl", {
    args: ["apply", "--dry-run=server", "-f", "-"],
    env: { KUBECONFIG: kubeconfig },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = applied.stdin.getWriter();
  await writer.write(new TextEncoder().encode(namespaced.map((manifest) => JSON.stringify(manifest)).join("\n")));
  await writer.close();
  const result = await applied.output();
  assert.equal(result.code, 0, new TextDecoder().decode(result.stderr));
  assert.equal(new TextDecoder().decode(result.stdout).match(/created \(server dry run\)/g)?.length, 4);
});
