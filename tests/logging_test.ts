/**
 * Logging of `kopf run` as users see it: verbosity flags, the plain format without the object
 * prefix, exactly which lines a successful creation logs, and that those lines are not posted as
 * Kubernetes Events by default.
 */

import assert from "node:assert/strict";
import { EVENTS } from "../src/api/events.ts";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesList } from "../src/model/body.ts";
import { createExample, freshNamespace, getExample, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { KopfProcess } from "./support/kopf_process.ts";

const HANDLERS = "tests/fixtures/logging_handlers.ts";

interface Run {
  namespace: string;
  uid: string;
  lines: string[];
}

/**
 * Runs `kopf run <flags> logging_handlers.ts` in a fresh namespace, creates one object, waits
 * until it is handled, and stops the operator with SIGTERM.
 */
async function runOnce(flags: string[], name = "kex"): Promise<Run> {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "logging");
  const kopf = await KopfProcess.start(namespace, [...flags, HANDLERS]);
  let uid: string;
  try {
    uid = (await createExample(client, namespace, name)).metadata.uid!;
    await eventually("status.createFn", async () => {
      const body = await getExample(client, namespace, name);
      return (body.status as Record<string, unknown> | undefined)?.createFn;
    });
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the echo of the operator's own patch
  } finally {
    await kopf.stop("SIGTERM");
  }
  const status = await kopf.exited;
  assert.equal(status.code, 0, kopf.output);
  return { namespace, uid, lines: kopf.lines };
}

Deno.test("no flags: INFO lines and no [DEBUG lines", async () => {
  const { lines } = await runOnce([]);
  const text = lines.join("\n");
  assert.ok(lines.some((line) => line.includes("[INFO")), text);
  assert.deepEqual(lines.filter((line) => line.includes("[DEBUG")), []);
});

Deno.test("-v: [DEBUG lines appear", async () => {
  const { lines } = await runOnce(["-v"]);
  assert.ok(lines.some((line) => line.includes("[DEBUG")), lines.join("\n"));
  assert.ok(lines.some((line) => line.includes("[INFO")), lines.join("\n"));
});

Deno.test("-q: no [INFO lines", async () => {
  const { lines } = await runOnce(["-q"]);
  assert.deepEqual(lines.filter((line) => line.includes("[INFO") || line.includes("[DEBUG")), []);
});

Deno.test("--log-format plain: [ns/name] prefixes by default, none with --no-log-prefix", async () => {
  const prefixed = await runOnce(["--log-format", "plain"]);
  assert.ok(
    prefixed.lines.includes(`[${prefixed.namespace}/kex] Handler 'createFn' succeeded.`),
    prefixed.lines.join("\n"),
  );

  const bare = await runOnce(["--log-format", "plain", "--no-log-prefix"]);
  const text = bare.lines.join("\n");
  assert.ok(bare.lines.includes("Handler 'createFn' succeeded."), text);
  assert.ok(bare.lines.includes("Creation is processed: 1 succeeded; 0 failed."), text);
  assert.deepEqual(bare.lines.filter((line) => line.includes(`[${bare.namespace}/`)), []);
  assert.deepEqual(bare.lines.filter((line) => /^\[\d{4}-/.test(line)), [], "plain: no timestamps");
});

Deno.test("a successful creation logs exactly two INFO lines, and no Event is posted for them", async () => {
  const { client } = await testCluster();
  const { namespace, lines } = await runOnce([], "single");
  const prefix = `[${namespace}/single] `;
  const about = lines.filter((line) => line.includes("[INFO") && line.includes(prefix));
  assert.deepEqual(
    about.map((line) => line.slice(line.indexOf(prefix) + prefix.length)),
    ["Handler 'createFn' succeeded.", "Creation is processed: 1 succeeded; 0 failed."],
    lines.join("\n"),
  );
  // settings.posting.loggers is off by default (Kopf 1.44): log lines are not posted as Events.
  const events = await client.request<KubernetesList>({ path: resourcePath(EVENTS, { namespace }) });
  assert.deepEqual(events.items.map((event) => `${event.reason}: ${event.message}`), []);
});
