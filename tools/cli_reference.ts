/**
 * Writes `docs/cli.md`, the reference of the `kopf` command, from the CLI's own help texts; run it
 * after changing a command: `deno run -A tools/cli_reference.ts`. `cli_reference_test.ts` fails
 * when the page is not what this script would write now, so the page cannot drift from the CLI.
 *
 * Before writing, it checks that each help text and the option table its parser uses agree (every
 * parsed option is described, every described option is parsed, with the same short letter): a
 * help that lies about the parser is refused here rather than published.
 *
 * @module
 */

import { BUILD_HELP } from "../cli/build.ts";
import { DEPLOYMENT_HELP } from "../cli/generate_deployment.ts";
import { RBAC_HELP } from "../cli/generate_rbac.ts";
import { GENERATE_CRD_HELP, GENERATE_CRD_OPTIONS } from "../cli/generate_crd.ts";
import { GENERATE_TYPES_HELP } from "../cli/generate_types.ts";
import { INIT_HELP } from "../cli/init.ts";
import { MANIFEST_OPTIONS } from "../cli/manifest_options.ts";
import type { OptionSpec } from "../cli/options.ts";
import { FREEZE_OPTIONS, RESUME_OPTIONS } from "../cli/peering_options.ts";
import { RUN_OPTIONS } from "../cli/run_options.ts";
import { FREEZE_HELP, MAIN_HELP, RESUME_HELP, RUN_HELP } from "../cli/usage.ts";

/** One command of the reference. */
export interface CommandReference {
  /** The command line that shows this help, e.g. `kopf run`. */
  command: string;
  /** What the command prints for `--help`. */
  help: string;
  /** The options its parser accepts (without `--help`), when the CLI exports them; checked against the help. */
  options?: readonly OptionSpec[];
  /**
   * `options` holds only part of what the parser accepts (the command adds options of its own that
   * the CLI does not export): then the help may describe more, but must describe all of these.
   */
  partial?: boolean;
}

/** Every command of the CLI, in the order of `kopf --help`. */
export const COMMANDS: readonly CommandReference[] = [
  { command: "kopf", help: MAIN_HELP },
  { command: "kopf run", help: RUN_HELP, options: RUN_OPTIONS },
  { command: "kopf freeze", help: FREEZE_HELP, options: FREEZE_OPTIONS },
  { command: "kopf resume", help: RESUME_HELP, options: RESUME_OPTIONS },
  { command: "kopf init", help: INIT_HELP },
  { command: "kopf build", help: BUILD_HELP },
  { command: "kopf generate rbac", help: RBAC_HELP, options: MANIFEST_OPTIONS, partial: true },
  { command: "kopf generate deployment", help: DEPLOYMENT_HELP },
  { command: "kopf generate types", help: GENERATE_TYPES_HELP },
  { command: "kopf generate crd", help: GENERATE_CRD_HELP, options: GENERATE_CRD_OPTIONS },
];

/** An option as a help text describes it: `-n, --namespace PATTERN` → `{ long: "namespace", short: "n" }`. */
export interface DescribedOption {
  /** The long name without dashes. */
  long: string;
  /** The one-letter short name, if the help gives one. */
  short?: string;
}

/**
 * The options a help text describes: the lines of its option lists that start with `-x, --long`
 * or `--long` (and `--a / --b` pairs such as `--log-prefix / --no-log-prefix`).
 */
export function describedOptions(help: string): DescribedOption[] {
  const found: DescribedOption[] = [];
  for (const line of help.split("\n")) {
    const match = line.match(/^ {2,8}(?:-([A-Za-z]), )?--([a-z][-a-z]*)(?: \/ --([a-z][-a-z]*))?/);
    if (!match) continue;
    const [, short, long, pair] = match;
    if (long === "help") continue;
    found.push(short ? { long, short } : { long });
    if (pair) found.push({ long: pair });
  }
  return found;
}

/**
 * Where a help text and its parser's option table disagree, one line per difference; empty when
 * they agree.
 */
export function helpMismatches(reference: CommandReference): string[] {
  if (!reference.options) return [];
  const described = new Map(describedOptions(reference.help).map((option) => [option.long, option]));
  const parsed = new Map(reference.options.map((option) => [option.long, option]));
  const problems: string[] = [];
  for (const [long, spec] of parsed) {
    const option = described.get(long);
    if (!option) problems.push(`${reference.command}: --${long} is parsed but its help does not describe it.`);
    else if (option.short !== spec.short) {
      problems.push(
        `${reference.command}: --${long} is -${spec.short ?? "(none)"} in the parser but ` +
          `-${option.short ?? "(none)"} in the help.`,
      );
    }
  }
  if (reference.partial) return problems;
  for (const long of described.keys()) {
    if (!parsed.has(long)) problems.push(`${reference.command}: its help describes --${long}, which is not parsed.`);
  }
  return problems;
}

/** A heading and the help as printed, for one command. */
function section({ command, help }: CommandReference): string {
  return `## \`${command}\`\n\n\`\`\`text\n${help.trimEnd()}\n\`\`\``;
}

/**
 * The text of `docs/cli.md`.
 *
 * @throws Error when a help text and its parser disagree (the page would lie).
 */
export function renderCliReference(commands: readonly CommandReference[] = COMMANDS): string {
  const problems = commands.flatMap(helpMismatches);
  if (problems.length) {
    throw new Error(`The CLI's help texts and parsers disagree; fix the help in cli/:\n${problems.join("\n")}`);
  }
  const contents = commands.map(({ command }) => `- [\`${command}\`](#${command.replaceAll(" ", "-")})`);
  return [
    "# The `kopf` command",
    "<!-- Generated by tools/cli_reference.ts from the help texts in cli/: do not edit; " +
    "run `deno run -A tools/cli_reference.ts` instead. -->",
    [
      "Each section is what `--help` prints for that command. Every option of `run`, `freeze` and `resume` also reads a default",
      "from its environment variable, listed at the end of each help; the command line wins. For how the commands fit together,",
      "see [Deployment](deployment.md) and [Installation](installation.md).",
    ].join("\n"),
    contents.join("\n"),
    ...commands.map(section),
  ].join("\n\n") + "\n";
}

/** Where the page lives. */
export const CLI_REFERENCE_PATH: URL = new URL("../docs/cli.md", import.meta.url);

if (import.meta.main) {
  await Deno.writeTextFile(CLI_REFERENCE_PATH, renderCliReference());
  console.log(`Wrote ${CLI_REFERENCE_PATH.pathname}`);
}
