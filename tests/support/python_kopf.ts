/**
 * The real Python Kopf, for tests that prove our on-cluster state is interchangeable with it:
 * a virtual environment with a pinned `kopf` installed once into a cache folder outside the
 * repository, and `kopf run --standalone` started from it against a kubeconfig, its output kept.
 *
 * ```ts ignore
 * const python = await ensurePythonKopf();
 * if ("skipped" in python) console.warn(python.skipped);
 * else {
 *   await using kopf = await python.start({ file: "handlers.py", kubeconfig, namespace: "ns" });
 *   await kopf.waitForLine(/Handler 'create_fn' succeeded/);
 * }
 * ```
 *
 * The environment is made in a temporary folder beside its final place and renamed into place
 * only when `kopf` imports with the right version, under an exclusive file lock, so neither an
 * interrupted install nor two test processes at once leave a broken cache. Because a renamed
 * virtual environment keeps its interpreter but not its scripts' shebangs, Kopf is always run as
 * `python -m kopf`.
 *
 * Environment variables: `KOPF_PYTHON_CACHE` (the folder to keep it in), `KOPF_PYTHON` (the
 * interpreter that makes the environment, default `python3`), `KOPF_PYTHON_ECHO=1` (echo Kopf's
 * output to stderr while it runs).
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { eventually } from "./eventually.ts";

/** The Kopf release the compatibility tests run against (pinned: its state format is the reference). */
export const PYTHON_KOPF_VERSION = "1.44.6";

/** What a run of Python Kopf needs. */
export interface PythonKopfRunOptions {
  /** The Python file with the handlers (a path or a `file:` URL). */
  readonly file: string | URL;
  /** The kubeconfig to use (token and inline CA data are fine: Kopf reads it itself). */
  readonly kubeconfig: string;
  /** Serve only this namespace (`-n`); without it, `--all-namespaces`. */
  readonly namespace?: string;
  /** Add `--verbose`, i.e. debug lines such as "Patching with: …" (default `true`). */
  readonly verbose?: boolean;
  /** More arguments for `kopf run`, placed before the file. */
  readonly args?: readonly string[];
  /** More environment variables for the process. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * The output line that means "started": by default the start of the watch-stream of a handled
   * resource, which Kopf logs (with `--verbose`) as it lists and watches it. `null`: do not wait.
   */
  readonly ready?: RegExp | null;
  /** Seconds to wait for `ready` (default 60). */
  readonly readySeconds?: number;
}

/** A ready-to-use installation of Python Kopf. */
export interface PythonKopf {
  /** The installed Kopf version. */
  readonly version: string;
  /** The virtual environment's folder. */
  readonly venv: string;
  /** The environment's interpreter. */
  readonly python: string;
  /** Seconds the install took if this call installed it; `null` if a cached one was reused. */
  readonly installSeconds: number | null;
  /** Starts `kopf run --standalone` and (by default) waits until it has started. */
  start(options: PythonKopfRunOptions): Promise<PythonKopfProcess>;
}

/** Why Python Kopf cannot be used here (no interpreter, no network to PyPI). */
export interface PythonKopfSkipped {
  /** A sentence for the test output. */
  readonly skipped: string;
}

/** The folder that holds the environment: `$KOPF_PYTHON_CACHE`, else a per-user, per-version cache folder. */
export function pythonKopfCacheDirectory(
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
  version: string = PYTHON_KOPF_VERSION,
): string {
  const folder = `python-kopf-${version}`;
  const explicit = env("KOPF_PYTHON_CACHE");
  if (explicit) return version === PYTHON_KOPF_VERSION ? explicit : join(explicit, folder);
  const xdg = env("XDG_CACHE_HOME");
  if (xdg) return join(xdg, "kopf-deno", folder);
  const home = env("HOME") ?? env("USERPROFILE");
  if (!home) {
    throw new Error("Cannot choose a cache folder for Python Kopf: HOME is not set. Set KOPF_PYTHON_CACHE.");
  }
  return join(home, ".cache", "kopf-deno", folder);
}

