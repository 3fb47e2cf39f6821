/**
 * The CPU of the cycles of one created object, without the network: the cycle of its ADDED event
 * (one create handler returning a result, as bench/fixtures/compare_create.ts), then the cycles of
 * the MODIFIED events that its own writes bring back, as the watch would deliver them. The API
 * client is replaced by one that merges each patch into the object in memory (and keeps Kubernetes'
 * `managedFields` growing as the API server does), so what is measured is our code per object:
 * the essence, the diff-base, the handler's run and its records, the patch, the log lines.
 *
 * Prints the CPU per object (µs; the process's user and system time) for the default storages and
 * the lean preset, medians of the rounds, and the time of each phase apart (wall clock, µs per
 * cycle): the ADDED cycle, and each cycle of an echo of the operator's own write. Log lines go to a
 * sink that drops them after formatting; `--level warning` drops the INFO lines before that.
 *
 * With `--cold MIB`, the objects' cycles start cold, as in an operator whose objects come apart: between two objects
 * the bench walks a buffer of that many MiB (larger than the CPU's caches, e.g. 32), reading and writing a byte in
 * every cache line, so that the next object's cycles find none of their code and data cached; the walks' time is
 * left out of the CPU per object. What a cold cycle costs above a warm one grows with how much code and data it
 * touches, not with the work it does.
 *
 * Usage: `deno run -A bench/cycle_cost.ts [--objects 5000] [--rounds 5] [--only default|lean] [--level info]
 * [--cold MIB]`; with `--cpu-prof`, a profile of the cycles alone.
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import type { ApiClient, RequestOptions } from "../src/api/client.ts";
import { configureLogging } from "../src/logging/configure.ts";
import type { JsonValue, KubernetesObject } from "../src/model/body.ts";
import type { Resource } from "../src/model/resource.ts";
import { Registry } from "../src/handling/registry.ts";
import type { ChangeHandler } from "../src/handling/handlers.ts";
import * as on from "../on.ts";
import { Settings } from "../src/settings/settings.ts";
import { sensitiveFieldsOf } from "../src/state/sensitive.ts";
import { type CycleDeps, newMemory, processObject } from "../src/reactor/processing.ts";
import { allAtOnce } from "../src/handling/lifecycles.ts";
import { mergePatch } from "../tests/support/fake_api.ts";
import { cpuSeconds, median } from "./process_stats.ts";

const { values } = commandLine({
  options: {
    objects: { type: "string", default: "5000" },
    rounds: { type: "string", default: "5" },
    only: { type: "string" },
    level: { type: "string", default: "info" },
    cold: { type: "string", default: "0" },
  },
});
const objects = Number(values.objects);
const rounds = Number(values.rounds);
const coldMiB = Number(values.cold);
if (!(coldMiB >= 0)) {
  usageError(`--cold takes the MiB of the buffer walked between two objects, 0 or more; got ${values.cold}.`);
}
const evicting = new Uint8Array(coldMiB * 1024 * 1024);

const RESOURCE: Resource = {
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  singular: "kopfexample",
  kind: "KopfExample",
  namespaced: true,
  shortcuts: [],
  categories: [],
  subresources: ["status"],
  verbs: ["get", "list", "watch", "patch"],
  preferred: true,
} as unknown as Resource;

if (values.level !== "info" && values.level !== "warning") {
  usageError(`--level: "${values.level}" is not info or warning.`);
}
await configureLogging({ level: values.level, write: (line) => void line.length });

const registry = new Registry();
on.create("kopfexamples", { registry, id: "done" }, () => ({ ok: true }));
const changeHandlers = registry.handlers.filter((handler): handler is ChangeHandler => handler.kind === "change");

function created(index: number): KubernetesObject {
  return {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: {
      name: `kex-${index}`,
      namespace: "compare",
      uid: crypto.randomUUID(),
      resourceVersion: String(index * 10),
      generation: 1,
      creationTimestamp: "2026-11-26T13:39:22Z",
      managedFields: [{
        apiVersion: "kopf.dev/v1",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:spec": {} },
        manager: "deno",
        operation: "Update",
        time: "2026-11-26T13:39:22Z",
      }],
    },
    spec: {},
  };
}

/** One object's cycles: ADDED, then a MODIFIED for each write's result. */
const SETTINGS = { default: new Settings(), lean: new Settings() };
SETTINGS.lean.persistence.useLeanStorage();

