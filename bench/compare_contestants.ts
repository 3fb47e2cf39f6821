/**
 * The processes bench/compare.ts compares, started the same way: our CLI (with the default
 * storages, and as `lean` with `settings.persistence.useLeanStorage()`; as `bundle`, the
 * `kopf build --minify` bundle of the fixture, as the image of `kopf init` runs it), Python Kopf, the raw
 * client with one write per object (`raw`) and with Kopf's two (`raw2`), the least a framework can do
 * for the lean preset's work on creations (`floor`, bench/fixtures/lean_floor.ts), a controller-runtime
 * reconciler (`cr`) and a kube-rs controller (`rs`), each serving one namespace (or, but for the raw
 * clients, several or all of them; kube-rs one or all) with the fixture of a mode, output to a log file.
 * What the environment changes in the Deno contestants' starts (profilers, V8 flags, the bundle's settings) is read by
 * bench/contestant_flags.ts.
 *
 * @module
 */

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { IMAGE_ENVIRONMENT, OPERATOR_PERMISSIONS } from "../cli/build.ts";
import { type ContestantFlags, contestantFlags } from "./contestant_flags.ts";
import { bundleOf, emptyFolder } from "./fixture_bundle.ts";
import type { LocalCluster } from "../testing.ts";

/** Who is compared. */
export type ContestantName = "ours" | "lean" | "bundle" | "kopf" | "raw" | "raw2" | "floor" | "cr" | "rs" | "before";

/** What the process handles: one create handler, or create, update and delete handlers. */
export type Mode = "create" | "lifecycle";

/** A started process. */
export interface Started {
  /** Its process id, for /proc. */
  readonly pid: number;
  /** When it was spawned (`performance.now()`). */
  readonly started: number;
  /** The file with its output. */
  readonly log: string;
  /** Whether it has exited. */
  readonly exited: boolean;
  /**
   * Waits for `wait`, but fails at once when the process exits before it settles (unless stopped
   * by the bench), naming its exit code and log: a dead contestant would otherwise keep the bench
   * waiting for objects it will never handle.
   */
  guard<T>(wait: Promise<T>, what: string): Promise<T>;
  /** SIGTERM, then SIGKILL after 30 s; waits for the exit and the output. */
  stop(): Promise<void>;
}

/**
 * Several namespaces, as a user of each contestant names them: a glob for ours and Kopf (`-n 'team-*'`: a watch
 * per matching namespace, found by a watch of namespaces), the list for controller-runtime (its cache's
 * `DefaultNamespaces`: an informer per namespace).
 */
export interface Namespaces {
  readonly pattern: string;
  readonly names: readonly string[];
}

/** What a contestant serves: one namespace, several, or all of them (`null`: one cluster-wide watch). */
export type Served = string | Namespaces | null;

/** One of the compared processes. */
export interface Contestant {
  readonly name: ContestantName;
  /** Starts it serving `served`. */
  start(mode: Mode, served: Served, log: string): Started;
}

/** What the contestants need to know. */
export interface Setup {
  /** The API server (a LocalCluster, or bench/scripted_api.ts with a kubeconfig file of its own). */
  readonly cluster: Pick<LocalCluster, "kubeconfig" | "server" | "token">;
  /** The cluster's CA certificate as a PEM file (for the raw client). */
  readonly caFile: string;
  /** Python Kopf's interpreter, if it is compared. */
  readonly python?: string;
  /** The repository's root. */
  readonly root: URL;
  /** A checkout of an earlier commit, whose CLI runs as `before` (default storages). */
  readonly before?: string;
  /** The controller-runtime contestant's binary, if it is compared (bench/built_peers.ts). */
  readonly controllerRuntime?: string;
  /** The kube-rs contestant's binary, if it is compared (bench/built_peers.ts). */
  readonly kubeRs?: string;
  /** More flags for `deno run` of the Deno contestants (such as bench/idle_memory.ts's `--preload` of its probe). */
  readonly denoFlags?: readonly string[];
}

/** The contestants by name. */
export function contestants(setup: Setup): Record<ContestantName, Contestant> {
  const root = fileURLToPath(setup.root);
  const deno = contestantDeno();
  const context: Context = { setup, root, deno, flags: contestantFlags(root, deno) };
  const contestant = (name: ContestantName, start: StartOf): Contestant => ({
    name,
    start: (mode, served, log) => start(context, mode, served, log),
  });
  return {
    ours: contestant("ours", cli("ours", root)),
    lean: contestant("lean", cli("lean", root)),
    bundle: contestant("bundle", startBundle),
    before: contestant("before", cli("before", setup.before ?? root)),
    kopf: contestant("kopf", startKopf),
    raw: contestant("raw", plain("raw")),
    raw2: contestant("raw2", plain("raw2", "--diffbase")),
    floor: contestant("floor", plain("floor")),
    cr: contestant("cr", startControllerRuntime),
    rs: contestant("rs", startKubeRs),
  };
}

