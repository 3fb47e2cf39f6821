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

/**
 * The listings of a collection (its path, e.g. `/api/v1/namespaces/ns/configmaps`) in captured log
 * lines: its LIST requests and its watch requests that stream a listing as their first events.
 */
export function listingsOf(lines: string[], collection: string): string[] {
  return lines.filter((line) =>
    line.includes(`Sending GET ${collection}?`) &&
    (!line.includes("watch=true") || line.includes("sendInitialEvents=true"))
  );
}
