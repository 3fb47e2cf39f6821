/**
 * `kopf build FILES... [-m SPEC]... -o OUT.js [--minify] [--compile]`: one JavaScript file that runs the operator
 * with the handler files embedded (`deno run --allow-... OUT.js run -A`), made by `deno bundle` from an
 * entry module that imports the handler files and then the CLI, so the bundle holds one copy of
 * the library, split where the code is imported on demand, and written as chunks in comments of one
 * module that compiles each at its first load (bundle_chunks.ts); `--compile` passes the bundle as a
 * module to `deno compile`.
 *
 * @module
 */

import { basename, dirname, extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { asciiSource, builtinRequires } from "./bundle_text.ts";
import { chunksEntry } from "./bundle_chunks.ts";
import { BundleBodyError, moduleSyntaxes } from "./bundle_syntax.ts";
import { resolveSpecifier } from "./loading.ts";
import { type OptionSpec, parseCommand, processEnvironment } from "./options.ts";
import { UsageError } from "./usage.ts";

/** The usage line of `kopf build`. */
export const BUILD_USAGE = "Usage: kopf build [OPTIONS] FILES... -o OUT.js";

/** The help of `kopf build`. */
export const BUILD_HELP = `${BUILD_USAGE}

  Write one JavaScript file that runs the operator: the CLI with the handler files and modules
  embedded, and one copy of @kopf/kopf and its dependencies. Run it with
  deno run ${"<permissions>"} OUT.js run -A   (or -n NAMESPACE\u2026; every option of 'kopf run' works).

Options:
  -m, --module SPEC  A module to embed after the files (repeatable): a path, a URL, or a name of
                     the import map.
  -o, --output FILE  The JavaScript file to write (required).
      --minify       Minify it, keeping the names of functions and classes (handler ids come
                     from them): half the size, 2-3 MiB less memory when idle; stack traces
                     then point into one long line.
      --compile      Also make an executable with 'deno compile' (next to OUT.js, without .js),
                     with the operator's minimal permissions; needs 'denort' (downloaded by Deno,
                     or DENORT_BIN).
  -h, --help         Show this message and exit.
`;

/**
 * The Deno permissions an executable of `--compile` gets: the API server, webhook and probe ports
 * (net), the environment (KUBECONFIG, HOME, KUBERNETES_SERVICE_*, KOPF_RUN_*, POD_ID), and reading
 * the credentials. The paths to read are not known when it is built (a kubeconfig may name
 * certificate and token files anywhere), so reading is not narrowed here; the Dockerfile recipe
 * narrows it to the service account's folder.
 */
export const OPERATOR_PERMISSIONS: readonly string[] = ["--allow-net", "--allow-env", "--allow-read"];

/**
 * V8's flags for a running operator: a young generation of at most 8 MiB per semi-space (V8's own
 * limit grows it further, and an operator that ticks then holds more memory; 2 MiB cost 12-14% more
 * CPU per object in bursts, for no less memory: docs/performance/cpu.md, "A young generation of 8
 * MiB, not 2") and the global `gc()`, which the idle collection calls; without it, the collection
 * loads `node:v8` and `node:vm` and keeps a second V8 context for its `gc` (~1 MiB of idle RSS).
 */
export const OPERATOR_V8_FLAGS = "--v8-flags=--max-semi-space-size=8,--expose-gc";

/**
 * Deno's flags of the image's entrypoint besides the permissions and V8's: no V8 code cache. A
 * container starts from the image's files, so Deno's cache is empty at every start: where it can be
 * written, the code cache of the bundle would be made at every start and never read (2.2 MiB of idle
 * RSS: docs/performance/memory.md, "No code cache in the image"). A read-only root filesystem keeps
 * none anyway.
 */
export const IMAGE_DENO_FLAGS: readonly string[] = ["--no-code-cache"];

/**
 * The image's environment for glibc's allocator: blocks of 128 KiB and more mapped on their own and
 * given back when freed. By default glibc raises that bound as it frees such blocks and then keeps
 * them in its heap: the start reads the operator's code as one large string (see bundle_body.ts),
 * and an operator held 3.4 MiB more 20 s after its start (docs/performance/memory.md, "The bundle
 * outside Deno's module graph").
 */
export const IMAGE_ENVIRONMENT: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: "131072" };

