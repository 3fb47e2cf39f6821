import assert from "node:assert/strict";
import { resourceOfPath } from "./request_labels.ts";

Deno.test("requests are counted under the resource their path addresses", () => {
  assert.equal(resourceOfPath("/api/v1/namespaces/ns/pods/x/status"), "pods/status");
  assert.equal(resourceOfPath("/api/v1/pods"), "pods");
  assert.equal(resourceOfPath("/apis/kopf.dev/v1/namespaces/ns/kopfexamples"), "kopfexamples");
  assert.equal(resourceOfPath("/api/v1/namespaces"), "namespaces");
  assert.equal(resourceOfPath("/api/v1/namespaces/x"), "namespaces");
  assert.equal(resourceOfPath("/apis"), "/apis");
  assert.equal(resourceOfPath("/version"), "/version");
});
