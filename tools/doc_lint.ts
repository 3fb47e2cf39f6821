/**
 * `deno doc --lint` over every published entry point — the `exports` of deno.json and of each
 * workspace member's deno.json — failing on any finding in our own files.
 *
 * Why not the bare command: `./types` re-exports `@kubernetes/client-node`'s generated models, and
 * the linter walks into their declarations, whose members carry no JSDoc (thousands of
 * `missing-jsdoc` findings in `node_modules/`). We cannot change those files, and leaving the
 * types entry point out would hide the opposite problem: our signatures naming `V1Pod` & co. are
 * fine only because `./types` exports them. So all entry points are linted together, and the
 * findings located in `node_modules/` are counted and reported, not failed on. So are those of one
 * kind in src/model/k8s_models.ts: each model there re-declares client-node's model of the same
 * name (with strings for timestamps) and extends it, which the linter reports as a public type
 * referencing a private one — the shadowed original — by design (tools/k8s_models.ts says why).
 *
 * Run: `deno run -A tools/doc_lint.ts` (part of `deno task check`).
 *
 * @module
 */

import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** One finding of the linter: the rule, the message, and where (absolute path, line). */
export interface DocLintFinding {
  /** The rule, e.g. `missing-jsdoc`, `private-type-ref`, `missing-return-type`. */
  rule: string;
  /** The linter's message. */
  message: string;
  /** The file, as the linter prints it (an absolute path). */
  path: string;
  /** The 1-based line. */
  line: number;
}

/** The findings in the linter's human-readable output (colours off). */
export function parseDocLint(output: string): DocLintFinding[] {
  const findings: DocLintFinding[] = [];
  const pattern = /^error\[([\w-]+)\]: (.*)\n\s*--> (.+):(\d+):\d+$/gm;
  for (const match of output.matchAll(pattern)) {
    findings.push({ rule: match[1], message: match[2], path: match[3], line: Number(match[4]) });
  }
  return findings;
}

/** Whether a finding is a re-declared model of src/model/k8s_models.ts extending client-node's original. */
export function isRedeclaredModel(finding: DocLintFinding): boolean {
  if (finding.rule !== "private-type-ref" || !finding.path.endsWith("/src/model/k8s_models.ts")) return false;
  const match = finding.message.match(/^public type '(\w+)' references private type '(\w+)'$/);
  return match !== null && match[1] === match[2];
}

async function entryPoints(config: string): Promise<string[]> {
  const json = JSON.parse(await Deno.readTextFile(config));
  const exports: Record<string, string> = typeof json.exports === "string" ? { ".": json.exports } : json.exports ?? {};
  const entries = Object.values(exports).map((path) => relative(ROOT, join(dirname(config), path)));
  for (const member of json.workspace ?? []) {
    entries.push(...await entryPoints(join(dirname(config), member, "deno.json")));
  }
  return entries;
}

if (import.meta.main) {
  const entries = await entryPoints(join(ROOT, "deno.json"));
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--lint", ...entries],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const output = new TextDecoder().decode(result.stdout) + new TextDecoder().decode(result.stderr);
  const findings = parseDocLint(output);
  const foreign = findings.filter((finding) => finding.path.includes("/node_modules/"));
  const redeclared = findings.filter(isRedeclaredModel);
  const ours = findings.filter((finding) => !finding.path.includes("/node_modules/") && !isRedeclaredModel(finding));
  for (const finding of ours) {
    console.error(`${relative(ROOT, finding.path)}:${finding.line}: ${finding.rule}: ${finding.message}`);
  }
  console.error(
    `deno doc --lint ${entries.join(" ")}: ${ours.length} in our files, ` +
      `${foreign.length} in node_modules/ (dependencies' declarations, not ours to fix), ` +
      `${redeclared.length} re-declared models extending client-node's (by design).`,
  );
  // Every finding must have been read: a format this script does not know must fail, not pass.
  const total = Number(output.match(/Found (\d+) documentation lint errors?/)?.[1] ?? 0);
  if ((!result.success && findings.length === 0) || total !== findings.length) {
    console.error(output);
    console.error(
      `deno doc --lint reported ${total} findings, of which this script read ${findings.length}: ` +
        "see its output above, and teach parseDocLint() the new format.",
    );
    Deno.exit(1);
  }
  Deno.exit(ours.length ? 1 : 0);
}
