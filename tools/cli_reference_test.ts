/**
 * `docs/cli.md` is exactly what `tools/cli_reference.ts` writes from the CLI's help texts today,
 * and the script refuses a help text that does not match its parser.
 */

import assert from "node:assert/strict";
import { CLI_REFERENCE_PATH, COMMANDS, describedOptions, helpMismatches, renderCliReference } from "./cli_reference.ts";
import { RUN_OPTIONS } from "../cli/run_options.ts";
import { RUN_HELP } from "../cli/usage.ts";

Deno.test("docs/cli.md is what tools/cli_reference.ts writes now", async () => {
  const written = await Deno.readTextFile(CLI_REFERENCE_PATH);
  assert.equal(
    written,
    renderCliReference(),
    "docs/cli.md is out of date with the CLI's help: run `deno run -A tools/cli_reference.ts` and commit the page.",
  );
});

Deno.test("the page has a section with the full help of every command of kopf --help", () => {
  const page = renderCliReference();
  const listed = [...COMMANDS[0].help.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((match) => match[1]);
  assert.deepEqual(listed, ["run", "freeze", "resume", "init", "build", "generate"]);
  for (const command of listed) {
    assert.ok(COMMANDS.some((reference) => reference.command.startsWith(`kopf ${command}`)), command);
  }
  for (const { command, help } of COMMANDS) {
    assert.ok(page.includes(`## \`${command}\`\n\n\`\`\`text\n${help.trimEnd()}\n\`\`\``), command);
  }
});

Deno.test("the help of kopf run describes the options its parser takes, short letters included", () => {
  const described = describedOptions(RUN_HELP);
  assert.deepEqual(
    described.map((option) => option.long).sort(),
    RUN_OPTIONS.map((option) => option.long).sort(),
  );
  assert.deepEqual(described.find((option) => option.long === "namespace"), { long: "namespace", short: "n" });
  assert.ok(described.some((option) => option.long === "no-log-prefix"), "the --a / --b pair counts both");
});

Deno.test("a help that drifts from its parser is refused, naming the option", () => {
  const drifted = {
    command: "kopf run",
    help: RUN_HELP.replace("-L, --liveness URL", "    --liveness URL") + "      --undocumented-extra  Nothing.\n",
    options: [...RUN_OPTIONS, { long: "secret", type: "boolean" as const }],
  };
  assert.deepEqual(helpMismatches(drifted), [
    "kopf run: --liveness is -L in the parser but -(none) in the help.",
    "kopf run: --secret is parsed but its help does not describe it.",
    "kopf run: its help describes --undocumented-extra, which is not parsed.",
  ]);
  assert.throws(() => renderCliReference([drifted]), /help texts and parsers disagree.*\n.*--liveness/);
  assert.deepEqual(COMMANDS.flatMap(helpMismatches), []);
});
