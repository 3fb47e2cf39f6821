import assert from "node:assert/strict";
import type { Logger } from "@logtape/logtape";
import { FailureReports } from "./failure_reports.ts";

function recorder(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (message: string) => lines.push(`${level} ${message}`);
  const logger = { debug: at("debug"), info: at("info"), warn: at("warning"), error: at("error") } as unknown as Logger;
  return { logger, lines };
}

const note = { level: "warning" as const, message: "failed", properties: {} };

Deno.test("a repeated failure is logged in full once, then summarised at most once per interval", () => {
  const { logger, lines } = recorder();
  const reports = new FailureReports({ logger, interval: () => 60 });
  for (let second = 0; second < 130; second++) reports.failed(note, second === 0, second * 1000);
  const logged = lines.filter((line) => !line.startsWith("debug"));
  assert.equal(logged.length, 3, logged.join("\n"));
  assert.equal(logged[0], "warning failed");
  assert.match(logged[1], /^warning failed \(repeated \{repeats\} times/);
  assert.equal(lines.length, 130, "the others at debug level");
});

Deno.test("a recovery is logged once, and the next failure is logged in full again", () => {
  const { logger, lines } = recorder();
  const reports = new FailureReports({ logger, interval: () => 60 });
  reports.recovered("works again", {}, 0);
  assert.deepEqual(lines, [], "nothing to recover from");
  reports.failed({ ...note, level: "error" }, true, 0);
  reports.recovered("works again", {}, 1000);
  reports.failed(note, false, 2000);
  assert.deepEqual(lines, ["error failed", "info works again", "warning failed"]);
});

Deno.test("a failure graver than what its run has told is logged at once, not summarised later", () => {
  const { logger, lines } = recorder();
  const reports = new FailureReports({ logger, interval: () => 60 });
  reports.failed({ ...note, level: "info", message: "asked to wait" }, true, 0);
  reports.failed({ ...note, level: "info", message: "asked to wait" }, false, 1000);
  reports.failed(note, false, 2000);
  reports.failed(note, false, 3000);
  assert.deepEqual(lines.filter((line) => !line.startsWith("debug")), [
    "info asked to wait",
    "warning failed (repeated {repeats} times in {seconds} s; failing since {since})",
  ]);
});
