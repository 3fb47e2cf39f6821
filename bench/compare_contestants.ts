/**
 * The processes bench/compare.ts compares, started the same way: our CLI (with the default
 * storages, and as `lean` with `settings.persistence.useLeanStorage()`; as `bundle`, the
 * `kopf build --minify` bundle of the fixture, as the image of `kopf init` runs it), Python Kopf, the raw
 * client with one write per object (`raw`) and with Kopf's two (`raw2`), the least a framework can do
 * for the lean preset's work on creations (`floor`, bench/fixtures/lean_floor.ts), a controller-runtime
 * reconciler (`cr`) and a kube-rs controller (`rs`), each serving one namespace (or, but for the raw
 * clients, several or all of them; kube-rs one or all) with the fixture of a mode, output to a log file.
 *
 * @module
 */

import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { IMAGE_DENO_FLAGS, IMAGE_ENVIRONMENT, OPERATOR_PERMISSIONS, OPERATOR_V8_FLAGS } from "../cli/build.ts";
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
  const fixture = (mode: Mode, extension: string) => `bench/fixtures/compare_${mode}.${extension}`;
  const kubeconfig = { KUBECONFIG: setup.cluster.kubeconfig };
  // As the image of `kopf init` runs Deno: without its look-up of a newer release at the start.
  const quietDeno = { DENO_NO_UPDATE_CHECK: "1" };
  const denoFlags = setup.denoFlags ?? [];
  // With `KOPF_BENCH_CPU_PROF=DIR`, every Deno contestant writes a V8 CPU profile into DIR/<name>
  // when it stops (bench/cpu_profile.ts sums them by function); `KOPF_BENCH_CPU_PROF_INTERVAL` sets its
  // sampling interval in microseconds (V8's default, 1,000, gives a sample per object or so at 1 ms per object).
  const profiles = Deno.env.get("KOPF_BENCH_CPU_PROF");
  const profileInterval = Deno.env.get("KOPF_BENCH_CPU_PROF_INTERVAL");
  // With `KOPF_BENCH_COVERAGE=DIR`, V8's precise coverage into DIR/<name> (bench/path_census.ts counts the path).
  const coverage = Deno.env.get("KOPF_BENCH_COVERAGE");
  const profiling = (name: string) => [
    ...(profiles ? ["--cpu-prof", `--cpu-prof-dir=${join(profiles, name)}`] : []),
    ...(profiles && profileInterval ? [`--cpu-prof-interval=${profileInterval}`] : []),
    ...(coverage ? [`--coverage=${join(coverage, name)}`] : []),
  ];
  // With `KOPF_BENCH_CALLGRIND=DIR`, every Deno contestant runs under Valgrind's callgrind into DIR/<name>.<pid>,
  // counting nothing until told (`callgrind_control -i on`), with its model of the caches and the branch predictor:
  // bench/operator_path.ts's `--instructions`.
  const callgrind = Deno.env.get("KOPF_BENCH_CALLGRIND");
  const deno = contestantDeno();
  const denoCommand = (name: string, args: string[]): [string, string[]] =>
    callgrind
      ? ["valgrind", [
        "--tool=callgrind",
        "--instr-atstart=no",
        "--cache-sim=yes",
        "--branch-sim=yes",
        // A file per thread: the main thread's share apart from V8's compilers and collector.
        "--separate-threads=yes",
        `--callgrind-out-file=${join(callgrind, name)}.%p`,
        // V8 writes and rewrites its machine code in memory: Valgrind must notice it.
        "--smc-check=all-non-file",
        deno,
        ...args,
      ]]
      : [deno, args];
  // With `KOPF_BENCH_HEAP_PROF=DIR`, allocation profiles into DIR/<name> (bench/fixtures/allocation_probe.ts).
  const allocations = Deno.env.get("KOPF_BENCH_HEAP_PROF");
  const probe = allocations ? [`--preload=${join(root, "bench/fixtures/allocation_probe.ts")}`] : [];
  const probed = (name: string): Record<string, string> =>
    allocations ? { KOPF_BENCH_HEAP_PROF: join(allocations, name) } : {};
  // With `KOPF_BENCH_BEFORE_ENV` (a JSON object), more environment for `before`: with `--before .`, one
  // checkout against itself with another setting (e.g. `{"KOPF_BENCH_CONCURRENT_REQUESTS":"none"}`).
  const beforeEnv = environmentOf("KOPF_BENCH_BEFORE_ENV");
  // The bundle starts as a new container of the image does: with an empty DENO_DIR and the image's environment.
  // `KOPF_BENCH_BUNDLE_DENO_DIR` names the DENO_DIR instead: the machine's cache (`~/.cache/deno`, as later starts
  // on one host) or a path that cannot be written (`/dev/null/none`); `KOPF_BENCH_BUNDLE_MALLOC=jemalloc` preloads
  // jemalloc (what the image did while it ran the bundle as a module).
  const bundleDenoDir = (): Record<string, string> => ({
    DENO_DIR: Deno.env.get("KOPF_BENCH_BUNDLE_DENO_DIR") ?? emptyFolder("kopf-bench-deno-dir-"),
  });
  // The image's flags (no code cache); `KOPF_BENCH_BUNDLE_CODE_CACHE=true` leaves them out, to see what they save.
  const bundleDenoFlags = (): readonly string[] =>
    Deno.env.get("KOPF_BENCH_BUNDLE_CODE_CACHE") === "true" ? [] : IMAGE_DENO_FLAGS;
  // `KOPF_BENCH_BUNDLE_STORAGE=lean`: the bundle with the lean storage preset (the fixture's `KOPF_BENCH_STORAGE`), to
  // see lean as its image runs it.
  const bundleStorage = Deno.env.get("KOPF_BENCH_BUNDLE_STORAGE") ?? "default";
  const bundleMalloc = (): Record<string, string> =>
    Deno.env.get("KOPF_BENCH_BUNDLE_MALLOC") === "jemalloc" ? { LD_PRELOAD: jemalloc() } : { ...IMAGE_ENVIRONMENT };
  // V8 flags that every Deno contestant gets besides its own. With `KOPF_BENCH_PERF_MAP` set, it names its
  // JavaScript frames for `perf` (V8's map in /tmp/perf-PID.map, interpreted frames on the native stack):
  // bench/operator_path.ts's `--perf` sets it. With `KOPF_BENCH_TRACE_OPT` set, V8 reports each optimising
  // compilation on stdout, into the contestant's log: bench/operator_path.ts's `--compilations` counts them.
  const addedV8 = [
    ...(Deno.env.has("KOPF_BENCH_PERF_MAP") ? ["--perf-basic-prof", "--interpreted-frames-native-stack"] : []),
    // Under callgrind, the map alone (the interpreter's frames stay as they are): bench/callgrind_origins.ts.
    ...(Deno.env.has("KOPF_BENCH_CALLGRIND") && !Deno.env.has("KOPF_BENCH_PERF_MAP") ? ["--perf-basic-prof"] : []),
    ...(Deno.env.has("KOPF_BENCH_TRACE_OPT") ? ["--trace-opt"] : []),
  ].map((flag) => `,${flag}`).join("");
  // `KOPF_BENCH_V8_FLAGS` replaces production's V8 flags, e.g. to see what the small young generation costs.
  const v8Flags =
    (Deno.env.has("KOPF_BENCH_V8_FLAGS") ? `--v8-flags=${Deno.env.get("KOPF_BENCH_V8_FLAGS")}` : OPERATOR_V8_FLAGS) +
    addedV8;
  // `KOPF_BENCH_BEFORE_V8_FLAGS` gives `before` flags of its own (with `--before .`, one checkout against itself with
  // other flags): `DENO_V8_FLAGS` in its environment would not do, the `--v8-flags` argument wins over it.
  const beforeV8Flags = Deno.env.has("KOPF_BENCH_BEFORE_V8_FLAGS")
    ? `--v8-flags=${Deno.env.get("KOPF_BENCH_BEFORE_V8_FLAGS")}${addedV8}`
    : v8Flags;
  const served = (served: Served) =>
    served === null ? ["--all-namespaces"] : ["-n", typeof served === "string" ? served : served.pattern];
  // An earlier checkout runs this checkout's fixture with its own import map: `@kopf/kopf` is its own.
  const ours = (name: "ours" | "lean" | "before", checkout = root): Contestant => ({
    name,
    start: (mode, namespace, log) =>
      spawn(
        log,
        checkout,
        ...denoCommand(name, [
          "run",
          "-A",
          ...denoFlags,
          name === "before" ? beforeV8Flags : v8Flags,
          ...profiling(name),
          ...probe,
          `--config=${join(checkout, "deno.json")}`,
          "cli/main.ts",
          "run",
          "--standalone",
          ...served(namespace),
          join(root, fixture(mode, "ts")),
        ]),
        {
          ...kubeconfig,
          ...quietDeno,
          ...probed(name),
          KOPF_BENCH_STORAGE: name === "lean" ? "lean" : "default",
          ...(name === "before" ? beforeEnv : {}),
        },
      ),
  });
  return {
    ours: ours("ours"),
    lean: ours("lean"),
    bundle: {
      name: "bundle",
      // The image of `kopf init`: the bundle alone, no configuration file, no node_modules beside it.
      start: (mode, namespace, log) => {
        const bundle = bundleOf(root, fixture(mode, "ts"));
        return spawn(log, dirname(bundle), deno, [
          "run",
          // The image's permissions (without FFI, so no trim of the C heap), and writing for the bench's probes.
          ...OPERATOR_PERMISSIONS,
          "--allow-write",
          "--no-config",
          ...bundleDenoFlags(),
          ...denoFlags,
          v8Flags,
          ...profiling("bundle"),
          ...probe,
          bundle,
          "run",
          "--standalone",
          ...served(namespace),
        ], {
          ...kubeconfig,
          ...quietDeno,
          ...probed("bundle"),
          KOPF_BENCH_STORAGE: bundleStorage,
          ...bundleDenoDir(),
          ...bundleMalloc(),
        });
      },
    },
    before: ours("before", setup.before ?? root),
    kopf: {
      name: "kopf",
      start: (mode, namespace, log) => {
        if (!setup.python) throw new Error("Python Kopf is not installed.");
        return spawn(log, root, setup.python, [
          "-m",
          "kopf",
          "run",
          "--standalone",
          ...served(namespace),
          fixture(mode, "py"),
        ], { ...kubeconfig, PYTHONDONTWRITEBYTECODE: "1" });
      },
    },
    raw: raw("raw"),
    raw2: raw("raw2", "--diffbase"),
    floor: raw("floor"),
    cr: {
      name: "cr",
      start: (mode, namespace, log) => {
        if (!setup.controllerRuntime) throw new Error("The controller-runtime contestant is not built.");
        const namespaces = namespace === null
          ? "--all-namespaces"
          : typeof namespace === "string"
          ? namespace
          : namespace.names.join(",");
        return spawn(log, root, setup.controllerRuntime, [mode, namespaces], kubeconfig);
      },
    },
    rs: {
      name: "rs",
      start: (mode, namespace, log) => {
        if (!setup.kubeRs) throw new Error("The kube-rs contestant is not built.");
        if (namespace !== null && typeof namespace !== "string") {
          throw new Error("The rs contestant serves one namespace or all of them (one Api per controller).");
        }
        return spawn(log, root, setup.kubeRs, [mode, namespace ?? "--all-namespaces"], kubeconfig);
      },
    },
  };

  function raw(name: "raw" | "raw2" | "floor", ...flags: string[]): Contestant {
    return {
      name,
      start: (mode, namespace, log) => {
        if (typeof namespace !== "string") throw new Error(`The ${name} contestant serves one namespace; give it one.`);
        return spawn(
          log,
          root,
          ...denoCommand(name, [
            "run",
            "-A",
            ...denoFlags,
            ...(addedV8 ? [`--v8-flags=${addedV8.slice(1)}`] : []),
            ...profiling(name),
            ...probe,
            name === "floor" ? "bench/fixtures/lean_floor.ts" : "bench/fixtures/raw_operator.ts",
            mode,
            ...flags,
          ]),
          {
            RAW_SERVER: setup.cluster.server,
            RAW_TOKEN: setup.cluster.token,
            RAW_CA_FILE: setup.caFile,
            RAW_NAMESPACE: namespace,
            ...quietDeno,
            ...probed(name),
          },
        );
      },
    };
  }
}

