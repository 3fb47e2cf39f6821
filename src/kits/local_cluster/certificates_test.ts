import assert from "node:assert/strict";
import { createServiceAccountKeys, createServingCertificates } from "./certificates.ts";

Deno.test("the serving certificate is trusted via its CA for 127.0.0.1 and localhost", async () => {
  const { caCert, cert, key } = await createServingCertificates();
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert, key, onListen: () => {} },
    () => new Response("hello"),
  );
  using client = Deno.createHttpClient({ caCerts: [caCert] });
  for (const host of ["127.0.0.1", "localhost"]) {
    const response = await fetch(`https://${host}:${server.addr.port}/`, { client });
    assert.equal(await response.text(), "hello");
  }
});

Deno.test("a server certificate from another CA is not trusted", async () => {
  const { cert, key } = await createServingCertificates();
  const other = await createServingCertificates();
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert, key, onListen: () => {} },
    () => new Response("hello"),
  );
  using client = Deno.createHttpClient({ caCerts: [other.caCert] });
  await assert.rejects(fetch(`https://127.0.0.1:${server.addr.port}/`, { client }));
});

Deno.test("service-account keys are PKCS#8 and SPKI PEM", async () => {
  const { privateKey, publicKey } = await createServiceAccountKeys();
  assert.match(privateKey, /^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n$/);
  assert.match(publicKey, /^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/);
});