const installations = new Map<string, Promise<PythonKopf | PythonKopfSkipped>>();

/**
 * Makes sure Python Kopf is installed (once per machine; later calls and processes reuse it) and
 * returns it, or `{ skipped }` with the reason when this machine cannot have it: no Python
 * interpreter, no `venv` module, or pip cannot reach the package index. Any other failure throws.
 */
export function ensurePythonKopf(version: string = PYTHON_KOPF_VERSION): Promise<PythonKopf | PythonKopfSkipped> {
  let installation = installations.get(version);
  if (!installation) {
    installation = installUnderLock(pythonKopfCacheDirectory(undefined, version), version);
    installations.set(version, installation);
  }
  return installation;
}

interface Layout {
  root: string;
  venv: string;
  lock: string;
  log: string;
  marker: string;
}

const PARTIAL_PREFIX = ".partial-venv-";
const MARKER = "kopf-deno-install.json";

function layoutOf(root: string): Layout {
  const venv = join(root, "venv");
  return { root, venv, lock: join(root, ".lock"), log: join(root, "install.log"), marker: join(venv, MARKER) };
}

function interpreterIn(venv: string): string {
  return Deno.build.os === "windows" ? join(venv, "Scripts", "python.exe") : join(venv, "bin", "python");
}

async function installUnderLock(root: string, version: string): Promise<PythonKopf | PythonKopfSkipped> {
  const layout = layoutOf(root);
  if (await isComplete(layout, version)) return installed(layout, null, version);
  await Deno.mkdir(root, { recursive: true });
  using lockFile = await Deno.open(layout.lock, { create: true, write: true });
  const notice = setTimeout(() => say(`waiting for another process installing into ${root}`), 2000);
  try {
    await lockFile.lock(true);
  } finally {
    clearTimeout(notice);
  }
  if (await isComplete(layout, version)) return installed(layout, null, version);
  for await (const entry of Deno.readDir(root)) {
    if (entry.name.startsWith(PARTIAL_PREFIX)) await Deno.remove(join(root, entry.name), { recursive: true });
  }
  return await install(layout, version);
}

async function isComplete(layout: Layout, kopf: string): Promise<boolean> {
  try {
    const marker = JSON.parse(await Deno.readTextFile(layout.marker));
    // stat() follows the symlink: a venv whose base interpreter is gone counts as absent.
    await Deno.stat(interpreterIn(layout.venv));
    return marker.kopf === kopf;
  } catch {
    return false;
  }
}

