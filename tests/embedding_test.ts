/**
 * Embedding: operators run inside any Deno program — also one that just
 * awaits `kopf.operator()` at its top level and ends by itself after SIGINT — stop by their
 * signal, and several of them with their own registries share one process without seeing each
 * other's handlers.
 */

import assert from "node:assert/strict";
import { getConfig, reset } from "@logtape/logtape";
import * as kopf from "@kopf/kopf";
import { KopfRunner } from "../testing.ts";
import { createExample, freshNamespace, getExample, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";
import { EventProbe } from "./support/probe.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const PROGRAM = new URL("./fixtures/embedding/program.ts", import.meta.url);

Deno.test("two operators with their own registries in one process each handle only their own objects", async () => {
  const { client } = await testCluster();
  const [a, b] = [await freshNamespace(client, "emb"), await freshNamespace(client, "emb")];
  const calls: string[] = [];
  const registries = [new kopf.Registry(), new kopf.Registry()];
  for (const [index, registry] of registries.entries()) {
    const label = index === 0 ? "first" : "second";
    kopf.on.create("kopfexamples", { registry, id: "created" }, function created({ namespace, name }) {
      calls.push(`${label} ${namespace === a ? "a" : "b"}/${name}`);
      return label;
    });
  }
  const probes = registries.map((registry) => new EventProbe(registry));
  const operators = [await runOperator(registries[0], a), await runOperator(registries[1], b)];
  try {
    await createExample(client, a, "x");
    await createExample(client, b, "y");
    for (const [namespace, name, label] of [[a, "x", "first"], [b, "y", "second"]]) {
      await eventually(`${name} handled`, async () => {
        return ((await getExample(client, namespace, name)).status as Record<string, unknown> | undefined)?.created ===
            label || undefined;
      });
    }
    await probes[0].caughtUp(a, "x");
    await probes[1].caughtUp(b, "y");
    assert.deepEqual(calls.sort(), ["first a/x", "second b/y"]);
  } finally {
    for (const operator of operators) await operator.stop();
  }
});

Deno.test("two operators started at once in a process without logging configured both come up, handle objects and stop; one's stop leaves the other's logging", async () => {
  const { client } = await testCluster();
  const [a, b] = [await freshNamespace(client, "emb-twin"), await freshNamespace(client, "emb-twin")];
  const registries = [new kopf.Registry(), new kopf.Registry()];
  for (const [index, registry] of registries.entries()) {
    kopf.on.create("kopfexamples", { registry, id: "created" }, () => index === 0 ? "first" : "second");
  }
  // As in a fresh program: nothing configured, so each operator configures the default logging — at the same moment.
  await reset();
  const operators = await Promise.all([runOperator(registries[0], a), runOperator(registries[1], b)]);
  const stopped = [false, false];
  try {
    const handled = async (namespace: string, name: string, label: string) => {
      await createExample(client, namespace, name);
      await eventually(`${name} handled`, async () => {
        const status = (await getExample(client, namespace, name)).status as Record<string, unknown> | undefined;
        return status?.created === label || undefined;
      });
    };
    await Promise.all([handled(a, "x", "first"), handled(b, "y", "second")]);
    await operators[0].stop();
    stopped[0] = true;
    assert.notEqual(getConfig(), null, "the logging stays configured for the operator still running");
    await handled(b, "z", "second");
    await operators[1].stop();
    stopped[1] = true;
  } finally {
    for (const [index, operator] of operators.entries()) if (!stopped[index]) await operator.stop();
  }
});

Deno.test("an embedded operator handles objects; its `ready` comes only after its startup handlers, and its signal stops it", async () => {
  const { client, credentials } = await testCluster();
  const namespace = await freshNamespace(client, "emb");
  const registry = new kopf.Registry();
  const order: string[] = [];
  kopf.on.startup({ registry }, async function prepare() {
    await kopf.sleep(0.5);
    order.push("startup");
  });
  kopf.on.create("kopfexamples", { registry }, function createFn({ name }) {
    order.push(`created ${name}`);
    return { embedded: true };
  });
  const controller = new AbortController();
  const done = kopf.operator({
    registry,
    credentials,
    namespaces: [namespace],
    standalone: true,
    signal: controller.signal,
    ready: () => order.push("ready"),
  });
  await eventually("readiness", () => order.includes("ready") || undefined);
  await createExample(client, namespace, "e1");
  await eventually("e1 handled", async () => {
    return ((await getExample(client, namespace, "e1")).status as Record<string, unknown> | undefined)?.createFn;
  });
  controller.abort();
  await done;
  assert.deepEqual(order, ["startup", "ready", "created e1"]);
});

Deno.test("a program that awaits kopf.operator() at its top level handles objects; on SIGINT the operator returns and the program ends by itself, exit 0", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "emb-program");
  // KopfRunner runs any Deno module: here the program instead of the kopf command. A stop not
  // done within 60 s ends in SIGKILL (program.killed) — a bound for a hang, not a timing.
  await using program = await KopfRunner.start([], {
    cli: PROGRAM,
    kubeconfig,
    cwd: ROOT,
    env: { KOPF_TEST_NAMESPACE: namespace },
    ready: "The program starts its operator.",
    stopTimeout: 60,
  });
  await createExample(client, namespace, "p1");
  const status = await eventually("p1 handled", async () => {
    return ((await getExample(client, namespace, "p1")).status as Record<string, unknown> | undefined)?.createFn;
  });
  assert.deepEqual(status, { embedded: true });
  await program.stop({ signal: "SIGINT" }); // Ctrl-C
  assert.equal(program.killed, false, program.output);
  assert.equal(program.exitCode, 0, program.output);
  const lines = program.lines;
  assert.ok(lines.includes("Handled p1."), program.output);
  assert.equal(lines.at(-1), "The operator has returned to the program.", program.output);
});
