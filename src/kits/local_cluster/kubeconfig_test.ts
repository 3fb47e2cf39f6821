import assert from "node:assert/strict";
import { parse } from "yaml";
import { CONTEXT_NAME, renderKubeconfig, renderTokenFile } from "./kubeconfig.ts";

Deno.test("renderKubeconfig is YAML with one context, the CA inline and the token", () => {
  const caCert = "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n";
  const config = parse(renderKubeconfig({ server: "https://127.0.0.1:1234", caCert, token: "t0k" }));
  assert.equal(config["current-context"], CONTEXT_NAME);
  assert.equal(config.clusters[0].cluster.server, "https://127.0.0.1:1234");
  assert.equal(atob(config.clusters[0].cluster["certificate-authority-data"]), caCert);
  assert.equal(config.users[0].user.token, "t0k");
  assert.equal(config.contexts[0].context.cluster, config.clusters[0].name);
  assert.equal(config.contexts[0].context.user, config.users[0].name);
});

Deno.test("renderTokenFile makes the token a system:masters member", () => {
  assert.equal(renderTokenFile("t0k"), 't0k,kopf-admin,kopf-admin,"system:masters"\n');
});
