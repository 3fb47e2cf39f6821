/**
 * The operator's log lines in a test: configured in plain format into an array the test reads.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

/** Sends the operator's log lines (plain format, `debug` and up) into the returned array, for one test. */
export async function captureLogs(): Promise<string[]> {
  const lines: string[] = [];
  await kopf.configureLogging({ format: "plain", level: "debug", write: (line) => lines.push(line) });
  return lines;
}
