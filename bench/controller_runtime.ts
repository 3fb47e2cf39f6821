/**
 * The `cr` contestant's binary: `bench/fixtures/controller_runtime/` (a controller-runtime
 * reconciler) built with Go from the Go module proxy into a cache folder outside the repository,
 * once per version of its sources, on first use.
 *
 * The folder: `$KOPF_BENCH_CACHE`, else `$XDG_CACHE_HOME/kopf-deno/bench`, else
 * `~/.cache/kopf-deno/bench`; the binary: `controller-runtime-<hash>/cr-operator`, the hash being
 * that of the fixture's `main.go`, `go.mod` and `go.sum`. A build goes to a temporary folder that is
 * renamed into place when complete, so an interrupted build or two at once leave no broken binary.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The built binary. */
export interface ControllerRuntimeBinary {
  readonly binary: string;
}

/** Why it cannot be built here (no Go toolchain, no module proxy). */
export interface ControllerRuntimeSkipped {
  readonly skipped: string;
}

const SOURCES = ["main.go", "go.mod", "go.sum"];

/** Returns the binary, building it first if this version of the sources has none yet. */
export async function ensureControllerRuntime(
  root: URL,
): Promise<ControllerRuntimeBinary | ControllerRuntimeSkipped> {
  const fixture = fileURLToPath(new URL("bench/fixtures/controller_runtime/", root));
  const folder = join(cacheFolder(), `controller-runtime-${await sourcesHash(fixture)}`);
  const binary = join(folder, "cr-operator");
  if (await exists(binary)) return { binary };

  await Deno.mkdir(join(folder, ".."), { recursive: true });
  const partial = await Deno.makeTempDir({ dir: join(folder, ".."), prefix: "controller-runtime.partial-" });
  const logFile = join(partial, "build.log");
  console.error(`Building the controller-runtime contestant into ${folder} (the first time takes minutes) …`);
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("go", {
      args: ["build", "-trimpath", "-o", join(partial, "cr-operator"), "."],
      cwd: fixture,
      // -mod=mod: go.sum is committed, but a newer toolchain may still want to add to it.
      env: { GOFLAGS: "-mod=mod -buildvcs=false" },
      stdin: "null",
    }).output();
  } catch (error) {
    await Deno.remove(partial, { recursive: true });
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    return { skipped: "No `go` on PATH to build the controller-runtime contestant (Go 1.26 or newer)." };
  }
  const decoder = new TextDecoder();
  await Deno.writeTextFile(logFile, decoder.decode(output.stdout) + decoder.decode(output.stderr));
  if (!output.success) {
    return { skipped: `Building the controller-runtime contestant failed (code ${output.code}); see ${logFile}.` };
  }
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

async function sourcesHash(fixture: string): Promise<string> {
  const parts = await Promise.all(SOURCES.map((name) => Deno.readFile(join(fixture, name))));
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
