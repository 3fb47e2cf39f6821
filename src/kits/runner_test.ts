/**
 * KopfRunner without a cluster: tiny fake CLI scripts that print lines, handle or ignore
 * signals, and exit with chosen codes; and the line collection on hand-made streams.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { KopfRunner } from "./runner.ts";
import { KopfRunnerError } from "./runner_options.ts";
import { OutputCollector } from "./runner_output.ts";

const scripts = await Deno.makeTempDir({ prefix: "kopf-runner-test-" });
globalThis.addEventListener("unload", () => Deno.removeSync(scripts, { recursive: true }));

/** Writes a fake CLI script and returns its path. */
async function script(name: string, code: string): Promise<string> {
  const path = join(scripts, `${name}.ts`);
  await Deno.writeTextFile(path, code);
  return path;
}

/** Prints to both streams what it was given, then exits with the code in its first argument. */
const ECHO = await script(
  "echo",
  `
console.log("out 1");
console.error("err 1");
console.log("args " + JSON.stringify(Deno.args));
console.log("kubeconfig " + Deno.env.get("KUBECONFIG"));
console.log("no_color " + Deno.env.get("NO_COLOR"));
console.log("extra " + Deno.env.get("EXTRA"));
console.log("cwd " + Deno.cwd());
console.error("err last");
Deno.exit(Number(Deno.args[0] ?? 0));
`,
);

/** Prints "ready", ticks, and exits 0 on SIGTERM or SIGINT, as the operator does. */
const SERVE = await script(
  "serve",
  `
console.error("starting");
const timer = setInterval(() => console.error("tick"), 50);
for (const name of ["SIGTERM", "SIGINT"]) {
  Deno.addSignalListener(name, () => {
    console.error("stopping on " + name);
    clearInterval(timer);
    Deno.exit(0);
  });
}
console.error("ready");
`,
);

/** Prints numbered ticks ("tick 1", "tick 2", …) until a signal ends it. */
const COUNT = await script(
  "count",
  `
let n = 0;
setInterval(() => console.error("tick " + ++n), 50);
Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
console.error("ready");
`,
);

/** Ignores SIGTERM: only SIGKILL ends it. */
const STUBBORN = await script(
  "stubborn",
  `
Deno.addSignalListener("SIGTERM", () => console.error("ignoring SIGTERM"));
setInterval(() => {}, 1000);
console.error("ready");
`,
);

/** Writes a last line without a newline and a line with CRLF. */
const PARTIAL = await script(
  "partial",
  `
await Deno.stdout.write(new TextEncoder().encode("crlf line\\r\\nno newline at the end"));
`,
);

Deno.test("output collects stdout and stderr as text and as lines; args, env and cwd reach the process", async () => {
  await using runner = await KopfRunner.start(["run", "-A", "x.ts"], {
    cli: ECHO,
    kubeconfig: "/some/kubeconfig",
    env: { EXTRA: "yes", KUBECONFIG: "/overridden" },
    cwd: scripts,
  });
  const status = await runner.exited;
  assert.equal(status.code, 0);
  assert.equal(runner.exitCode, 0);
  assert.equal(runner.error, undefined);
  assert.equal(runner.running, false);
  assert.deepEqual([...runner.lines].sort(), [
    `args ["run","-A","x.ts"]`,
    `cwd ${await Deno.realPath(scripts)}`,
    "err 1",
    "err last",
    "extra yes",
    "kubeconfig /some/kubeconfig",
    "no_color 1",
    "out 1",
  ]);
  assert.equal(runner.output, runner.lines.map((line) => `${line}\n`).join(""));
  assert.equal(runner.stderr, "err 1\nerr last\n");
  assert.ok(runner.stdout.startsWith("out 1\nargs "), runner.stdout);
  // The order within each stream is kept.
  assert.ok(runner.lines.indexOf("err 1") < runner.lines.indexOf("err last"));
  await runner.stop(); // after a successful exit: nothing to signal, nothing to raise
});

Deno.test("a non-zero exit: exitCode, an error with the command and the output's tail; stop() rejects with it", async () => {
  await using runner = await KopfRunner.start(["7"], { cli: ECHO });
  await runner.exited;
  assert.equal(runner.exitCode, 7);
  assert.ok(runner.error instanceof KopfRunnerError);
  assert.equal(runner.error.exitCode, 7);
  assert.equal(runner.error.signal, null);
  assert.equal(runner.error.killed, false);
  assert.equal(runner.error.output, runner.output);
  assert.match(runner.error.message, /^kopf 7 exited with code 7\. Last lines of its output:\n/);
  assert.ok(runner.error.message.endsWith(`\n${runner.lines.at(-1)}`), runner.error.message);
  await assert.rejects(runner.stop(), (error) => error === runner.error);
  await assert.rejects(runner.stop(), (error) => error === runner.error); // every explicit stop()
  // Disposal at the end of the block does not raise it a third time.
});

