import assert from "node:assert/strict";
import { join } from "node:path";
import { eventually } from "../../../tests/support/eventually.ts";
import { ManagedProcess } from "./processes.ts";
import { waitUntilReady } from "./readiness.ts";

Deno.test("a process's output goes to its log, and its failure quotes the log's tail", async () => {
  const directory = await Deno.makeTempDir();
  try {
    const log = join(directory, "p.log");
    // Go components log to stderr; stdout and stderr are copied separately, so only the order
    // within each stream is kept.
    const script = "echo to-stdout; for i in $(seq 1 50); do echo line-$i >&2; done; exit 3";
    const process = await ManagedProcess.spawn("demo", "sh", ["-c", script], log);
    assert.equal((await process.wait()).code, 3);
    assert.equal(process.running, false);
    const error = await waitUntilReady(process, { url: "http://127.0.0.1:9/" }).then(
      () => assert.fail("must reject"),
      (error: Error) => error,
    );
    assert.match(error.message, /^demo exited with code 3 before it became ready/);
    assert.match(error.message, /\nline-50(\n|$)/);
    assert.doesNotMatch(error.message, /line-20\n/); // only the tail
    const text = await Deno.readTextFile(log);
    assert.match(text, /^line-1$/m);
    assert.match(text, /^to-stdout$/m);
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
});

Deno.test("stop() escalates to SIGKILL when SIGTERM is ignored", async () => {
  const directory = await Deno.makeTempDir();
  try {
    const script = "trap '' TERM; echo ready; while true; do sleep 0.05; done";
    const log = join(directory, "l");
    const process = await ManagedProcess.spawn("stubborn", "sh", ["-c", script], log);
    // The trap must be set before the SIGTERM arrives; the log also proves it is written live.
    await eventually("the trap to be set", async () => (await Deno.readTextFile(log)).includes("ready"), {
      interval: 0.02,
    });
    await process.stop(300);
    assert.equal(process.running, false);
    assert.equal(process.status?.signal, "SIGKILL");
    await process.stop(); // idempotent
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
});

Deno.test("a missing executable is an error naming the component", async () => {
  await assert.rejects(
    ManagedProcess.spawn("ghost", "/nonexistent/ghost", [], "/dev/null"),
    /Cannot start ghost from \/nonexistent\/ghost/,
  );
});
