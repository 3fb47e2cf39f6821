import assert from "node:assert/strict";
import { Settings } from "../settings/settings.ts";
import { Activation, type ActivationOptions } from "./activation.ts";

Deno.test("a standalone operator without leader election never asks for its identity", async () => {
  const settings = new Settings();
  settings.peering.standalone = true;
  let asked = 0;
  const activation = await Activation.start({
    // Neither is touched without peering, leader election and sharding: the test would fail on any use.
    client: undefined as unknown as ActivationOptions["client"],
    orchestrator: undefined as unknown as ActivationOptions["orchestrator"],
    settings,
    identity: () => {
      asked++;
      return "ann@box/20240501120000/aaa";
    },
    namespaces: [],
    signal: new AbortController().signal,
  });
  assert.equal(activation.gate, undefined);
  await activation.close();
  assert.equal(asked, 0);
});
