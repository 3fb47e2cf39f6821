/**
 * `promtool` for the tests of the metrics endpoint: built once from the Go module proxy
 * (github.com/prometheus/prometheus/cmd/promtool) into a cache folder outside the repository —
 * `$KOPF_PROMTOOL_CACHE`, else `~/.cache/kopf-deno/promtool` — and reused.
 *
 * The Prometheus module cannot be `go install`ed (its go.mod has `exclude` directives), so it is
 * built inside a small wrapper module that requires it.
 *
 * @module
 */

import { type CommandOutput, commandOutput } from "./command_output.ts";

/** The Prometheus release whose promtool is built (v3.7.3; Go modules use the v0.3xx.y scheme). */
const VERSION = "v0.307.3";
const PACKAGE = "github.com/prometheus/prometheus/cmd/promtool";

function cacheFolder(): string {
  const given = Deno.env.get("KOPF_PROMTOOL_CACHE");
  if (given) return given;
  const home = Deno.env.get("HOME");
  if (!home) {
    throw new Error("Set KOPF_PROMTOOL_CACHE or HOME: promtool is built into a cache folder outside the repo.");
  }
  return `${home}/.cache/kopf-deno/promtool`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function go(args: string[], cwd: string): Promise<void> {
  const output = await new Deno.Command("go", { args, cwd, env: { GOWORK: "off", GOFLAGS: "-mod=mod" } }).output();
  if (!output.success) {
    const text = new TextDecoder().decode(output.stderr).split("\n").slice(-20).join("\n");
    throw new Error(`Building promtool failed: \`go ${args.join(" ")}\` exited with ${output.code}:\n${text}`);
  }
}

let building: Promise<string> | undefined;

/** The path of the cached promtool binary, built first if missing (a few minutes on 2 cores). */
export function promtoolPath(): Promise<string> {
  building ??= (async () => {
    const folder = cacheFolder();
    const binary = `${folder}/promtool`;
    if (await exists(binary)) return binary;
    const src = `${folder}/src`;
    await Deno.mkdir(src, { recursive: true });
    await Deno.writeTextFile(`${src}/go.mod`, "module kopfdeno/promtool\n\ngo 1.26\n");
    await Deno.writeTextFile(`${src}/tools.go`, `//go:build tools\n\npackage tools\n\nimport _ "${PACKAGE}"\n`);
    console.error(`Building promtool ${VERSION} into ${folder} (once; a few minutes).`);
    await go(["get", `${PACKAGE}@${VERSION}`], src);
    await go(["build", "-o", `${binary}.partial`, PACKAGE], src);
    await Deno.rename(`${binary}.partial`, binary);
    return binary;
  })();
  return building;
}

/** Runs promtool with the arguments, the text on its standard input; returns its exit code and output. */
export async function promtool(args: string[], input: string): Promise<CommandOutput> {
  return await commandOutput(await promtoolPath(), args, { input });
}