/** A new empty folder, removed when the bench exits. */
function emptyFolder(prefix: string): string {
  const folder = Deno.makeTempDirSync({ prefix });
  globalThis.addEventListener("unload", () => Deno.removeSync(folder, { recursive: true }));
  return folder;
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

/** The `kopf build` bundles made so far, by fixture: one build per fixture and run of the bench. */
const bundles = new Map<string, string>();

/**
 * The `kopf build --minify` bundle of a fixture (as the project of `kopf init` builds its image;
 * with this checkout's CLI, into a temporary folder removed when the bench exits); synchronous,
 * since contestants start synchronously, and once.
 */
function bundleOf(root: string, fixture: string): string {
  const known = bundles.get(fixture);
  if (known) return known;
  const folder = emptyFolder("kopf-bench-bundle-");
  const bundle = join(folder, basename(fixture).replace(/\.ts$/, ".js"));
  // `KOPF_BENCH_BUNDLE_MINIFY=false`: the bundle as `kopf build` makes it without `--minify`, to see what that costs.
  const minify = Deno.env.get("KOPF_BENCH_BUNDLE_MINIFY") === "false" ? [] : ["--minify"];
  const { success, stderr } = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "build", fixture, ...minify, "-o", bundle],
    cwd: root,
    stdout: "null",
    stderr: "piped",
  }).outputSync();
  if (!success) throw new Error(`kopf build ${fixture} failed:\n${new TextDecoder().decode(stderr)}`);
  bundles.set(fixture, bundle);
  return bundle;
}

/** The environment variables given as a JSON object in the variable `name` (none if it is not set). */
function environmentOf(name: string): Record<string, string> {
  const text = Deno.env.get(name);
  if (text === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const valid = parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) &&
    Object.values(parsed).every((value) => typeof value === "string");
  if (!valid) {
    throw new Error(`${name} must be a JSON object of strings, e.g. '{"KOPF_RUN_QUIET":"true"}'; it is ${text}.`);
  }
  return parsed as Record<string, string>;
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