/** Milliseconds spent in each phase and the cycles of each, per storage, summed over the rounds. */
const phases = {
  default: { added: 0, addedCycles: 0, echoes: 0, echoCycles: 0 },
  lean: { added: 0, addedCycles: 0, echoes: 0, echoCycles: 0 },
};

async function handleOne(index: number, lean: boolean): Promise<void> {
  const phase = phases[lean ? "lean" : "default"];
  const settings = lean ? SETTINGS.lean : SETTINGS.default;
  let current = created(index);
  const written: KubernetesObject[] = [];
  const client = {
    request<T>(options: RequestOptions): Promise<T> {
      const next = JSON.parse(JSON.stringify(mergePatch(current, options.body))) as KubernetesObject;
      next.metadata.resourceVersion = String(Number(current.metadata.resourceVersion) + 1);
      next.metadata.managedFields = [...(current.metadata.managedFields as JsonValue[] ?? []), {
        apiVersion: "kopf.dev/v1",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:metadata": { "f:annotations": {} } },
        manager: "kopf",
        operation: "Update",
        ...(options.path.endsWith("/status") ? { subresource: "status" } : {}),
        time: "2026-11-26T13:39:23Z",
      }];
      current = next;
      written.push(next);
      return Promise.resolve(JSON.parse(JSON.stringify(next)) as T);
    },
  } as unknown as ApiClient;
  const deps: CycleDeps = {
    client,
    resource: RESOURCE,
    settings,
    lifecycle: allAtOnce,
    eventHandlers: [],
    changeHandlers,
    backgroundHandlers: [],
    indices: {},
    sensitive: sensitiveFieldsOf(RESOURCE),
    signal: new AbortController().signal,
  };
  const memory = newMemory({}, false);
  let started = performance.now();
  await processObject({ kind: "event", type: "ADDED", object: created(index) }, memory, deps);
  phase.added += performance.now() - started;
  phase.addedCycles++;
  started = performance.now();
  for (let i = 0; i < written.length; i++) {
    // As the watch delivers it: a fresh parse of the object.
    const object = JSON.parse(JSON.stringify(written[i])) as KubernetesObject;
    await processObject({ kind: "event", type: "MODIFIED", object }, memory, deps);
    phase.echoCycles++;
  }
  phase.echoes += performance.now() - started;
}

const results: Record<string, number[]> = { default: [], lean: [] };
for (let round = 0; round < rounds; round++) {
  for (const name of ["default", "lean"] as const) {
    if (values.only !== undefined && values.only !== name) continue;
    const before = await cpuSeconds(Deno.pid);
    let walking = 0;
    for (let index = 0; index < objects; index++) {
      await handleOne(index, name === "lean");
      if (coldMiB > 0) walking += evictCaches();
    }
    results[name].push((await cpuSeconds(Deno.pid) - before - walking / 1000) * 1e6 / objects);
  }
}
console.log(
  `${objects} objects, medians of ${rounds} rounds: CPU per object (µs)${
    coldMiB > 0 ? `, each object's cycles cold (${coldMiB} MiB walked between two)` : ""
  }`,
);
for (const [name, cpu] of Object.entries(results)) {
  if (cpu.length) console.log(`${name.padEnd(8)} ${median(cpu).toFixed(0)}`);
}
console.log("Each phase, all rounds (wall clock, µs per cycle): ADDED, echoes (echoes per object)");
for (const [name, phase] of Object.entries(phases)) {
  if (!phase.addedCycles) continue;
  const added = (phase.added * 1000 / phase.addedCycles).toFixed(0);
  const echo = (phase.echoes * 1000 / Math.max(1, phase.echoCycles)).toFixed(0);
  console.log(`${name.padEnd(8)} ${added}, ${echo} (${(phase.echoCycles / phase.addedCycles).toFixed(1)})`);
}

/**
 * Walks the buffer of `--cold`, a byte in every 64 (a cache line), reading and writing; returns the milliseconds it
 * took (main thread only, no waits: its CPU time).
 */
function evictCaches(): number {
  const started = performance.now();
  for (let index = 0; index < evicting.length; index += 64) evicting[index]++;
  return performance.now() - started;
}
