import assert from "node:assert/strict";
import { diagnoseTls } from "./tls_diagnosis.ts";

function fetchFailure(reason: string): Error {
  const inner = new Error(`client error (Connect): invalid peer certificate: ${reason}`);
  return new TypeError("fetch failed: error sending request", { cause: inner });
}

const SERVER = "https://127.0.0.1:6443";
const SOURCE = `kubeconfig /k (context "c")`;

Deno.test("a certificate from another CA is diagnosed with what to do", () => {
  const diagnosis = diagnoseTls(fetchFailure("UnknownIssuer"), SERVER, SOURCE);
  assert.equal(diagnosis?.kind, "unknown-issuer");
  assert.match(diagnosis!.message, /not signed by the CA that kubeconfig \/k/);
  assert.match(diagnosis!.message, /certificate-authority-data/);
});

Deno.test("a hostname mismatch, an expired and a not-yet-valid certificate are told apart", () => {
  assert.equal(diagnoseTls(fetchFailure("NotValidForName"), SERVER, SOURCE)?.kind, "hostname-mismatch");
  assert.match(diagnoseTls(fetchFailure("NotValidForName"), SERVER, SOURCE)!.message, /tls-server-name/);
  assert.equal(diagnoseTls(fetchFailure("Expired"), SERVER, SOURCE)?.kind, "expired");
  assert.equal(diagnoseTls(fetchFailure("ExpiredContext { time: 1 }"), SERVER, SOURCE)?.kind, "expired");
  assert.equal(diagnoseTls(fetchFailure("NotValidYet"), SERVER, SOURCE)?.kind, "not-yet-valid");
  assert.equal(diagnoseTls(fetchFailure("Revoked"), SERVER, SOURCE)?.kind, "invalid");
});

Deno.test("other network failures are not certificate problems", () => {
  assert.equal(diagnoseTls(new Error("Connection refused (os error 111)"), SERVER, SOURCE), undefined);
  assert.equal(diagnoseTls("timeout", SERVER, SOURCE), undefined);
});