Deno.test("reraise: false — stop() resolves after a non-zero exit, and error still tells it", async () => {
  await using runner = await KopfRunner.start(["3"], { cli: ECHO, reraise: false });
  await runner.exited; // stopping at once would end it by SIGTERM before it exits by itself
  await runner.stop();
  assert.equal(runner.exitCode, 3);
  assert.match(runner.error?.message ?? "", /exited with code 3/);
  await runner.stop({ reraise: true }).then(() => assert.fail("must reject"), (error) => {
    assert.equal(error, runner.error);
  });
});

Deno.test("await using re-raises the failure when the block did not stop the runner", async () => {
  let runner: KopfRunner | undefined;
  await assert.rejects(
    async () => {
      await using started = await KopfRunner.start(["5"], { cli: ECHO });
      runner = started;
      await started.exited;
    },
    (error) => error instanceof KopfRunnerError && error.exitCode === 5,
  );
  assert.equal(runner?.exitCode, 5);
});

Deno.test("await using: a failure of the block and of the runner both reach the caller", async () => {
  const problem = new Error("the block failed");
  await assert.rejects(
    async () => {
      await using runner = await KopfRunner.start(["4"], { cli: ECHO });
      await runner.exited;
      throw problem;
    },
    (error) => {
      assert.ok(error instanceof SuppressedError);
      assert.ok(error.error instanceof KopfRunnerError && error.error.exitCode === 4);
      assert.equal(error.suppressed, problem);
      return true;
    },
  );
});

Deno.test("ready: start() resolves on the line; the output grows while it runs; stop() sends SIGTERM, exit 0", async () => {
  await using runner = await KopfRunner.start([], { cli: SERVE, ready: "ready" });
  assert.ok(runner.running);
  assert.ok(runner.output.includes("starting\nready\n"), runner.output);
  const before = runner.lines.length;
  assert.equal(await runner.waitFor(/^tick$/g), "tick");
  assert.equal(await runner.waitFor(/^tick$/g), "tick"); // a global regexp keeps no state between lines
  assert.ok(runner.lines.length > before);
  await runner.stop();
  assert.equal(runner.exitCode, 0);
  assert.equal(runner.killed, false);
  assert.equal(runner.error, undefined);
  assert.equal(runner.lines.at(-1), "stopping on SIGTERM");
});

Deno.test("stop() with another signal", async () => {
  await using runner = await KopfRunner.start([], { cli: SERVE, ready: "ready" });
  await runner.stop({ signal: "SIGINT" });
  assert.equal(runner.exitCode, 0);
  assert.equal(runner.lines.at(-1), "stopping on SIGINT");
});

Deno.test("a process ended by a signal it does not handle: the error names the signal", async () => {
  await using runner = await KopfRunner.start([], { cli: STUBBORN, ready: "ready", stopSignal: "SIGINT" });
  await assert.rejects(runner.stop(), /^KopfRunnerError: kopf was ended by SIGINT \(exit code 130\)\./);
  assert.equal(runner.error?.signal, "SIGINT");
  assert.equal(runner.killed, false);
});

Deno.test("stop() kills with SIGKILL after the timeout and records it", async () => {
  await using runner = await KopfRunner.start(["run"], { cli: STUBBORN, ready: "ready", stopTimeout: 0.5 });
  await assert.rejects(
    runner.stop(),
    /^KopfRunnerError: kopf run did not stop within 0\.5 s after SIGTERM and was killed with SIGKILL \(exit code 137\)\./,
  );
  assert.equal(runner.killed, true);
  assert.equal(runner.error?.killed, true);
  assert.equal(runner.error?.signal, "SIGKILL");
  assert.ok(runner.lines.includes("ignoring SIGTERM"), runner.output);
});

Deno.test("ready: the process exits before the line — start() rejects at once with the error and the output", async () => {
  const started = performance.now();
  await assert.rejects(
    KopfRunner.start(["2"], { cli: ECHO, ready: "never printed", readyTimeout: 60 }),
    (error) => {
      assert.ok(error instanceof KopfRunnerError);
      assert.equal(error.exitCode, 2);
      assert.match(error.message, /^kopf 2 exited with code 2\. Last lines of its output:\n/);
      assert.ok(error.output.includes("err last"));
      return true;
    },
  );
  assert.ok(performance.now() - started < 30_000);
});

Deno.test("ready: the process exits with 0 before the line — start() rejects saying so", async () => {
  await assert.rejects(
    KopfRunner.start(["0"], { cli: ECHO, ready: /never printed/ }),
    /^Error: kopf 0 exited with code 0 before printing a line matching \/never printed\/\. Last lines of its output:/,
  );
});

