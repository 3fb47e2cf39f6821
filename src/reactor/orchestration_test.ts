import assert from "node:assert/strict";
import { WatchHealth } from "../api/watching.ts";
import type { StopCause } from "../handling/stopping.ts";
import type { Resource } from "../model/resource.ts";
import { Orchestrator, type StreamHandle, type StreamScope } from "./orchestration.ts";

function resource(plural: string, namespaced = true): Resource {
  return {
    group: "x.example",
    version: "v1",
    plural,
    kind: plural,
    singular: plural,
    namespaced,
    preferred: true,
    shortcuts: [],
    categories: [],
    verbs: ["list", "watch", "patch"],
    subresources: [],
  };
}

/** An orchestrator with fake streams that record their starts and stops. */
function fake(): { orchestrator: Orchestrator; log: string[] } {
  const log: string[] = [];
  const orchestrator = new Orchestrator({
    grace: 1,
    start: (scope: StreamScope, instance: number): StreamHandle => {
      const name = `${scope.resource.plural}${scope.namespace ? ` in ${scope.namespace}` : ""}`;
      log.push(`start ${name} #${instance}`);
      return {
        name,
        health: new WatchHealth(60),
        listed: Promise.resolve(),
        stop: (cause: StopCause) => {
          log.push(`stop ${name} ${cause}`);
          return Promise.resolve(name === "leftovers" ? ["ns/obj"] : []);
        },
        rescope: name === "fixed" ? undefined : (cause: StopCause, grace: number) => {
          log.push(`rescope ${name} ${cause} ${grace}`);
          return Promise.resolve();
        },
      };
    },
  });
  return { orchestrator, log };
}

Deno.test("streams follow the desired resources and namespaces; cluster-scoped resources once", async () => {
  const { orchestrator, log } = fake();
  const kex = { resource: resource("kexes"), signature: "a" };
  const nodes = { resource: resource("nodes", false), signature: "b" };
  const started = await orchestrator.update({ resources: [kex, nodes], namespaces: ["ns1", "ns2"] });
  assert.deepEqual(started.map((stream) => stream.name), ["kexes in ns1", "kexes in ns2", "nodes"]);
  assert.deepEqual([...orchestrator.streams.keys()], ["kexes in ns1", "kexes in ns2", "nodes"]);

  log.length = 0;
  await orchestrator.update({ namespaces: ["ns2", "ns3"] });
  assert.deepEqual(log, ["stop kexes in ns1 operatorPausing", "start kexes in ns3 #1"]);

  log.length = 0;
  await orchestrator.update({ resources: [{ ...kex, signature: "a2" }] });
  assert.deepEqual(log.sort(), [
    "start kexes in ns2 #2",
    "start kexes in ns3 #2",
    "stop kexes in ns2 operatorPausing",
    "stop kexes in ns3 operatorPausing",
    "stop nodes operatorPausing",
  ], "changed handlers restart the streams; gone resources stop");

  log.length = 0;
  await orchestrator.update({ namespaces: null });
  assert.deepEqual(log.sort(), [
    "start kexes #1",
    "stop kexes in ns2 operatorPausing",
    "stop kexes in ns3 operatorPausing",
  ]);
});

Deno.test("pause stops all streams and keeps the desired state; resume starts them again; close ends all", async () => {
  const { orchestrator, log } = fake();
  await orchestrator.update({ resources: [{ resource: resource("kexes"), signature: "" }], namespaces: ["ns1"] });
  await orchestrator.pause();
  assert.equal(orchestrator.paused, true);
  assert.equal(orchestrator.streams.size, 0);
  await orchestrator.update({ namespaces: ["ns1", "ns2"] }); // remembered while paused
  assert.equal(orchestrator.streams.size, 0);
  const resumed = await orchestrator.resume();
  assert.deepEqual(resumed.map((stream) => stream.name), ["kexes in ns1", "kexes in ns2"]);
  await orchestrator.update({ resources: [{ resource: resource("leftovers", false), signature: "" }] });
  const left = await orchestrator.close("operatorExiting");
  assert.deepEqual(left, ["ns/obj"]);
  assert.equal(orchestrator.streams.size, 0);
  await orchestrator.update({ namespaces: ["ns3"] });
  assert.equal(orchestrator.streams.size, 0, "nothing starts after closing");
  assert.deepEqual(log, [
    "start kexes in ns1 #1",
    "stop kexes in ns1 operatorPausing",
    "start kexes in ns1 #2",
    "start kexes in ns2 #1",
    "stop kexes in ns1 operatorPausing",
    "stop kexes in ns2 operatorPausing",
    "start leftovers #1",
    "stop leftovers operatorExiting",
  ]);
});

Deno.test("a new partition goes to the running streams; one that cannot take it restarts; none serves nothing", async () => {
  const { orchestrator, log } = fake();
  await orchestrator.update({ partition: "" });
  await orchestrator.update({
    resources: [{ resource: resource("kexes"), signature: "" }, { resource: resource("fixed", false), signature: "" }],
    namespaces: ["ns1"],
  });
  assert.deepEqual(log, [], "no partition yet: no streams");
  await orchestrator.update({ partition: "p1" });
  assert.deepEqual(log.splice(0), ["start kexes in ns1 #1", "start fixed #1"]);
  await orchestrator.update({ partition: "p2" });
  assert.deepEqual(log.splice(0).sort(), [
    "rescope kexes in ns1 operatorPausing 1",
    "start fixed #2",
    "stop fixed operatorPausing",
  ]);
  await orchestrator.update({ partition: "p2", namespaces: ["ns1", "ns2"] });
  assert.deepEqual(log.splice(0), ["start kexes in ns2 #1"], "the same partition: nothing rescoped");
  await orchestrator.update({ partition: "" });
  assert.deepEqual(log.splice(0).sort(), [
    "stop fixed operatorPausing",
    "stop kexes in ns1 operatorPausing",
    "stop kexes in ns2 operatorPausing",
  ]);
});