const BUILD_OPTIONS: readonly OptionSpec[] = [
  { long: "module", short: "m", type: "string", multiple: true, env: false },
  { long: "output", short: "o", type: "string", env: false },
  { long: "minify", type: "boolean", env: false },
  { long: "compile", type: "boolean", env: false },
];

/** What `kopf build` made. */
export interface BuildResult {
  /** The bundle's path. */
  output: string;
  /** The bundle's size in bytes. */
  size: number;
  /** The executable's path, with `--compile`. */
  executable?: string;
}

/** A build failed: `deno bundle` or `deno compile` refused, with their own words. */
export class BuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BuildError";
  }
}

/**
 * Runs `kopf build` with the arguments after `build`; returns `undefined` after `--help`.
 *
 * @param args The arguments after `build`.
 */
export async function build(args: string[]): Promise<BuildResult | undefined> {
  const parsed = parseCommand("build", BUILD_USAGE, BUILD_OPTIONS, args, processEnvironment);
  if (parsed.help) {
    console.log(BUILD_HELP);
    return undefined;
  }
  const modules = (parsed.values.module as string[] | undefined) ?? [];
  const output = parsed.values.output as string | undefined;
  if (parsed.positionals.length === 0 && modules.length === 0) {
    throw new UsageError("Nothing to build: give handler files or -m modules.", BUILD_USAGE);
  }
  if (!output) throw new UsageError("Missing the output file: give -o OUT.js.", BUILD_USAGE);
  const specifiers: string[] = [];
  for (const file of parsed.positionals) {
    const path = resolve(file);
    const stat = await Deno.stat(path).catch(() => null);
    if (!stat?.isFile) throw new UsageError(`${file}: no such handler file (looked at ${path}).`, BUILD_USAGE);
    specifiers.push(pathToFileURL(path).href);
  }
  for (const module of modules) specifiers.push(resolveSpecifier(module));
  const minify = parsed.values.minify === true;
  const result = await bundle(specifiers, resolve(output), { minify });
  if (parsed.values.compile === true) {
    // The executable embeds the module form: `deno compile` stores its modules parsed already.
    const folder = await Deno.makeTempDir({ prefix: "kopf-build-module-" });
    try {
      const module = join(folder, basename(result.output));
      await bundle(specifiers, module, { minify, form: "module" });
      result.executable = await compile(module, result.output);
    } finally {
      await Deno.remove(folder, { recursive: true });
    }
  }
  return result;
}

/** How {@linkcode bundle} writes the operator. */
export type BundleForm = "function" | "module";

/**
 * Bundles the handler modules and the CLI into `output`. The entry imports the handlers first, so
 * that they are registered when the CLI's `run` starts, and tells the CLI that they are embedded
 * (no handler file is needed on the command line then).
 *
 * @param specifiers The handler modules as URLs (or names of the import map).
 * @param output The bundle's absolute path.
 * @param options `minify`: minified, with the names of functions and classes kept. `form`: as async
 *   functions' bodies held in comments of one module (`function`, the default: Deno does not parse
 *   them at the start, see bundle_body.ts and bundle_chunks.ts), or as the module `deno bundle` makes
 *   (`module`: what `deno compile` embeds, which it stores parsed).
 */
