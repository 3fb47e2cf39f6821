/**
 * Building kube-apiserver, kube-controller-manager and etcd once from the upstream Go modules
 * into the cache, so that tests need neither Docker nor downloaded release archives.
 *
 * k8s.io/kubernetes cannot be `go install`ed (its go.mod replaces staging modules with local
 * folders), so a wrapper module replaces each staging module with its published version.
 *
 * @module
 */

import { join } from "node:path";
import type { CacheLayout } from "./cache.ts";
import { ignoreNotFound, isFile, lastLines } from "./files.ts";
import { parseStagingModules, requiredVersion, stagingVersion } from "./go_mod.ts";

/** The binaries a complete cache folder holds. */
export const CACHED_BINARIES: readonly string[] = [
  "kube-apiserver",
  "kube-controller-manager",
  "etcd",
];

const ETCD_MODULE = "go.etcd.io/etcd/server/v3";
const WRAPPER_MODULE = "kopf.invalid/controlplane";
const PARTIAL_PREFIX = "bin.partial-";
const HEARTBEAT_MS = 60_000;
const LOCK_NOTICE_MS = 1_000;

/** Whether a folder holds every binary of a complete build. */
export async function hasAllBinaries(bin: string): Promise<boolean> {
  for (const name of CACHED_BINARIES) {
    if (!await isFile(join(bin, name))) return false;
  }
  return true;
}

// Builds of the same folder inside this process share one promise; the file lock is for other
// processes (flock also conflicts between two handles of one process, but waiting on it is slower).
const inProcess = new Map<string, Promise<void>>();

/**
 * Makes sure `layout.bin` holds all binaries for `version`, building them if needed.
 *
 * Safe against concurrent callers (another process waits on an exclusive lock and then finds the
 * binaries) and against interrupted builds (the folder appears only by a rename when complete).
 */
export function ensureBuilt(version: string, layout: CacheLayout): Promise<void> {
  let pending = inProcess.get(layout.bin);
  if (!pending) {
    pending = buildUnderLock(version, layout).finally(() => inProcess.delete(layout.bin));
    inProcess.set(layout.bin, pending);
  }
  return pending;
}

async function buildUnderLock(version: string, layout: CacheLayout): Promise<void> {
  if (await hasAllBinaries(layout.bin)) return;
  await Deno.mkdir(layout.root, { recursive: true });
  using lockFile = await Deno.open(layout.lock, { create: true, write: true });
  const notice = setTimeout(() => {
    say(`waiting for another process that is building into ${layout.root} (lock: ${layout.lock})`);
  }, LOCK_NOTICE_MS);
  try {
    await lockFile.lock(true);
  } finally {
    clearTimeout(notice);
  }
  if (await hasAllBinaries(layout.bin)) return;
  await removeStalePartials(layout.root);
  await build(version, layout);
}

/** Runs the Go tool in the wrapper module's folder (see {@linkcode runGo}). */
type Go = (args: string[]) => Promise<string>;

async function build(version: string, layout: CacheLayout): Promise<void> {
  const started = Date.now();
  using log = await Deno.open(layout.log, { create: true, write: true, truncate: true });
  // First, so that a missing Go toolchain is reported before anything else happens.
  const goVersion = (await runGo(["version"], layout.root, log)).trim();
  say(
    `building kube-apiserver, kube-controller-manager and etcd for Kubernetes v${version} ` +
      `from the upstream Go modules into ${layout.bin} (${goVersion}).\n` +
      `A first build takes about 10 minutes on 2 cores (it downloads ~600 MB of modules and fills ~3 GB of Go build cache); ` +
      `later runs reuse the cache. Go's output goes to ${layout.log}.`,
  );
  const partial = await Deno.makeTempDir({ dir: layout.root, prefix: PARTIAL_PREFIX });
  const go: Go = (args) => runGo(args, layout.src, log);
  const heartbeat = setInterval(() => {
    say(`still building\u2026 (${Math.round((Date.now() - started) / 60_000)} min so far)`);
  }, HEARTBEAT_MS);
  try {
    // A fresh wrapper each time: a go.mod left by an interrupted build may be half-edited.
    await Deno.remove(layout.src, { recursive: true }).catch(ignoreNotFound);
    await Deno.mkdir(layout.src, { recursive: true });
    await go(["mod", "init", WRAPPER_MODULE]);
    await requireModules(version, go);
    await compile(version, partial, go, layout.log);
    await Deno.chmod(partial, 0o755); // temporary folders are private; the cache is not
    // Only a hand-made, incomplete folder can be here (complete ones were detected above).
    await Deno.remove(layout.bin, { recursive: true }).catch(ignoreNotFound);
    await Deno.rename(partial, layout.bin);
  } catch (error) {
    await Deno.remove(partial, { recursive: true }).catch(ignoreNotFound);
    throw error;
  } finally {
    clearInterval(heartbeat);
  }
  say(`built into ${layout.bin} in ${Math.round((Date.now() - started) / 1000)} s`);
}

