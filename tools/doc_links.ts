/**
 * The links between our pages, checked: every relative link of a Markdown file reaches a file, and its `#anchor` a
 * heading of that file, spelled as GitHub spells anchors; every citation of a page in a TypeScript file
 * (`docs/performance/cpu.md, "Fewer functions, a second pass"`) names a page that exists and, when it quotes a
 * title, a heading or a bold lead of that page which starts with it. Citations resolve against the working
 * directory (the repository's root); links against their own file's folder. Web addresses are not followed.
 *
 * ```sh
 * deno run -A tools/doc_links.ts README.md docs examples src cli bench tests tools   # exits 1 on any broken one
 * ```
 *
 * @module
 */

import { dirname, join, relative } from "node:path";

/** A link or citation that does not reach what it names. */
export interface BrokenLink {
  /** The file holding it, relative to the working directory. */
  file: string;
  /** Its 1-based line. */
  line: number;
  /** What it names, as written. */
  target: string;
  /** What is missing. */
  reason: string;
}

const HEADING = /^#{1,6}\s+(.*?)\s*#*\s*$/;
const FENCE = /^\s*(```|~~~)/;

/** The lines of a Markdown text with fenced code blanked and inline code removed, so that neither is read as links. */
function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split("\n").map((line) => {
    if (FENCE.test(line)) {
      fenced = !fenced;
      return "";
    }
    return fenced ? "" : line.replace(/`[^`]*`/g, "");
  });
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Every anchor of a Markdown text's headings; a repeated one gets `-1`, `-2`… as on GitHub. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (FENCE.test(line)) fenced = !fenced;
    const heading = fenced ? null : HEADING.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]);
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The targets of a Markdown text's inline links and images, with their lines; code left out. */
export function linksOf(markdown: string): { target: string; line: number }[] {
  const found: { target: string; line: number }[] = [];
  proseLines(markdown).forEach((text, index) => {
    for (const match of text.matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)) {
      found.push({ target: match[1], line: index + 1 });
    }
  });
  return found;
}

/** The pages a TypeScript text cites (`docs/….md`), each with the title quoted after it, if any, and its line. */
export function citationsOf(source: string): { page: string; title?: string; line: number }[] {
  const found: { page: string; title?: string; line: number }[] = [];
  const pattern = /\b(docs\/[\w./-]+\.md)(?:,(?:\s|\*|\/\/)*"([^"]+)")?/g;
  for (const match of source.matchAll(pattern)) {
    const line = source.slice(0, match.index).split("\n").length;
    const title = match[2]?.replace(/\s*\n\s*(?:\*|\/\/)?\s*/g, " ");
    found.push({ page: match[1], title, line });
  }
  return found;
}

/** Whether a Markdown text has a heading or a bold lead (`**Title…**`) that starts with the title. */
export function holdsTitle(markdown: string, title: string): boolean {
  const wanted = title.toLowerCase();
  const prose = markdown.replace(/\s+/g, " ").toLowerCase();
  if (prose.includes(`**${wanted}`)) return true;
  return markdown.split("\n").some((line) => HEADING.exec(line)?.[1].toLowerCase().startsWith(wanted));
}

function exists(path: string): Promise<boolean> {
  return Deno.stat(path).then(() => true, (error) => {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  });
}

const texts = new Map<string, Promise<string>>();
function read(path: string): Promise<string> {
  let text = texts.get(path);
  if (!text) texts.set(path, text = Deno.readTextFile(path));
  return text;
}

/** The broken links of one Markdown file. */
export async function checkMarkdown(file: string): Promise<BrokenLink[]> {
  const broken: BrokenLink[] = [];
  const where = relative(Deno.cwd(), file);
  for (const { target, line } of linksOf(await read(file))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [path, anchor] = target.split("#", 2);
    const reached = path === "" ? file : join(dirname(file), decodeURIComponent(path));
    if (!await exists(reached)) {
      broken.push({ file: where, line, target, reason: `no file ${relative(Deno.cwd(), reached)}` });
    } else if (anchor !== undefined && reached.endsWith(".md") && !anchorsOf(await read(reached)).has(anchor)) {
      broken.push({ file: where, line, target, reason: `no heading with the anchor #${anchor}` });
    }
  }
  return broken;
}

/** The broken citations of one TypeScript file. */
export async function checkCitations(file: string): Promise<BrokenLink[]> {
  const broken: BrokenLink[] = [];
  const where = relative(Deno.cwd(), file);
  for (const { page, title, line } of citationsOf(await read(file))) {
    const target = title === undefined ? page : `${page}, "${title}"`;
    if (!await exists(page)) {
      broken.push({ file: where, line, target, reason: `no page ${page}` });
    } else if (title !== undefined && !holdsTitle(await read(page), title)) {
      broken.push({ file: where, line, target, reason: `no heading or bold lead starting "${title}" in ${page}` });
    }
  }
  return broken;
}

/** Checks every Markdown and TypeScript file under the given files and folders (hidden ones and `node_modules` skipped). */
export async function checkLinks(paths: string[]): Promise<BrokenLink[]> {
  const broken: BrokenLink[] = [];
  const visit = async (path: string): Promise<void> => {
    if ((await Deno.stat(path)).isDirectory) {
      for await (const entry of Deno.readDir(path)) {
        if (!entry.name.startsWith(".") && entry.name !== "node_modules") await visit(join(path, entry.name));
      }
    } else if (path.endsWith(".md")) {
      broken.push(...await checkMarkdown(path));
    } else if (path.endsWith(".ts")) {
      broken.push(...await checkCitations(path));
    }
  };
  for (const path of paths) await visit(path);
  return broken;
}

if (import.meta.main) {
  if (Deno.args.length === 0) {
    console.error("Name the files and folders to check, e.g. `deno run -A tools/doc_links.ts README.md docs src`.");
    Deno.exit(2);
  }
  const broken = await checkLinks(Deno.args);
  for (const { file, line, target, reason } of broken) console.log(`${file}:${line}: ${target}: ${reason}`);
  if (broken.length > 0) {
    console.error(`${broken.length} broken link(s) or citation(s): point each at a file and heading that exist.`);
    Deno.exit(1);
  }
}
