import assert from "node:assert/strict";
import { loginWithServiceAccount } from "./login.ts";

const root = await Deno.makeTempDir({ prefix: "kopf-sa-" });
await Deno.writeTextFile(`${root}/token`, "a-token");
await Deno.writeTextFile(`${root}/namespace`, "default");
await Deno.writeTextFile(`${root}/ca.crt`, "not a certificate");

Deno.test({
  name: "in a pod without --allow-read of the service account's folder, the login fails naming the flag",
  permissions: { env: true, read: false },
  async fn() {
    Deno.env.set("KUBERNETES_SERVICE_HOST", "10.0.0.1");
    Deno.env.set("KUBERNETES_SERVICE_PORT", "443");
    try {
      await assert.rejects(loginWithServiceAccount({ root }), /--allow-read/);
    } finally {
      Deno.env.delete("KUBERNETES_SERVICE_HOST");
      Deno.env.delete("KUBERNETES_SERVICE_PORT");
    }
  },
});
