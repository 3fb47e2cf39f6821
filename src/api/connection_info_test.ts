import assert from "node:assert/strict";
import { createServingCertificates } from "../kits/local_cluster/certificates.ts";
import { ApiClient } from "./client.ts";
import {
  authorizationOf,
  ConnectionInfo,
  connectionInfoOf,
  credentialsOf,
  encodeBase64,
  fingerprintOf,
} from "./connection_info.ts";
import type { Credentials } from "./credentials.ts";
import { LoginError } from "./login_error.ts";
import { NetworkingSettings } from "../settings/networking.ts";

const SERVER = "https://10.0.0.1:6443";

Deno.test("the Authorization header: scheme+token, token alone (Bearer), scheme alone, basic", () => {
  const header = (fields: Partial<ConnectionInfo>) =>
    authorizationOf(new ConnectionInfo({ server: SERVER, ...fields }));
  assert.equal(header({ scheme: "Digest", token: "abc" }), "Digest abc");
  assert.equal(header({ token: "abc" }), "Bearer abc");
  assert.equal(header({ scheme: "Negotiate" }), "Negotiate");
  assert.equal(header({ username: "admin", password: "secret" }), "Basic YWRtaW46c2VjcmV0");
  assert.equal(header({ username: "admin", password: "secret", token: "t" }), "Bearer t", "a token wins");
  assert.equal(header({}), undefined);
});

Deno.test("a path and data for the same item, a bad server, priority or expiration are LoginErrors", () => {
  const make = (fields: Record<string, unknown>) => () => new ConnectionInfo({ server: SERVER, ...fields });
  assert.throws(make({ caPath: "/ca", caData: "x" }), (error: Error) => {
    assert.ok(error instanceof LoginError);
    assert.match(error.message, /both caPath and caData are given; give only one/);
    return true;
  });
  assert.throws(make({ certificatePath: "/c", certificateData: "x" }), LoginError);
  assert.throws(make({ privateKeyPath: "/k", privateKeyData: "x" }), LoginError);
  assert.throws(make({ server: "10.0.0.1:6443" }), /not an http\(s\) URL/);
  assert.throws(make({ priority: "high" }), /priority must be a number/);
  assert.throws(make({ expiration: new Date("never") }), /expiration must be a valid Date/);
});

Deno.test("defaults and trimming: priority 0, no trailing slash, unset fields absent", () => {
  const info = new ConnectionInfo({ server: "https://k:443/", token: "t", caPath: undefined });
  assert.equal(info.server, "https://k:443");
  assert.equal(info.priority, 0);
  assert.deepEqual(Object.keys(info).sort(), ["priority", "server", "token"]);
});

Deno.test("credentials from inline data: base64 PEM decoded, raw PEM tolerated, bad base64 named", async () => {
  const { caCert, cert, key } = await createServingCertificates();
  const info = new ConnectionInfo({
    server: SERVER,
    caData: encodeBase64(caCert),
    certificateData: encodeBase64(cert),
    privateKeyData: key,
    defaultNamespace: "ns",
  });
  const credentials = await credentialsOf(info, "login handler 'x'");
  assert.deepEqual(credentials.tls, { insecure: false, caCerts: [caCert], cert, key });
  assert.equal(credentials.defaultNamespace, "ns");
  assert.equal(credentials.source, "login handler 'x'");
  assert.equal(await credentials.authorization(), undefined);
  assert.equal(credentials.fixedAuthorization, null, "no header, known without a promise");

  const bad = new ConnectionInfo({ server: SERVER, caData: "%%%" });
  await assert.rejects(credentialsOf(bad, "login handler 'x'"), /login handler 'x': the CA data is not base64/);
  const notPem = new ConnectionInfo({ server: SERVER, caData: encodeBase64("hello") });
  await assert.rejects(credentialsOf(notPem, "h"), /the CA data is not PEM/);
  const halfPair = new ConnectionInfo({ server: SERVER, certificateData: encodeBase64(cert) });
  await assert.rejects(credentialsOf(halfPair, "h"), /certificate is given without its private key/);
});

Deno.test("credentials from files: read at conversion; a missing file is named", async () => {
  const { caCert } = await createServingCertificates();
  const path = await Deno.makeTempFile({ suffix: ".crt" });
  try {
    await Deno.writeTextFile(path, caCert);
    const credentials = await credentialsOf(new ConnectionInfo({ server: SERVER, caPath: path, token: "t" }), "h");
    assert.deepEqual(credentials.tls.caCerts, [caCert]);
    assert.equal(await credentials.authorization(), "Bearer t");
    assert.equal(credentials.fixedAuthorization, "Bearer t");
  } finally {
    await Deno.remove(path);
  }
  await assert.rejects(
    credentialsOf(new ConnectionInfo({ server: SERVER, caPath: "/nonexistent/ca.crt" }), "h"),
    /h: the CA file \/nonexistent\/ca\.crt not found/,
  );
});

Deno.test("fingerprints: equal for the same credentials whatever the priority and expiration", () => {
  const a = new ConnectionInfo({ server: SERVER, token: "t", priority: 1 });
  const b = new ConnectionInfo({ token: "t", server: SERVER, priority: 5, expiration: new Date() });
  const c = new ConnectionInfo({ server: SERVER, token: "u" });
  assert.equal(fingerprintOf(a), fingerprintOf(b));
  assert.notEqual(fingerprintOf(a), fingerprintOf(c));
});

Deno.test("an info made from loaded credentials describes them and uses them live", async () => {
  let token = "one";
  const live: Credentials = {
    server: SERVER,
    tls: { insecure: false, caCerts: ["PEM"] },
    defaultNamespace: "space",
    source: "kubeconfig",
    authorization: () => Promise.resolve(`Bearer ${token}`),
    invalidate: () => token = "two",
  };
  const info = await connectionInfoOf(live, 10);
  assert.equal(info.scheme, "Bearer");
  assert.equal(info.token, "one");
  assert.equal(info.caData, encodeBase64("PEM"));
  assert.equal(info.priority, 10);
  assert.equal(info.defaultNamespace, "space");
  assert.equal(await credentialsOf(info, "h"), live);
});

Deno.test("insecure: requests reach a TLS server whose CA nobody trusts; without it they fail", async () => {
  const { cert, key } = await createServingCertificates();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert, key, onListen: () => {} },
    (request) =>
      Response.json({ authorization: request.headers.get("Authorization"), host: request.headers.get("Host") }),
  );
  const url = `https://127.0.0.1:${server.addr.port}`;
  try {
    const insecure = await credentialsOf(new ConnectionInfo({ server: url, token: "t", insecure: true }), "h");
    {
      using client = new ApiClient(insecure);
      const answers = await Promise.all([1, 2, 3].map(() => client.request({ path: "/version" })));
      for (const answer of answers) {
        assert.deepEqual(answer, { authorization: "Bearer t", host: `127.0.0.1:${server.addr.port}` });
      }
    }
    const verified = await credentialsOf(new ConnectionInfo({ server: url, token: "t" }), "h");
    const networking = Object.assign(new NetworkingSettings(), { errorBackoffs: [] });
    using client = new ApiClient(verified, { networking });
    await assert.rejects(client.request({ path: "/version" }), /could not reach the API server/);
  } finally {
    await server.shutdown();
  }
});
