import assert from "node:assert/strict";
import { base64, type WebhookClientConfig, type WebhookFn } from "../model/admission.ts";
import { createSelfSignedCertificates } from "./certificates.ts";
import {
  WebhookDockerDesktopServer,
  WebhookK3dServer,
  WebhookMinikubeServer,
  WebhookServer,
} from "./webhook_server.ts";

const echo: WebhookFn = (review, options) =>
  Promise.resolve(
    { kind: "AdmissionReview", response: { uid: String(options?.webhook), allowed: true, review } } as never,
  );

/** Starts a server, hands its first client config to `body`, and stops it. */
async function serving(server: WebhookServer, body: (config: WebhookClientConfig) => Promise<void>): Promise<void> {
  const stop = new AbortController();
  const iterator = server.serve(echo, stop.signal)[Symbol.asyncIterator]();
  const first = await iterator.next();
  try {
    await body(first.value as WebhookClientConfig);
  } finally {
    stop.abort();
    assert.equal((await iterator.next()).done, true, "the server ends when stopped");
  }
}

Deno.test("the reported host: host, else localhost, 127.0.0.1 or ::1 for unspecified addresses, else addr", () => {
  assert.equal(new WebhookServer().host, "localhost");
  assert.equal(new WebhookServer({ addr: "0.0.0.0" }).host, "127.0.0.1");
  assert.equal(new WebhookServer({ addr: "::" }).host, "::1");
  assert.equal(new WebhookServer({ addr: "10.1.2.3" }).host, "10.1.2.3");
  assert.equal(new WebhookServer({ addr: "0.0.0.0", host: "op.example" }).host, "op.example");
});

Deno.test("WebhookServer refuses inconsistent options", () => {
  assert.throws(() => new WebhookServer({ certfile: "c.pem" }), /both certfile and pkeyfile/);
  assert.throws(() => new WebhookServer({ insecure: true, cafile: "ca.pem" }), /insecure/);
  assert.throws(() => new WebhookServer({ port: 70000 }), /port must be/);
});

Deno.test("insecure: plain HTTP under a path prefix; the id follows the prefix", async () => {
  await serving(new WebhookServer({ addr: "127.0.0.1", insecure: true, path: "/hooks/" }), async (config) => {
    assert.match(config.url!, /^http:\/\/127\.0\.0\.1:\d+\/hooks$/);
    assert.equal(config.caBundle, undefined);
    const answer = await fetch(`${config.url}/my%2Fid`, { method: "POST", body: "{}" });
    assert.equal((await answer.json()).response.uid, "my/id");
    const all = await fetch(`${config.url}`, { method: "POST", body: "{}" });
    assert.equal((await all.json()).response.uid, "undefined", "no id: all handlers");
    const outside = await fetch(config.url!.replace("/hooks", "/other"), { method: "POST", body: "{}" });
    assert.equal(outside.status, 404);
    await outside.body?.cancel();
  });
});

Deno.test("given certificate files: served as is; the caBundle is the cafile, none without it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { ca, cert, key } = await createSelfSignedCertificates(["localhost", "127.0.0.1"]);
    await Deno.writeTextFile(`${dir}/ca.pem`, ca);
    await Deno.writeTextFile(`${dir}/cert.pem`, cert);
    await Deno.writeTextFile(`${dir}/key.pem`, key);
    const files = { certfile: `${dir}/cert.pem`, pkeyfile: `${dir}/key.pem` };
    await serving(new WebhookServer({ addr: "127.0.0.1", ...files }), (config) => {
      assert.equal(config.caBundle, undefined, "assumed to be in the default trust chain");
      return Promise.resolve();
    });
    const server = new WebhookServer({
      addr: "127.0.0.1",
      ...files,
      cafile: `${dir}/ca.pem`,
      cadump: `${dir}/dump.pem`,
    });
    await serving(server, async (config) => {
      assert.equal(config.caBundle, base64(ca));
      assert.equal(await Deno.readTextFile(`${dir}/dump.pem`), ca);
      assert.equal(server.url, config.url);
      const http = Deno.createHttpClient({ caCerts: [ca] });
      try {
        const answer = await fetch(`${config.url}/x`, { method: "POST", body: "{}", client: http });
        assert.equal(answer.status, 200);
        await answer.body?.cancel();
      } finally {
        http.close();
      }
    });
    assert.equal(server.url, undefined, "no URL once stopped");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dev servers name the host that their clusters reach the host machine by", async () => {
  assert.equal(new WebhookK3dServer().host, "host.k3d.internal");
  assert.equal(new WebhookMinikubeServer().host, "host.minikube.internal");
  assert.equal(new WebhookDockerDesktopServer().host, "host.docker.internal");
  assert.equal(new WebhookK3dServer({ host: "other" }).host, "other");
  await serving(new WebhookK3dServer({ addr: "127.0.0.1" }), (config) => {
    assert.match(config.url!, /^https:\/\/host\.k3d\.internal:\d+$/);
    assert.ok(config.caBundle);
    return Promise.resolve();
  });
});
