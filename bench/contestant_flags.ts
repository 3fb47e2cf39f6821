/**
 * What the environment asks of the Deno contestants of bench/compare_contestants.ts, besides how production starts
 * them: profilers (V8's CPU profile and coverage, callgrind, the allocation probe), V8 flags added to production's or
 * instead of them, `before`'s own environment and flags, and how the bundle is built and started. The variables are
 * read once, when the contestants are made.
 *
 * @module
 */

import { join } from "node:path";
import { IMAGE_DENO_FLAGS, OPERATOR_V8_FLAGS } from "../cli/build.ts";

/** What the Deno contestants are started with, as the environment asks. */
export interface ContestantFlags {
  /** The command that runs Deno with `args` as the contestant `name`: Deno itself, or Valgrind running it. */
  readonly command: (name: string, args: string[]) => [string, string[]];
  /** The flags of `deno run` that profile the contestant `name` (none unless asked for). */
  readonly profilers: (name: string) => string[];
  /** The environment of the contestant `name`'s allocation probe (none unless asked for). */
  readonly probeEnvironment: (name: string) => Record<string, string>;
  /** The `--v8-flags` argument of ours, lean and the bundle. */
  readonly v8Flags: string;
  /** The `--v8-flags` argument of `before`. */
  readonly beforeV8Flags: string;
  /** The flags added to every Deno contestant's alone, as the raw clients' `--v8-flags` argument (none if none). */
  readonly addedV8Flags: readonly string[];
  /** More environment for `before`. */
  readonly beforeEnvironment: Readonly<Record<string, string>>;
  /** How the bundle is built and started. */
  readonly bundle: BundleFlags;
}

/**
 * The bundle starts as a new container of the image does: with an empty DENO_DIR and the image's environment.
 * `KOPF_BENCH_BUNDLE_DENO_DIR` names the DENO_DIR instead: the machine's cache (`~/.cache/deno`, as later starts
 * on one host) or a path that cannot be written (`/dev/null/none`); `KOPF_BENCH_BUNDLE_MALLOC=jemalloc` preloads
 * jemalloc (what the image did while it ran the bundle as a module).
 */
export interface BundleFlags {
  /** The DENO_DIR of every start, if not a new empty one each. */
  readonly denoDir?: string;
  /** Whether jemalloc is preloaded, instead of the image's environment. */
  readonly jemalloc: boolean;
  /** Deno's flags besides the image's permissions. */
  readonly denoFlags: readonly string[];
  /** The fixture's storage preset (its `KOPF_BENCH_STORAGE`). */
  readonly storage: string;
  /** The flags of `kopf build` besides the fixture and the output. */
  readonly buildFlags: readonly string[];
}

/** Reads the environment: what the Deno contestants (`deno` the binary, `root` the repository's root) start with. */
export function contestantFlags(root: string, deno: string): ContestantFlags {
  const added = addedV8Flags();
  // `KOPF_BENCH_V8_FLAGS` replaces production's V8 flags, e.g. to see what the small young generation costs.
  const v8Flags =
    (Deno.env.has("KOPF_BENCH_V8_FLAGS") ? `--v8-flags=${Deno.env.get("KOPF_BENCH_V8_FLAGS")}` : OPERATOR_V8_FLAGS) +
    added;
  // `KOPF_BENCH_BEFORE_V8_FLAGS` gives `before` flags of its own (with `--before .`, one checkout against itself with
  // other flags): `DENO_V8_FLAGS` in its environment would not do, the `--v8-flags` argument wins over it.
  const beforeV8Flags = Deno.env.has("KOPF_BENCH_BEFORE_V8_FLAGS")
    ? `--v8-flags=${Deno.env.get("KOPF_BENCH_BEFORE_V8_FLAGS")}${added}`
    : v8Flags;
  // With `KOPF_BENCH_HEAP_PROF=DIR`, allocation profiles into DIR/<name> (bench/fixtures/allocation_probe.ts).
  const allocations = Deno.env.get("KOPF_BENCH_HEAP_PROF");
  return {
    command: callgrindCommand(deno),
    profilers: profilers(root, allocations),
    probeEnvironment: (name): Record<string, string> =>
      allocations ? { KOPF_BENCH_HEAP_PROF: join(allocations, name) } : {},
    v8Flags,
    beforeV8Flags,
    addedV8Flags: added ? [`--v8-flags=${added.slice(1)}`] : [],
    // With `KOPF_BENCH_BEFORE_ENV` (a JSON object), more environment for `before`: with `--before .`, one
    // checkout against itself with another setting (e.g. `{"KOPF_BENCH_CONCURRENT_REQUESTS":"none"}`).
    beforeEnvironment: environmentOf("KOPF_BENCH_BEFORE_ENV"),
    bundle: bundleFlags(),
  };
}

