/**
 * The length in lines of every TypeScript source file under the given files or folders, longest first — the
 * measure behind "no file over ~400 lines". Tests (`*_test.ts`) are left out: a room is the code a change has to
 * read, and a test file grows with its cases. A generated file is named with `--except` (its generator is the
 * room).
 *
 * ```sh
 * deno run -A tools/file_lengths.ts src cli                                               # every file, longest first
 * deno run -A tools/file_lengths.ts --over 400 --except src/model/k8s_models.ts src cli  # only the longer; exits 1 if any
 * ```
 *
 * @module
 */

import { join, relative } from "node:path";

/** One source file and how many lines it has. */
export interface FileLength {
  /** The file, relative to the working directory. */
  file: string;
  /** Its lines, the last one counted whether or not it ends with a line break. */
  lines: number;
}

/** Measures every `.ts` file but tests in the given files and folders (folders walked through), longest first. */
export async function measureFiles(paths: string[]): Promise<FileLength[]> {
  const found: FileLength[] = [];
  const visit = async (path: string): Promise<void> => {
    const info = await Deno.stat(path);
    if (info.isDirectory) {
      for await (const entry of Deno.readDir(path)) await visit(join(path, entry.name));
    } else if (path.endsWith(".ts") && !path.endsWith("_test.ts")) {
      const text = await Deno.readTextFile(path);
      const breaks = text.split("\n").length - 1;
      found.push({ file: relative(Deno.cwd(), path), lines: text.endsWith("\n") ? breaks : breaks + 1 });
    }
  };
  for (const path of paths) await visit(path);
  return found.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file));
}

if (import.meta.main) {
  const args = [...Deno.args];
  const at = args.indexOf("--over");
  const over = at === -1 ? 0 : Number(args.splice(at, 2)[1]);
  if (!Number.isInteger(over) || over < 0) {
    console.error("--over takes a whole number of lines, e.g. --over 400.");
    Deno.exit(2);
  }
  const excepted = new Set<string>();
  for (let index = args.indexOf("--except"); index !== -1; index = args.indexOf("--except")) {
    const [, file] = args.splice(index, 2);
    if (!file) {
      console.error("--except takes a file, e.g. --except src/model/k8s_models.ts.");
      Deno.exit(2);
    }
    excepted.add(relative(Deno.cwd(), file));
  }
  const found = (await measureFiles(args.length ? args : ["src"]))
    .filter((f) => f.lines > over && !excepted.has(f.file));
  for (const { file, lines } of found) console.log(`${String(lines).padStart(5)}  ${file}`);
  if (at !== -1 && found.length) Deno.exit(1);
}