/**
 * Makes the wrapper module require the commands and etcd: the staging modules replaced by their
 * published versions, and etcd at the version k8s.io/kubernetes requires.
 */
async function requireModules(version: string, go: Go): Promise<void> {
  say(`resolving k8s.io/kubernetes@v${version} and its staging modules`);
  const goMod = await Deno.readTextFile(
    goModPath(await go(["mod", "download", "-json", `k8s.io/kubernetes@v${version}`])),
  );
  const staging = parseStagingModules(goMod);
  const etcdVersion = requiredVersion(goMod, ETCD_MODULE);
  if (staging.length === 0 || !etcdVersion) {
    throw new Error(
      `The go.mod of k8s.io/kubernetes@v${version} has no staging replaces or no ${ETCD_MODULE} ` +
        `requirement; this version cannot be built this way. Use another version or set ` +
        `KUBEBUILDER_ASSETS to a folder with kube-apiserver and etcd.`,
    );
  }
  const stagingTag = stagingVersion(version);
  await go(["mod", "edit", ...staging.map((m) => `-replace=${m}=${m}@${stagingTag}`)]);

  say(`downloading modules (${staging.length} staging modules at ${stagingTag}, etcd ${etcdVersion})`);
  await go([
    "get",
    `k8s.io/kubernetes/cmd/kube-apiserver@v${version}`,
    `k8s.io/kubernetes/cmd/kube-controller-manager@v${version}`,
    `${ETCD_MODULE}@${etcdVersion}`,
  ]);
}

/** Compiles the three binaries into `partial`, named as the cache expects; throws if one lacks. */
async function compile(version: string, partial: string, go: Go, logPath: string): Promise<void> {
  say("compiling (this is the long part)");
  const [major, minor] = version.split(".");
  await go([
    "build",
    "-trimpath",
    "-o",
    `${partial}/`,
    "-ldflags",
    // Without these the binaries report v0.0.0-master and clients reading /version see nonsense.
    [
      "-s -w",
      `-X k8s.io/component-base/version.gitVersion=v${version}`,
      `-X k8s.io/component-base/version.gitMajor=${major}`,
      `-X k8s.io/component-base/version.gitMinor=${minor}`,
    ].join(" "),
    "k8s.io/kubernetes/cmd/kube-apiserver",
    "k8s.io/kubernetes/cmd/kube-controller-manager",
    ETCD_MODULE,
  ]);
  // The etcd module's root package is the server; go names the binary after the last path
  // element that is not a major-version suffix, i.e. `server` (older Go toolchains: `v3`).
  for (const name of ["server", "v3"]) {
    if (await isFile(join(partial, name))) await Deno.rename(join(partial, name), join(partial, "etcd"));
  }
  if (!await hasAllBinaries(partial)) {
    throw new Error(
      `go build finished but ${partial} lacks one of ${CACHED_BINARIES.join(", ")}; ` +
        `see ${logPath}.`,
    );
  }
}

/** Runs the Go tool, appends its output to the build log, returns its stdout, throws with its tail. */
async function runGo(args: string[], cwd: string, log: Deno.FsFile): Promise<string> {
  const encoder = new TextEncoder();
  await log.write(encoder.encode(`\n$ go ${args.join(" ")}\n`));
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("go", {
      args,
      cwd,
      // A go.work in a folder above the cache would otherwise take over the wrapper module.
      env: { GOWORK: "off", CGO_ENABLED: "0" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new Error(
        "LocalCluster needs kube-apiserver and etcd, and building them needs the Go toolchain, " +
          "but `go` is not on PATH. Install Go >= 1.26 (https://go.dev/dl/), or set " +
          "KUBEBUILDER_ASSETS to a folder with kube-apiserver and etcd binaries.",
        { cause: error },
      );
    }
    throw error;
  }
  await log.write(output.stdout);
  await log.write(output.stderr);
  const stdout = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    const text = new TextDecoder().decode(output.stderr) + stdout;
    throw new Error(
      `Building the local cluster's binaries failed: \`go ${args.join(" ")}\` exited with ` +
        `code ${output.code}. Last lines of its output (all of it is in the build log):\n` +
        lastLines(text, 40),
    );
  }
  return stdout;
}

function goModPath(downloadJson: string): string {
  const info: unknown = JSON.parse(downloadJson);
  if (typeof info === "object" && info !== null && "GoMod" in info && typeof info.GoMod === "string") {
    return info.GoMod;
  }
  throw new Error(`\`go mod download -json\` printed no GoMod path:\n${lastLines(downloadJson, 20)}`);
}

async function removeStalePartials(root: string): Promise<void> {
  for await (const entry of Deno.readDir(root)) {
    if (entry.name.startsWith(PARTIAL_PREFIX)) {
      await Deno.remove(join(root, entry.name), { recursive: true }).catch(ignoreNotFound);
    }
  }
}

function say(message: string): void {
  console.error(`[kopf LocalCluster] ${message}`);
}