export async function bundle(
  specifiers: readonly string[],
  output: string,
  options: { minify?: boolean; form?: BundleForm } = {},
): Promise<BuildResult> {
  const folder = await Deno.makeTempDir({ prefix: "kopf-build-" });
  try {
    const entry = join(folder, "entry.ts");
    const cli = import.meta.resolve("./main.ts");
    const lines = [
      ...specifiers.map((specifier) => `import ${JSON.stringify(specifier)};`),
      `import { main } from ${JSON.stringify(cli)};`,
      `Deno.exit(await main(Deno.args, { embedded: true }));`,
    ];
    await Deno.writeTextFile(entry, lines.join("\n") + "\n");
    // Handler ids default to the functions' names: minified, they must keep them.
    const flags = ["bundle", "--quiet", "--platform", "deno", ...(options.minify ? ["--minify", "--keep-names"] : [])];
    let text: string;
    if ((options.form ?? "function") === "module") {
      const bundled = join(folder, "bundle.js");
      await deno([...flags, "-o", bundled, entry], "deno bundle");
      text = builtinRequires(asciiSource(await Deno.readTextFile(bundled)));
    } else {
      text = await chunkedBundle(folder, entry, flags);
    }
    await Deno.mkdir(dirname(output), { recursive: true });
    await Deno.writeTextFile(output, text);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
  const { size } = await Deno.stat(output);
  return { output, size };
}

/**
 * The bundle in the `function` form of {@linkcode bundle}: split into chunks where the code is imported
 * on demand, each an async function's body in one entry module (bundle_chunks.ts), so that an
 * operator compiles only the code it loads. Where the chunks cannot be held so (chunks that import
 * each other in a cycle, or a name whose variable changes after its chunk ran), the whole bundle is
 * one chunk.
 */
async function chunkedBundle(folder: string, entry: string, flags: readonly string[]): Promise<string> {
  const attempt = async (split: boolean, name: string): Promise<string> => {
    const out = join(folder, split ? "chunks" : "whole");
    await deno(
      split ? [...flags, "--code-splitting", "--outdir", out, entry] : [...flags, "-o", join(out, name), entry],
      "deno bundle",
    );
    const texts = new Map<string, string>();
    for await (const file of Deno.readDir(out)) {
      if (!file.isFile || !file.name.endsWith(".js")) continue;
      texts.set(file.name, builtinRequires(asciiSource(await Deno.readTextFile(join(out, file.name)))));
    }
    const parsing = join(folder, split ? "syntax-chunks" : "syntax-whole");
    await Deno.mkdir(parsing);
    return chunksEntry(texts, await moduleSyntaxes(texts, parsing), name);
  };
  try {
    return await attempt(true, `${basename(entry, extname(entry))}.js`);
  } catch (error) {
    if (!(error instanceof BundleBodyError)) throw error;
  }
  try {
    return await attempt(false, "bundle.js");
  } catch (error) {
    if (error instanceof BundleBodyError) {
      throw new BuildError(
        `kopf build could not make the bundle's code a function's body: ${error.message}\n` +
          "That is a defect of kopf build, not of the handlers: please report it with the handler files.",
      );
    }
    throw error;
  }
}

/**
 * Makes an executable of a bundle with `deno compile` and the operator's permissions. Deno
 * downloads `denort` (the runtime it embeds) unless `DENORT_BIN` names one; where neither works,
 * the error says so and that the bundle runs as it is with `deno run`.
 *
 * @param modulePath The bundle in the `module` form of {@linkcode bundle}.
 * @param bundlePath The bundle that `kopf build` wrote: the executable goes beside it, without its extension.
 */
export async function compile(modulePath: string, bundlePath: string = modulePath): Promise<string> {
  const executable = join(dirname(bundlePath), basename(bundlePath, extname(bundlePath)));
  try {
    await deno(
      [
        "compile",
        "--quiet",
        ...OPERATOR_PERMISSIONS,
        OPERATOR_V8_FLAGS,
        "-o",
        executable,
        modulePath,
      ],
      "deno compile",
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/denort|dl\.deno\.land|error sending request|dns error/i.test(message)) {
      throw new BuildError(
        `${message}\n\n'deno compile' needs 'denort', the Deno runtime it embeds in the executable, and could not ` +
          `get it: it downloads it from dl.deno.land unless DENORT_BIN names a denort binary of Deno ` +
          `${Deno.version.deno}. The bundle ${bundlePath} is complete: run it with ` +
          `'deno run ${OPERATOR_PERMISSIONS.join(" ")} ${OPERATOR_V8_FLAGS} ${basename(bundlePath)} run -A'.`,
      );
    }
    throw error;
  }
  return executable;
}

async function deno(args: string[], what: string): Promise<void> {
  // Without colours: deno's message is quoted in ours, in logs and tests.
  const command = new Deno.Command(Deno.execPath(), {
    args,
    env: { NO_COLOR: "1" },
    stdout: "inherit",
    stderr: "piped",
  });
  const { code, stderr } = await command.output();
  if (code !== 0) {
    // Deno's stack backtrace of its own Rust code says nothing to a user.
    const text = new TextDecoder().decode(stderr).split("\nStack backtrace:")[0].trim();
    throw new BuildError(`${what} failed (exit code ${code}):\n${text}`);
  }
}