Deno.test("ready: a timeout rejects with the output and stops the process", async () => {
  await assert.rejects(
    KopfRunner.start([], { cli: SERVE, ready: "never printed", readyTimeout: 0.5 }),
    (error) => {
      assert.ok(error instanceof Error);
      assert.match(
        error.message,
        /^Timed out after 0\.5 s waiting for a line containing "never printed" from kopf\. Last lines of its output:\n/,
      );
      assert.match(error.message, /ready/);
      return true;
    },
  );
  // Nothing is left running: the test sanitizers would report the child's pending status op.
});

Deno.test("waitFor: an earlier line, a later line, a timeout, and the exit", async () => {
  await using runner = await KopfRunner.start([], { cli: SERVE, ready: "ready" });
  assert.equal(await runner.waitFor("start"), "starting");
  assert.equal(await runner.waitFor(/TICK/i), "tick");
  await assert.rejects(
    runner.waitFor("never printed", 0.2),
    /^Error: Timed out after 0\.2 s waiting for a line containing "never printed" from kopf\. Last lines of its output:\n(.*\n)*tick$/,
  );
  const pending = runner.waitFor("never printed");
  await runner.stop();
  await assert.rejects(pending, /^Error: kopf exited with code 0 before printing a line containing "never printed"\./);
  await assert.rejects(runner.waitFor("never printed"), /exited with code 0 before printing/);
  assert.equal(await runner.waitFor("stopping"), "stopping on SIGTERM");
});

Deno.test("waitFor with { after }: only a line printed after the mark, not an earlier match", async () => {
  await using runner = await KopfRunner.start([], { cli: COUNT, ready: "ready" });
  await runner.waitFor("tick 2");
  const mark = runner.lines.length;
  assert.equal(await runner.waitFor(/^tick \d+$/), "tick 1", "without after: the first match, printed earlier");
  const next = await runner.waitFor(/^tick \d+$/, 60, { after: mark });
  // Every line is unique ("tick N" counts up): the line found is one printed after the mark.
  assert.ok(runner.lines.indexOf(next) >= mark, `${next} is line ${runner.lines.indexOf(next)}, the mark ${mark}`);
  await assert.rejects(
    runner.waitFor("ready", 0.3, { after: mark }),
    new RegExp(`^Error: Timed out after 0\\.3 s waiting for a line containing "ready" after the first ${mark} lines`),
  );
  assert.equal(await runner.waitFor("ready", 60, { after: 0 }), "ready");
});

Deno.test("a last line without a newline and CRLF line ends", async () => {
  await using runner = await KopfRunner.start([], { cli: PARTIAL });
  await runner.exited;
  assert.deepEqual(runner.lines, ["crlf line", "no newline at the end"]);
  assert.equal(runner.stdout, "crlf line\r\nno newline at the end");
  assert.equal(runner.output, "crlf line\nno newline at the end\n");
});

Deno.test("a process that cannot start: the error says what was run and where", async () => {
  await assert.rejects(
    KopfRunner.start(["run"], { cli: ECHO, cwd: join(scripts, "no-such-folder") }),
    /^Error: Cannot start kopf run \(.* run .*echo\.ts in .*no-such-folder\): /,
  );
});

Deno.test("the default CLI is the kopf command of this package", async () => {
  await using runner = await KopfRunner.start(["--version"]);
  await runner.exited;
  assert.equal(runner.exitCode, 0, runner.output);
  assert.match(runner.output, /^kopf \d+\.\d+\.\d+$/m);
});

Deno.test("OutputCollector: lines across chunks, multi-byte characters split between chunks, listeners", async () => {
  const bytes = new TextEncoder().encode("ünï");
  const chunks = [
    new TextEncoder().encode("hel"),
    new TextEncoder().encode("lo\r\nwor"),
    new TextEncoder().encode("ld\n"),
    bytes.subarray(0, 1),
    bytes.subarray(1),
    new TextEncoder().encode("\n\nlast"),
  ];
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const output = new OutputCollector();
  const seen: string[] = [];
  const forget = output.onLine((line) => seen.push(line));
  let thrown = 0;
  output.onLine(() => {
    thrown++;
    throw new Error("a broken listener");
  });
  await output.collect(stream, "stderr");
  forget();
  assert.deepEqual(output.lines, ["hello", "world", "ünï", "", "last"]);
  assert.deepEqual(seen, ["hello", "world", "ünï", "", "last"]);
  assert.equal(thrown, 1); // removed after its first failure
  assert.equal(output.stderr, "hello\r\nworld\nünï\n\nlast");
  assert.equal(output.stdout, "");
  assert.equal(output.output, "hello\nworld\nünï\n\nlast\n");
});
