/**
 * The bundle of a fixture that bench/compare_contestants.ts starts as `bundle`: made by this checkout's
 * `kopf build`, as the project of `kopf init` builds its image, once per fixture and run of the bench.
 *
 * @module
 */

import { basename, join } from "node:path";

/** The `kopf build` bundles made so far, by fixture: one build per fixture and run of the bench. */
const bundles = new Map<string, string>();

/**
 * The `kopf build --minify` bundle of a fixture (`buildFlags`: `--minify`, or none to see what it saves), with this
 * checkout's CLI, into a temporary folder removed when the bench exits; synchronous, since contestants start
 * synchronously, and once.
 */
export function bundleOf(root: string, fixture: string, buildFlags: readonly string[]): string {
  const known = bundles.get(fixture);
  if (known) return known;
  const folder = emptyFolder("kopf-bench-bundle-");
  const bundle = join(folder, basename(fixture).replace(/\.ts$/, ".js"));
  const { success, stderr } = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "build", fixture, ...buildFlags, "-o", bundle],
    cwd: root,
    stdout: "null",
    stderr: "piped",
  }).outputSync();
  if (!success) throw new Error(`kopf build ${fixture} failed:\n${new TextDecoder().decode(stderr)}`);
  bundles.set(fixture, bundle);
  return bundle;
}

/** A new empty folder, removed when the bench exits. */
export function emptyFolder(prefix: string): string {
  const folder = Deno.makeTempDirSync({ prefix });
  globalThis.addEventListener("unload", () => Deno.removeSync(folder, { recursive: true }));
  return folder;
}
