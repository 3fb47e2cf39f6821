/**
 * A bench's command line, read the same way by every bench: `--help` prints the usage and exits 0;
 * an option the bench does not know, or one given without its value, prints what is wrong and the
 * usage and exits 2, instead of a stack trace; a value the bench cannot take ends it with exit code
 * 2 too, and a pointer to `--help` ({@linkcode usageError}). The usage is the bench's own text, or
 * one made from its options and their defaults that points to the bench's description for what
 * they mean.
 *
 * @module
 */

import { parseArgs, type ParseArgsConfig } from "node:util";

/** What {@linkcode readCommandLine} made of the arguments: the parsed options, or what to print and the exit code. */
export type CommandLine<T extends ParseArgsConfig> =
  | { parsed: ReturnType<typeof parseArgs<T>> }
  | { exit: 0 | 2; text: string };

/**
 * Parses the bench's arguments (`Deno.args`); on `--help` or a mistake, prints and exits.
 *
 * @param config `parseArgs`' options and `allowPositionals`; `--help` needs no option of its own.
 * @param usage the bench's own usage text; made from the options when absent.
 */
export function commandLine<const T extends ParseArgsConfig>(
  config: T,
  usage?: string,
): ReturnType<typeof parseArgs<T>> {
  const read = readCommandLine(Deno.args, config, usage ?? usageOf(benchPath(), config));
  if ("parsed" in read) return read.parsed;
  (read.exit ? console.error : console.log)(read.text);
  Deno.exit(read.exit);
}

/**
 * Ends the bench for an option's value it cannot take (`--only` naming an unknown contestant, a
 * count below one): the message and where the options are listed, exit code 2.
 */
export function usageError(message: string): never {
  console.error(`${message}\n(${benchPath()} --help lists the options)`);
  Deno.exit(2);
}

/** {@linkcode commandLine} without its effects: what it parses, prints and exits with for these arguments. */
export function readCommandLine<const T extends ParseArgsConfig>(
  args: string[],
  config: T,
  usage: string,
): CommandLine<T> {
  if (args.includes("--help")) return { exit: 0, text: usage };
  try {
    return { parsed: parseArgs({ ...config, args }) as ReturnType<typeof parseArgs<T>> };
  } catch (error) {
    return { exit: 2, text: `${error instanceof Error ? error.message : error}\n${usage}` };
  }
}

/** A usage line from the options, each with its default (`VALUE` if none; a flag alone), and where they are described. */
export function usageOf(script: string, config: ParseArgsConfig): string {
  const options = Object.entries(config.options ?? {}).map(([name, option]) => {
    if (option.type === "boolean") return `[--${name}]`;
    const example = Array.isArray(option.default) ? option.default.join(",") : option.default;
    return `[--${name} ${example || "VALUE"}]`;
  });
  if (config.allowPositionals) options.push("ARGUMENT…");
  const line = `Usage: deno run -A ${script} ${options.join(" ")}`;
  return `${line}\n(what each option means: the description at the top of ${script})`;
}

/** The running bench as a path from the repository's root, e.g. `bench/scale.ts`. */
function benchPath(): string {
  const main = new URL(Deno.mainModule).pathname;
  return `bench/${main.slice(main.lastIndexOf("/") + 1)}`;
}
