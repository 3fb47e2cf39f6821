/**
 * The operator's log lines in a test: configured in plain format into an array the test reads.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

/**
 * Sends the operator's log lines (`debug` and up; `full` adds time, logger and level) into the returned
 * array, for one test.
 */
export async function captureLogs(format: "plain" | "full" = "plain"): Promise<string[]> {
  const lines: string[] = [];
  await kopf.configureLogging({ format, level: "debug", write: (line) => lines.push(line) });
  return lines;
}