async function install(layout: Layout, kopf: string): Promise<PythonKopf | PythonKopfSkipped> {
  const base = Deno.env.get("KOPF_PYTHON") ?? "python3";
  const started = performance.now();
  await Deno.writeTextFile(layout.log, "");
  const version = await run(base, ["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], layout.log);
  if (version.missing) return { skipped: `Python Kopf tests skipped: ${base} is not installed.` };
  if (version.code !== 0) {
    throw new Error(`${base} does not run (exit code ${version.code}): ${tail(version.output)}`);
  }
  const partial = await Deno.makeTempDir({ dir: layout.root, prefix: PARTIAL_PREFIX });
  try {
    const venv = await run(base, ["-m", "venv", partial], layout.log);
    if (venv.code !== 0) {
      return {
        skipped: `Python Kopf tests skipped: ${base} cannot create a virtual environment ` +
          `(is the venv module installed?): ${tail(venv.output)}`,
      };
    }
    say(`installing kopf==${kopf} with pip into ${layout.venv} (log: ${layout.log})`);
    const python = interpreterIn(partial);
    const pip = await run(
      python,
      ["-m", "pip", "install", "--no-input", "--disable-pip-version-check", `kopf==${kopf}`],
      layout.log,
    );
    if (pip.code !== 0) {
      if (NETWORK_ERRORS.test(pip.output)) {
        const lines = pip.output.split("\n").map((line) => line.trim());
        const cause = lines.find((line) => NETWORK_ERRORS.test(line)) ?? "";
        const detail = cause.match(NETWORK_ERRORS)?.[0] === "NewConnectionError"
          ? cause.replace(/.*(Failed to establish a new connection: [^']*).*/, "$1")
          : cause.slice(0, 200);
        const last = lines.filter(Boolean).at(-1) ?? "";
        return { skipped: `Python Kopf tests skipped: pip cannot reach the package index (${detail}; ${last}).` };
      }
      throw new Error(`pip install kopf==${kopf} failed (exit code ${pip.code}): ${tail(pip.output)}`);
    }
    const check = await run(
      python,
      ["-c", "import importlib.metadata as m, kopf; print(m.version('kopf'))"],
      layout.log,
    );
    if (check.code !== 0 || check.output.trim().split("\n").at(-1) !== kopf) {
      throw new Error(`kopf does not import from the new environment: ${tail(check.output)}`);
    }
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    const marker = { kopf, python: version.output.trim(), seconds, at: new Date().toISOString() };
    await Deno.writeTextFile(join(partial, MARKER), JSON.stringify(marker, null, 2) + "\n");
    if (Deno.build.os !== "windows") await Deno.chmod(partial, 0o755); // a temporary folder is private
    // We hold the lock: whatever is in the final place is incomplete or outdated.
    await Deno.remove(layout.venv, { recursive: true }).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
    await Deno.rename(partial, layout.venv);
    say(`installed kopf==${kopf} (Python ${marker.python}) in ${seconds} s`);
    return installed(layout, seconds, kopf);
  } finally {
    await Deno.remove(partial, { recursive: true }).catch(() => {});
  }
}

/** What pip prints when the index cannot be reached (DNS, refused, timeouts, proxies, TLS). */
const NETWORK_ERRORS = new RegExp(
  [
    "NewConnectionError",
    "Failed to establish a new connection",
    "Max retries exceeded",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "No route to host",
    "Connection refused",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "timed out",
    "ProxyError",
    "SSLError",
    "ConnectionError",
  ].join("|"),
);

function installed(layout: Layout, installSeconds: number | null, version: string): PythonKopf {
  const python = interpreterIn(layout.venv);
  return {
    version,
    venv: layout.venv,
    python,
    installSeconds,
    start: (options) => PythonKopfProcess.start(python, options),
  };
}

interface RunResult {
  code: number;
  output: string;
  missing?: boolean;
}

/** Runs a command to completion, its output appended to the install log and returned. */
async function run(executable: string, args: string[], log: string): Promise<RunResult> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(executable, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { PIP_NO_INPUT: "1" },
    }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { code: -1, output: "", missing: true };
    throw error;
  }
  const decoder = new TextDecoder();
  const text = decoder.decode(output.stdout) + decoder.decode(output.stderr);
  await Deno.writeTextFile(log, `$ ${executable} ${args.join(" ")}\n${text}\n`, { append: true });
  return { code: output.code, output: text };
}

function tail(text: string, lines = 6): string {
  return text.trim().split("\n").slice(-lines).join("\n");
}

function say(message: string): void {
  console.error(`python-kopf: ${message}`);
}

/**
 * What Kopf logs (with `--verbose`) when it starts watching a resource it has handlers for: any
 * watch-stream but those of its own observers of CRDs and namespaces, which start first.
 */
const WATCHING_HANDLED_RESOURCE = /Starting the watch-stream for (?!customresourcedefinitions\.|namespaces\.)/;

/** A running `kopf run`: its output as it comes, and a polite stop. */
export class PythonKopfProcess implements AsyncDisposable {
  /** The command line, for messages. */
  readonly command: string;
  /** Resolves with the exit code once the process has exited and its output is read. */
  readonly exited: Promise<number>;
  #child: Deno.ChildProcess;
  #lines: string[] = [];
  #exitCode: number | null = null;

  private constructor(command: string, child: Deno.ChildProcess) {
    this.command = command;
    this.#child = child;
    const echo = Deno.env.get("KOPF_PYTHON_ECHO") === "1";
    const pump = async (stream: ReadableStream<Uint8Array>) => {
      let pending = "";
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
        const parts = (pending + chunk).split("\n");
        pending = parts.pop() ?? "";
        for (const line of parts) this.#add(line, echo);
      }
      if (pending) this.#add(pending, echo);
    };
    const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
    this.exited = child.status.then(async (status) => {
      await pumps;
      this.#exitCode = status.code;
      return status.code;
    });
  }

  /** Starts `python -m kopf run --standalone …` and, unless `ready` is `null`, waits until it has started. */
  static async start(python: string, options: PythonKopfRunOptions): Promise<PythonKopfProcess> {
    const file = options.file instanceof URL ? fileURLToPath(options.file) : options.file;
    const args = [
      "-m",
      "kopf",
      "run",
      "--standalone",
      ...(options.verbose ?? true ? ["--verbose"] : []),
      ...(options.namespace !== undefined ? ["--namespace", options.namespace] : ["--all-namespaces"]),
      ...(options.args ?? []),
      file,
    ];
    const child = new Deno.Command(python, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { KUBECONFIG: options.kubeconfig, PYTHONUNBUFFERED: "1", PYTHONDONTWRITEBYTECODE: "1", ...options.env },
    }).spawn();
    const process = new PythonKopfProcess(`kopf ${args.slice(2).join(" ")}`, child);
    const ready = options.ready === undefined ? WATCHING_HANDLED_RESOURCE : options.ready;
    if (ready) {
      try {
        await process.waitForLine(ready, options.readySeconds ?? 60);
      } catch (error) {
        await process.stop("SIGTERM");
        throw error;
      }
    }
    return process;
  }

  /** Every output line so far (stdout and stderr interleaved as they arrived). */
  get lines(): readonly string[] {
    return this.#lines;
  }

  /** All output so far as one text. */
  get output(): string {
    return this.#lines.join("\n");
  }

  /** The exit code, once exited; `null` while running. */
  get exitCode(): number | null {
    return this.#exitCode;
  }

  /** The output lines that match (a string matches as a substring). */
  linesMatching(pattern: RegExp | string): string[] {
    return this.#lines.filter((line) => typeof pattern === "string" ? line.includes(pattern) : pattern.test(line));
  }

  /**
   * Waits until a line matches, for at most `seconds`, and returns the first such line. Fails
   * early, with the output, if the process exits without printing it.
   */
  async waitForLine(pattern: RegExp | string, seconds = 60): Promise<string> {
    const found = await eventually<string | { exited: number }>(
      `a line matching ${pattern} from ${this.command}`,
      () => {
        return this.linesMatching(pattern)[0] ?? (this.#exitCode === null ? undefined : { exited: this.#exitCode });
      },
      { seconds, interval: 0.05 },
    ).catch((error) => {
      throw new Error(`${error.message}\n${this.output}`);
    });
    if (typeof found === "string") return found;
    throw new Error(`${this.command} exited (code ${found.exited}) before printing ${pattern}:\n${this.output}`);
  }

  /**
   * Sends `signal` (Kopf stops gracefully on SIGINT and SIGTERM) and waits for the exit; after
   * `seconds`, kills it and fails. Returns the exit code. Stopping an exited process just returns.
   */
  async stop(signal: "SIGINT" | "SIGTERM" = "SIGINT", seconds = 30): Promise<number> {
    if (this.#exitCode === null) {
      try {
        this.#child.kill(signal);
      } catch (error) {
        if (!(error instanceof TypeError)) throw error; // already exited
      }
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => timer = setTimeout(() => resolve("timeout"), seconds * 1000));
    const result = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    if (result === "timeout") {
      this.#child.kill("SIGKILL");
      await this.exited;
      throw new Error(`${this.command} did not exit within ${seconds} s after ${signal}:\n${this.output}`);
    }
    return result;
  }

  /** Stops the process if it still runs (for `await using`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  #add(line: string, echo: boolean): void {
    this.#lines.push(line);
    if (echo) console.error(`[python kopf] ${line}`);
  }
}