/** What every contestant's start draws on. */
interface Context {
  readonly setup: Setup;
  /** The repository's root, as a path. */
  readonly root: string;
  /** The Deno binary of the Deno contestants ({@linkcode contestantDeno}). */
  readonly deno: string;
  readonly flags: ContestantFlags;
}

/** How a contestant starts, given what they all draw on. */
type StartOf = (context: Context, mode: Mode, served: Served, log: string) => Started;

/** The fixture of a mode, in Python or TypeScript, from the repository's root. */
function fixture(mode: Mode, extension: string): string {
  return `bench/fixtures/compare_${mode}.${extension}`;
}

/** As the image of `kopf init` runs Deno: without its look-up of a newer release at the start. */
const QUIET_DENO = { DENO_NO_UPDATE_CHECK: "1" };

/** What our CLI and Kopf are told to serve. */
function servedArguments(served: Served): string[] {
  return served === null ? ["--all-namespaces"] : ["-n", typeof served === "string" ? served : served.pattern];
}

/**
 * Our CLI, from this checkout or, as `before`, from another. An earlier checkout runs this checkout's fixture with its
 * own import map: `@kopf/kopf` is its own.
 */
function cli(name: "ours" | "lean" | "before", checkout: string): StartOf {
  return ({ setup, root, flags }, mode, served, log) =>
    spawn(
      log,
      checkout,
      ...flags.command(name, [
        "run",
        "-A",
        ...setup.denoFlags ?? [],
        name === "before" ? flags.beforeV8Flags : flags.v8Flags,
        ...flags.profilers(name),
        `--config=${join(checkout, "deno.json")}`,
        "cli/main.ts",
        "run",
        "--standalone",
        ...servedArguments(served),
        join(root, fixture(mode, "ts")),
      ]),
      {
        KUBECONFIG: setup.cluster.kubeconfig,
        ...QUIET_DENO,
        ...flags.probeEnvironment(name),
        KOPF_BENCH_STORAGE: name === "lean" ? "lean" : "default",
        ...(name === "before" ? flags.beforeEnvironment : {}),
      },
    );
}

/** The image of `kopf init`: the bundle alone, no configuration file, no node_modules beside it. */
function startBundle({ setup, root, deno, flags }: Context, mode: Mode, served: Served, log: string): Started {
  const bundle = bundleOf(root, fixture(mode, "ts"), flags.bundle.buildFlags);
  return spawn(log, dirname(bundle), deno, [
    "run",
    // The image's permissions (without FFI, so no trim of the C heap), and writing for the bench's probes.
    ...OPERATOR_PERMISSIONS,
    "--allow-write",
    "--no-config",
    ...flags.bundle.denoFlags,
    ...setup.denoFlags ?? [],
    flags.v8Flags,
    ...flags.profilers("bundle"),
    bundle,
    "run",
    "--standalone",
    ...servedArguments(served),
  ], {
    KUBECONFIG: setup.cluster.kubeconfig,
    ...QUIET_DENO,
    ...flags.probeEnvironment("bundle"),
    KOPF_BENCH_STORAGE: flags.bundle.storage,
    DENO_DIR: flags.bundle.denoDir ?? emptyFolder("kopf-bench-deno-dir-"),
    ...(flags.bundle.jemalloc ? { LD_PRELOAD: jemalloc() } : { ...IMAGE_ENVIRONMENT }),
  });
}

function startKopf({ setup, root }: Context, mode: Mode, served: Served, log: string): Started {
  if (!setup.python) throw new Error("Python Kopf is not installed.");
  return spawn(log, root, setup.python, [
    "-m",
    "kopf",
    "run",
    "--standalone",
    ...servedArguments(served),
    fixture(mode, "py"),
  ], { KUBECONFIG: setup.cluster.kubeconfig, PYTHONDONTWRITEBYTECODE: "1" });
}

/** The raw clients (`raw2` with `--diffbase`) and the floor: one namespace each, no framework. */
function plain(name: "raw" | "raw2" | "floor", ...more: string[]): StartOf {
  return ({ setup, root, flags }, mode, served, log) => {
    if (typeof served !== "string") throw new Error(`The ${name} contestant serves one namespace; give it one.`);
    return spawn(
      log,
      root,
      ...flags.command(name, [
        "run",
        "-A",
        ...setup.denoFlags ?? [],
        ...flags.addedV8Flags,
        ...flags.profilers(name),
        name === "floor" ? "bench/fixtures/lean_floor.ts" : "bench/fixtures/raw_operator.ts",
        mode,
        ...more,
      ]),
      {
        RAW_SERVER: setup.cluster.server,
        RAW_TOKEN: setup.cluster.token,
        RAW_CA_FILE: setup.caFile,
        RAW_NAMESPACE: served,
        ...QUIET_DENO,
        ...flags.probeEnvironment(name),
      },
    );
  };
}

