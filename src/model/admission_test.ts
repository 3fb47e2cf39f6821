import assert from "node:assert/strict";
import { Patch } from "./patch.ts";
import { base64, buildResponse, jsonPatchFor, parseReview, WebhookError, webhookName } from "./admission.ts";

const REQUEST = {
  uid: "u1",
  operation: "UPDATE",
  userInfo: { username: "admin" },
  resource: { group: "kopf.dev", version: "v1", resource: "kopfexamples" },
  object: { metadata: { name: "new" } },
  oldObject: { metadata: { name: "old" } },
};

Deno.test("parseReview accepts a review and normalizes the request", () => {
  const { review, request } = parseReview({ apiVersion: "admission.k8s.io/v1beta1", request: { ...REQUEST } });
  assert.equal(review.apiVersion, "admission.k8s.io/v1beta1");
  assert.equal(request.uid, "u1");
  assert.equal(request.dryRun, false);
  assert.equal(request.subResource, undefined);
  assert.deepEqual(request.resource, { group: "kopf.dev", version: "v1", resource: "kopfexamples" });
  const core = parseReview({ request: { ...REQUEST, resource: { version: "v1", resource: "pods" }, object: {} } });
  assert.equal(core.request.resource.group, "");
  assert.deepEqual(core.request.object, { metadata: {} }, "an object without metadata gets an empty one");
});

Deno.test("parseReview refuses malformed reviews with 400 and a reason", () => {
  const cases: [unknown, RegExp][] = [
    [null, /JSON object/],
    ["text", /JSON object/],
    [[], /JSON object/],
    [{ kind: "Pod", request: REQUEST }, /kind must be AdmissionReview/],
    [{ apiVersion: 1, request: REQUEST }, /apiVersion must be a string/],
    [{}, /no request/],
    [{ request: [] }, /no request/],
    [{ request: { ...REQUEST, uid: "" } }, /no uid/],
    [{ request: { ...REQUEST, resource: "kopfexamples" } }, /no resource/],
    [{ request: { ...REQUEST, operation: "PATCH" } }, /operation must be one of/],
    [{ request: { ...REQUEST, subResource: 5 } }, /subResource must be a string/],
    [{ request: { ...REQUEST, userInfo: null } }, /User info is missing/],
    [{ request: { ...REQUEST, object: null, oldObject: undefined } }, /old or new object is missing/],
    [{ request: { ...REQUEST, object: "x" } }, /object must be a Kubernetes object/],
    [{ request: { ...REQUEST, oldObject: { metadata: [] } } }, /oldObject must be a Kubernetes object/],
  ];
  for (const [input, reason] of cases) {
    assert.throws(() => parseReview(input), (error: unknown) => {
      assert.ok(error instanceof WebhookError, `${JSON.stringify(input)}`);
      assert.equal(error.status, 400);
      assert.match(error.message, reason);
      return true;
    });
  }
});

Deno.test("buildResponse: uid, allowed, warnings, base64 JSON patch, status; defaults of apiVersion and kind", () => {
  assert.deepEqual(buildResponse({}, "u", {}), {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: { uid: "u", allowed: true },
  });
  const full = buildResponse({ apiVersion: "admission.k8s.io/v1beta1", kind: "AdmissionReview" }, "u", {
    denial: { code: 400, message: "no" },
    warnings: ["w"],
    jsonPatch: [{ op: "add", path: "/spec", value: { ü: 1 } }],
  });
  assert.equal(full.apiVersion, "admission.k8s.io/v1beta1");
  assert.equal(full.response!.allowed, false);
  assert.deepEqual(full.response!.status, { code: 400, message: "no" });
  assert.deepEqual(full.response!.warnings, ["w"]);
  assert.equal(full.response!.patchType, "JSONPatch");
  const decoded = new TextDecoder().decode(Uint8Array.from(atob(full.response!.patch!), (c) => c.charCodeAt(0)));
  assert.deepEqual(JSON.parse(decoded), [{ op: "add", path: "/spec", value: { ü: 1 } }]);
  assert.equal(base64(""), "");
});

Deno.test("jsonPatchFor: add for absent paths, replace for present ones, remove for null, recursion into mappings", () => {
  const patch = new Patch();
  patch.spec.numbers = [1, 2, 3];
  patch.spec.kept = "new";
  patch.spec.nested = { deeper: { x: 1 }, gone: null };
  patch.spec.absentNull = null;
  patch.metadata.labels["app.kubernetes.io/name"] = "x";
  patch.metadata.labels["a~b"] = "y";
  patch.metadata.annotations.old = null;
  patch.status.fresh = { a: 1, b: null };
  const original = {
    metadata: { name: "n", labels: { other: "1" }, annotations: { old: "1" } },
    spec: { kept: "old", nested: { deeper: 5, gone: 1 } },
  };
  assert.deepEqual(jsonPatchFor(patch, original), [
    { op: "add", path: "/metadata/labels/app.kubernetes.io~1name", value: "x" },
    { op: "add", path: "/metadata/labels/a~0b", value: "y" },
    { op: "remove", path: "/metadata/annotations/old" },
    { op: "add", path: "/spec/numbers", value: [1, 2, 3] },
    { op: "replace", path: "/spec/kept", value: "new" },
    { op: "replace", path: "/spec/nested/deeper", value: { x: 1 } },
    { op: "remove", path: "/spec/nested/gone" },
    { op: "add", path: "/status", value: { fresh: { a: 1 } } },
  ]);
  assert.deepEqual(jsonPatchFor(new Patch(), original), [], "an empty patch is no operations");
  const labelsAbsent = new Patch();
  labelsAbsent.metadata.labels.x = "1";
  assert.deepEqual(jsonPatchFor(labelsAbsent, { metadata: {} }), [
    { op: "add", path: "/metadata/labels", value: { x: "1" } },
  ]);
});

Deno.test("webhookName: DNS-safe handler ids plus the managed name", () => {
  assert.equal(webhookName("check_numbers", "auto.kopf.dev"), "check-numbers.auto.kopf.dev");
  assert.equal(webhookName("checkNumbers", "auto.kopf.dev"), "check-numbers.auto.kopf.dev");
  assert.equal(webhookName("parent/child", "auto.kopf.dev"), "parent.child.auto.kopf.dev");
  assert.equal(webhookName("a b:c", "x.dev"), "ax20bx3ac.x.dev");
  assert.equal(webhookName("HTTPCheck", "x.dev"), "httpcheck.x.dev");
});