/**
 * With `KOPF_BENCH_CPU_PROF=DIR`, every Deno contestant writes a V8 CPU profile into DIR/<name> when it stops
 * (bench/cpu_profile.ts sums them by function); `KOPF_BENCH_CPU_PROF_INTERVAL` sets its sampling interval in
 * microseconds (V8's default, 1,000, gives a sample per object or so at 1 ms per object). With
 * `KOPF_BENCH_COVERAGE=DIR`, V8's precise coverage into DIR/<name> (bench/path_census.ts counts the path). With
 * `allocations`, the probe that writes allocation profiles.
 */
function profilers(root: string, allocations: string | undefined): ContestantFlags["profilers"] {
  const profiles = Deno.env.get("KOPF_BENCH_CPU_PROF");
  const profileInterval = Deno.env.get("KOPF_BENCH_CPU_PROF_INTERVAL");
  const coverage = Deno.env.get("KOPF_BENCH_COVERAGE");
  const probe = allocations ? [`--preload=${join(root, "bench/fixtures/allocation_probe.ts")}`] : [];
  return (name) => [
    ...(profiles ? ["--cpu-prof", `--cpu-prof-dir=${join(profiles, name)}`] : []),
    ...(profiles && profileInterval ? [`--cpu-prof-interval=${profileInterval}`] : []),
    ...(coverage ? [`--coverage=${join(coverage, name)}`] : []),
    ...probe,
  ];
}

/**
 * With `KOPF_BENCH_CALLGRIND=DIR`, every Deno contestant runs under Valgrind's callgrind into DIR/<name>.<pid>,
 * counting nothing until told (`callgrind_control -i on`), with its model of the caches and the branch predictor:
 * bench/operator_path.ts's `--instructions`.
 */
function callgrindCommand(deno: string): ContestantFlags["command"] {
  const callgrind = Deno.env.get("KOPF_BENCH_CALLGRIND");
  return (name, args) =>
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
}

/**
 * V8 flags that every Deno contestant gets besides its own, each after a comma (to end a `--v8-flags` argument). With
 * `KOPF_BENCH_PERF_MAP` set, it names its JavaScript frames for `perf` (V8's map in /tmp/perf-PID.map, interpreted
 * frames on the native stack): bench/operator_path.ts's `--perf` sets it. With `KOPF_BENCH_TRACE_OPT` set, V8 reports
 * each optimising compilation on stdout, into the contestant's log: bench/operator_path.ts's `--compilations` counts
 * them.
 */
function addedV8Flags(): string {
  return [
    ...(Deno.env.has("KOPF_BENCH_PERF_MAP") ? ["--perf-basic-prof", "--interpreted-frames-native-stack"] : []),
    // Under callgrind, the map alone (the interpreter's frames stay as they are): bench/callgrind_origins.ts.
    ...(Deno.env.has("KOPF_BENCH_CALLGRIND") && !Deno.env.has("KOPF_BENCH_PERF_MAP") ? ["--perf-basic-prof"] : []),
    ...(Deno.env.has("KOPF_BENCH_TRACE_OPT") ? ["--trace-opt"] : []),
  ].map((flag) => `,${flag}`).join("");
}

/** How the bundle is built and started: see {@linkcode BundleFlags}. */
function bundleFlags(): BundleFlags {
  return {
    denoDir: Deno.env.get("KOPF_BENCH_BUNDLE_DENO_DIR"),
    jemalloc: Deno.env.get("KOPF_BENCH_BUNDLE_MALLOC") === "jemalloc",
    // The image's flags (no code cache); `KOPF_BENCH_BUNDLE_CODE_CACHE=true` leaves them out, to see what they save.
    denoFlags: Deno.env.get("KOPF_BENCH_BUNDLE_CODE_CACHE") === "true" ? [] : IMAGE_DENO_FLAGS,
    // `KOPF_BENCH_BUNDLE_STORAGE=lean`: the bundle with the lean storage preset, to see lean as its image runs it.
    storage: Deno.env.get("KOPF_BENCH_BUNDLE_STORAGE") ?? "default",
    // `KOPF_BENCH_BUNDLE_MINIFY=false`: the bundle as `kopf build` makes it without `--minify`, to see what that costs.
    buildFlags: Deno.env.get("KOPF_BENCH_BUNDLE_MINIFY") === "false" ? [] : ["--minify"],
  };
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