function startControllerRuntime({ setup, root }: Context, mode: Mode, served: Served, log: string): Started {
  if (!setup.controllerRuntime) throw new Error("The controller-runtime contestant is not built.");
  const namespaces = served === null
    ? "--all-namespaces"
    : typeof served === "string"
    ? served
    : served.names.join(",");
  return spawn(log, root, setup.controllerRuntime, [mode, namespaces], { KUBECONFIG: setup.cluster.kubeconfig });
}

function startKubeRs({ setup, root }: Context, mode: Mode, served: Served, log: string): Started {
  if (!setup.kubeRs) throw new Error("The kube-rs contestant is not built.");
  if (served !== null && typeof served !== "string") {
    throw new Error("The rs contestant serves one namespace or all of them (one Api per controller).");
  }
  return spawn(log, root, setup.kubeRs, [mode, served ?? "--all-namespaces"], { KUBECONFIG: setup.cluster.kubeconfig });
}

/**
 * Ends the bench at once, with what to install, when a chosen contestant needs what the machine
 * lacks (jemalloc for the bundle, when asked for), rather than at its turn in the first round.
 */
export function checkPrerequisites(names: readonly string[]): void {
  if (!names.includes("bundle") || Deno.env.get("KOPF_BENCH_BUNDLE_MALLOC") !== "jemalloc") return;
  try {
    jemalloc();
  } catch (error) {
    console.error((error as Error).message);
    Deno.exit(1);
  }
}

/** jemalloc, to preload by its name (`LD_PRELOAD`), as the image did until 2026-12-04. */
export function jemalloc(): string {
  const name = "libjemalloc.so.2";
  const installed = [`/usr/lib/${Deno.build.arch}-linux-gnu/${name}`, `/usr/lib64/${name}`, `/usr/lib/${name}`];
  if (!installed.some((path) => existsSync(path))) {
    throw new Error(
      `jemalloc was asked for and ${name} is not installed: apt-get install libjemalloc2, or run without it.`,
    );
  }
  return name;
}

/**
 * Starts a process with its output appended to `log`, to stop and to wait for with a guard against
 * its early exit.
 */
export function spawn(log: string, cwd: string, command: string, args: string[], env: Record<string, string>): Started {
  const file = Deno.openSync(log, { create: true, append: true });
  file.writeSync(new TextEncoder().encode(`$ ${command} ${args.join(" ")}\n`));
  const child = new Deno.Command(command, { args, cwd, env, stdin: "null", stdout: "piped", stderr: "piped" })
    .spawn();
  const started = performance.now();
  const copy = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) await file.write(chunk);
  };
  const output = Promise.all([copy(child.stdout), copy(child.stderr)]);
  let exited = false;
  let stopping = false;
  // Ended by a signal, the bench takes its contestants along (exitOnSignals: unload runs).
  const killAtUnload = () => !exited && child.kill("SIGKILL");
  globalThis.addEventListener("unload", killAtUnload);
  const status = child.status.then(async (status) => {
    exited = true;
    globalThis.removeEventListener("unload", killAtUnload);
    await output;
    const signal = status.signal ? `, signal ${status.signal}` : "";
    await file.write(new TextEncoder().encode(`$ exited with code ${status.code}${signal}\n`));
    file.close();
    return status;
  });
  const died = status.then((status) => {
    if (stopping) return new Promise<never>(() => {});
    const signal = status.signal ? ` (signal ${status.signal})` : "";
    throw new Error(`${command} ${args.join(" ")} exited with code ${status.code}${signal}; see ${log}.`);
  });
  died.catch(() => {}); // reported by the waits it interrupts
  return {
    pid: child.pid,
    started,
    log,
    get exited() {
      return exited;
    },
    guard(wait, what) {
      return Promise.race([
        wait,
        died.catch((error: Error) => {
          throw new Error(`While waiting for ${what}: ${error.message}`);
        }),
      ]);
    },
    async stop() {
      stopping = true;
      if (!exited) child.kill("SIGTERM");
      const timer = setTimeout(() => !exited && child.kill("SIGKILL"), 30_000);
      await status;
      clearTimeout(timer);
    },
  };
}

/**
 * The Deno binary the contestants run: this one's, or with `KOPF_BENCH_DENO` another (such as a copy of its own,
 * bench/idle_memory.ts's `--private-binary`: pages of the binary that the bench's own process maps too are shared,
 * and the kernel never gives back a shared page, where an operator in its container has the binary to itself).
 */
export function contestantDeno(): string {
  return Deno.env.get("KOPF_BENCH_DENO") ?? Deno.execPath();
}

/** Makes the contestants run a copy of this Deno binary, in `folder` (`--private-binary`; see {@linkcode contestantDeno}). */
export async function usePrivateBinary(folder: string): Promise<void> {
  const copy = join(folder, "deno");
  await Deno.copyFile(Deno.execPath(), copy);
  Deno.env.set("KOPF_BENCH_DENO", copy);
}
