/**
 * bench/compare.ts's command line (what each option measures: that file's description): read, and its values checked
 * before anything starts.
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import type { ContestantName } from "./compare_contestants.ts";
import type { Layout } from "./compare_results.ts";

/** What bench/compare.ts was asked to run: the table's layout, and what makes it. */
export interface CompareOptions extends Layout {
  /** The numbers of pre-created objects, for throughput and for memory, each once and in order. */
  readonly preCreated: number[];
  /** How many POSTs create objects at a time. */
  readonly posts: number;
  /** The contestants asked for in `--only`. */
  readonly names: ContestantName[];
  /** The Python Kopf release that the `kopf` contestant runs. */
  readonly kopfVersion: string;
  /** The folder of the processes' logs, if given. */
  readonly logs: string | undefined;
  /** The checkout whose CLI runs as `before`, if any. */
  readonly before: string | undefined;
  /** Whether each Deno contestant runs from a copy of the `deno` binary of its own. */
  readonly privateBinary: boolean;
}

const USAGE = "Usage: deno run -A bench/compare.ts [--rounds 3] [--objects 500,5000] [--memory 1000,10000] " +
  "[--burst 500] [--bursts 1] [--posts 32] [--lifecycle 100] [--idle 30] [--restart-at 1000] " +
  "[--only ours,lean,kopf,raw,raw2,cr] [--kopf-version 1.45.2] [--logs DIR] [--before DIR] [--private-binary]\n" +
  "(what each measures: the description at the top of bench/compare.ts)";

const OPTIONS = {
  rounds: { type: "string", default: "3" },
  objects: { type: "string", default: "500,5000" },
  memory: { type: "string", default: "1000,10000" },
  burst: { type: "string", default: "500" },
  bursts: { type: "string", default: "1" },
  posts: { type: "string", default: "32" },
  lifecycle: { type: "string", default: "100" },
  idle: { type: "string", default: "30" },
  "restart-at": { type: "string", default: "1000" },
  only: { type: "string", default: "ours,lean,kopf,raw,raw2,cr" },
  "kopf-version": { type: "string", default: "1.45.2" },
  logs: { type: "string" },
  before: { type: "string" },
  "private-binary": { type: "boolean", default: false },
} as const;

const KNOWN: readonly ContestantName[] = [
  "ours",
  "lean",
  "bundle",
  "kopf",
  "raw",
  "raw2",
  "floor",
  "cr",
  "rs",
  "before",
];

/** Reads the command line; exits with a usage error for a value it cannot take. */
export function readOptions(): CompareOptions {
  const { values } = commandLine({ options: OPTIONS }, USAGE);
  const numbers = (text: string) => text.split(",").filter(Boolean).map(Number);
  const throughputSizes = numbers(values.objects);
  const memorySizes = numbers(values.memory);
  const bursts = Number(values.bursts);
  if (!(Number.isInteger(bursts) && bursts >= 1)) {
    usageError(`--bursts takes a count, 1 or more; got ${values.bursts}.`);
  }
  const lifecycle = Number(values.lifecycle);
  const names = values.only.split(",") as ContestantName[];
  checkContestants(names, lifecycle, values.before);
  return {
    rounds: Number(values.rounds),
    throughputSizes,
    memorySizes,
    preCreated: [...new Set([...throughputSizes, ...memorySizes])].sort((a, b) => a - b),
    burst: Number(values.burst),
    bursts,
    posts: Number(values.posts),
    lifecycle,
    idleSeconds: Number(values.idle),
    restartAt: Number(values["restart-at"]),
    names,
    kopfVersion: values["kopf-version"],
    logs: values.logs,
    before: values.before,
    privateBinary: values["private-binary"],
  };
}

/** Ends the bench with a usage error for contestants it does not know, or without what they need. */
function checkContestants(names: readonly ContestantName[], lifecycle: number, before: string | undefined): void {
  const unknown = names.filter((name) => !KNOWN.includes(name));
  if (unknown.length) {
    usageError(`Unknown contestants in --only: ${unknown.join(", ")}; known: ${KNOWN.join(", ")}.`);
  }
  if (names.includes("floor") && lifecycle > 0) {
    usageError("The floor contestant handles creations only: give --lifecycle 0 with it.");
  }
  if (names.includes("before") !== (before !== undefined)) {
    usageError("The `before` contestant and --before go together: --before DIR --only before,ours,… .");
  }
}
