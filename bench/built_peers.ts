/**
 * The peers built from sources of ours: the `cr` contestant (`bench/fixtures/controller_runtime/`,
 * a controller-runtime reconciler, built with Go from the Go module proxy) and the `rs` contestant
 * (`bench/fixtures/kube_rs/`, a kube-rs controller, built with Cargo from crates.io). Each is built
 * into a cache folder outside the repository, once per version of its sources, on first use.
 *
 * The folder: `$KOPF_BENCH_CACHE`, else `$XDG_CACHE_HOME/kopf-deno/bench`, else
 * `~/.cache/kopf-deno/bench`; a binary: `<peer>-<hash>/<binary>`, the hash being that of the
 * fixture's sources. A build goes to a temporary folder that is renamed into place when complete,
 * so an interrupted build or two at once leave no broken binary. Cargo keeps its intermediate
 * files in `kube-rs-target/` there, so that a change of the sources rebuilds only the fixture.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The built binary. */
export interface BuiltPeer {
  readonly binary: string;
}

/** Why it cannot be built here (no toolchain, no registry). */
export interface PeerSkipped {
  readonly skipped: string;
}

/** How one peer is built. */
interface Recipe {
  /** Its name in messages. */
  readonly title: string;
  /** Its folder under `bench/fixtures/`, and the files whose hash names a build. */
  readonly fixture: string;
  readonly sources: readonly string[];
  /** The cache folder's prefix and the binary's name in it. */
  readonly prefix: string;
  readonly binary: string;
  /** The toolchain's command, and what it needs to be. */
  readonly tool: string;
  readonly toolNeeded: string;
  /** The build's arguments and environment, given the fixture's folder, the output folder and the cache. */
  readonly build: (output: string, cache: string) => { args: string[]; env: Record<string, string> };
  /** Where the build leaves the binary (its own output by default). */
  readonly builtAt?: (output: string, cache: string) => string;
}

const CONTROLLER_RUNTIME: Recipe = {
  title: "controller-runtime",
  fixture: "controller_runtime",
  sources: ["main.go", "go.mod", "go.sum"],
  prefix: "controller-runtime",
  binary: "cr-operator",
  tool: "go",
  toolNeeded: "Go 1.26 or newer",
  build: (output) => ({
    args: ["build", "-trimpath", "-o", join(output, "cr-operator"), "."],
    // -mod=mod: go.sum is committed, but a newer toolchain may still want to add to it.
    env: { GOFLAGS: "-mod=mod -buildvcs=false" },
  }),
};

const KUBE_RS: Recipe = {
  title: "kube-rs",
  fixture: "kube_rs",
  sources: ["Cargo.toml", "Cargo.lock", "src/main.rs"],
  prefix: "kube-rs",
  binary: "rs-operator",
  tool: "cargo",
  toolNeeded: "Rust 1.89 or newer",
  build: (_output, cache) => ({
    args: ["build", "--release", "--locked"],
    env: { CARGO_TARGET_DIR: join(cache, "kube-rs-target") },
  }),
  builtAt: (_output, cache) => join(cache, "kube-rs-target", "release", "rs-operator"),
};

/** The controller-runtime contestant's binary, built first if this version of its sources has none yet. */
export function ensureControllerRuntime(root: URL): Promise<BuiltPeer | PeerSkipped> {
  return ensureBuilt(CONTROLLER_RUNTIME, root);
}

/** The kube-rs contestant's binary, built first if this version of its sources has none yet. */
export function ensureKubeRs(root: URL): Promise<BuiltPeer | PeerSkipped> {
  return ensureBuilt(KUBE_RS, root);
}

async function ensureBuilt(recipe: Recipe, root: URL): Promise<BuiltPeer | PeerSkipped> {
  const fixture = fileURLToPath(new URL(`bench/fixtures/${recipe.fixture}/`, root));
  const cache = cacheFolder();
  const folder = join(cache, `${recipe.prefix}-${await sourcesHash(fixture, recipe.sources)}`);
  const binary = join(folder, recipe.binary);
  if (await exists(binary)) return { binary };

  await Deno.mkdir(cache, { recursive: true });
  const partial = await Deno.makeTempDir({ dir: cache, prefix: `${recipe.prefix}.partial-` });
  const logFile = join(partial, "build.log");
  console.error(`Building the ${recipe.title} contestant into ${folder} (the first time takes minutes) …`);
  const { args, env } = recipe.build(partial, cache);
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(recipe.tool, { args, cwd: fixture, env, stdin: "null" }).output();
  } catch (error) {
    await Deno.remove(partial, { recursive: true });
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    return { skipped: `No \`${recipe.tool}\` on PATH to build the ${recipe.title} contestant (${recipe.toolNeeded}).` };
  }
  const decoder = new TextDecoder();
  await Deno.writeTextFile(logFile, decoder.decode(output.stdout) + decoder.decode(output.stderr));
  if (!output.success) {
    return { skipped: `Building the ${recipe.title} contestant failed (code ${output.code}); see ${logFile}.` };
  }
  if (recipe.builtAt) await Deno.copyFile(recipe.builtAt(partial, cache), join(partial, recipe.binary));
  try {
    await Deno.rename(partial, folder);
  } catch (error) {
    // Another bench built it meanwhile: theirs is as good.
    if (!(await exists(binary))) throw error;
    await Deno.remove(partial, { recursive: true });
  }
  return { binary };
}

function cacheFolder(): string {
  const own = Deno.env.get("KOPF_BENCH_CACHE");
  if (own) return own;
  const xdg = Deno.env.get("XDG_CACHE_HOME");
  if (xdg) return join(xdg, "kopf-deno", "bench");
  const home = Deno.env.get("HOME");
  if (!home) throw new Error("Cannot choose a cache folder for the bench: set KOPF_BENCH_CACHE or HOME.");
  return join(home, ".cache", "kopf-deno", "bench");
}

async function sourcesHash(fixture: string, sources: readonly string[]): Promise<string> {
  const parts = await Promise.all(sources.map((name) => Deno.readFile(join(fixture, name))));
  const joined = new Uint8Array(parts.reduce((sum, part) => sum + part.length + 1, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length + 1; // a zero byte between files: moving bytes from one to the next changes the hash
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", joined));
  return Array.from(digest.slice(0, 8), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

async function exists(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
