import assert from "node:assert/strict";
import * as on from "../../on.ts";
import type { ConversionHandler } from "../handling/conversion_handler.ts";
import { Registry } from "../handling/registry.ts";
import { type WebhookClientConfig, WebhookError } from "../model/admission.ts";
import type { JsonObject, KubernetesObject, ObjectMeta } from "../model/body.ts";
import type { ConversionReview } from "../model/conversion_review.ts";
import type { Resource } from "../model/resource.ts";
import { kopfMetrics } from "../observability/metrics.ts";
import { Settings } from "../settings/settings.ts";
import type { ApiClient } from "../api/client.ts";
import { NO_CONVERSION_SERVER_MESSAGE, startAdmission } from "./admission_startup.ts";
import { conversionFn, findChain, resolveTargets } from "./conversion.ts";
import { conversionClientConfig, desiredConversion } from "./crd_conversion.ts";

const WIDGETS: Resource = {
  group: "example.com",
  version: "v2",
  plural: "widgets",
  kind: "Widget",
  singular: "widget",
  namespaced: true,
  preferred: true,
  shortcuts: ["wd"],
  categories: [],
  verbs: ["create", "get", "list", "patch", "watch"],
  subresources: [],
};
const WIDGETS_V1: Resource = { ...WIDGETS, version: "v1", preferred: false };

/** A converter record between two versions, for the chain-finding alone. */
function edge(from: string, to: string, id = `${from}-${to}`): ConversionHandler {
  return { kind: "conversion", id, selector: undefined as never, from, to, fn: (body) => body };
}

function review(desired: string, ...objects: Record<string, unknown>[]): unknown {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: { uid: "r1", desiredAPIVersion: desired, objects },
  };
}

function widget(version: string, spec: JsonObject, metadata: ObjectMeta = {}): KubernetesObject {
  return {
    apiVersion: `example.com/${version}`,
    kind: "Widget",
    metadata: { name: "w", namespace: "ns", uid: "u1", resourceVersion: "7", ...metadata },
    spec,
  };
}

function fnFor(registry: Registry) {
  const targets = resolveTargets(registry.converters, [WIDGETS, WIDGETS_V1]);
  return conversionFn({ targets: () => targets });
}

/** v1 `size: "10Gi"` ⇄ v2 `size: { value: 10, unit: "Gi" }`, and v2 ⇄ v3 which renames `size` to `capacity`. */
function sizes(): Registry {
  const registry = new Registry();
  on.conversion("widgets", { registry, from: "v1", to: "v2" }, (body) => {
    const [, value, unit] = /^(\d+)(\w*)$/.exec(String(body.spec?.size)) ?? [];
    if (value === undefined) throw new Error(`spec.size ${JSON.stringify(body.spec?.size)} is not a size.`);
    return { ...body, spec: { ...body.spec, size: { value: Number(value), unit } } };
  });
  on.conversion("widgets", { registry, from: "v2", to: "v1" }, function v2ToV1(body) {
    const size = body.spec?.size as { value: number; unit: string };
    return { ...body, spec: { ...body.spec, size: `${size.value}${size.unit}` } };
  });
  on.conversion("widgets", { registry, from: "v2", to: "v3" }, function v2ToV3(body) {
    const { size, ...rest } = body.spec ?? {};
    return { ...body, spec: { ...rest, capacity: size } };
  });
  return registry;
}

Deno.test("findChain: direct, chained, the shortest of several, none for unreachable versions, [] for the same", () => {
  const converters = [edge("v1", "v2"), edge("v2", "v3"), edge("v3", "v4"), edge("v1", "v3"), edge("v4", "v1")];
  const ids = (from: string, to: string) => findChain(converters, from, to)?.map((step) => step.id);
  assert.deepEqual(ids("v1", "v2"), ["v1-v2"]);
  assert.deepEqual(ids("v2", "v4"), ["v2-v3", "v3-v4"]);
  assert.deepEqual(ids("v1", "v4"), ["v1-v3", "v3-v4"], "the shortest chain, not the first found");
  assert.deepEqual(ids("v4", "v2"), ["v4-v1", "v1-v2"]);
  assert.deepEqual(ids("v3", "v3"), []);
  assert.equal(ids("v2", "v9"), undefined);
  assert.equal(ids("v9", "v1"), undefined);
  // Of equally short chains, the one through the earliest registered converters.
  const tie = [edge("a", "b"), edge("a", "c"), edge("b", "d"), edge("c", "d")];
  assert.deepEqual(findChain(tie, "a", "d")?.map((step) => step.id), ["a-b", "b-d"]);
});

Deno.test("a review converts every object to the desired version, chaining converters, with apiVersion set", async () => {
  const fn = fnFor(sizes());
  const answer = await fn(
    review("example.com/v3", widget("v1", { size: "10Gi" }), widget("v2", { size: { value: 1, unit: "Ti" } })),
  );
  assert.equal(answer.apiVersion, "apiextensions.k8s.io/v1");
  assert.equal(answer.kind, "ConversionReview");
  assert.equal(answer.response!.uid, "r1");
  assert.deepEqual(answer.response!.result, { status: "Success" });
  assert.deepEqual(
    answer.response!.convertedObjects,
    [
      widget("v3", { capacity: { value: 10, unit: "Gi" } }),
      widget("v3", { capacity: { value: 1, unit: "Ti" } }),
    ].map((object) => ({ ...object, apiVersion: "example.com/v3" })),
  );
  const back = await fn(review("example.com/v1", widget("v2", { size: { value: 5, unit: "Mi" } })));
  assert.deepEqual(back.response!.convertedObjects, [widget("v1", { size: "5Mi" })]);
  const empty = await fn(review("example.com/v1"));
  assert.deepEqual(empty.response, { uid: "r1", convertedObjects: [], result: { status: "Success" } });
});

Deno.test("metadata: labels and annotations changed by converters are kept, any other change is undone", async () => {
  const registry = new Registry();
  on.conversion("widgets", { registry, from: "v1", to: "v2" }, function carry(body) {
    const annotations: Record<string, string> = { ...body.metadata.annotations, "example.com/carried": "yes" };
    delete annotations["example.com/old"];
    return { ...body, kind: "Gadget", metadata: { ...body.metadata, name: "renamed", uid: "x", annotations } };
  });
  const fn = fnFor(registry);
  const original = widget("v1", {}, { annotations: { "example.com/old": "1", keep: "k" }, labels: { a: "b" } });
  const answer = await fn(review("example.com/v2", original));
  assert.deepEqual(answer.response!.convertedObjects, [{
    ...original,
    apiVersion: "example.com/v2",
    metadata: { ...original.metadata, annotations: { keep: "k", "example.com/carried": "yes" } },
  }]);
  assert.deepEqual(original.metadata.annotations, { "example.com/old": "1", keep: "k" }, "converters get a copy");

  // `{ ...undefined }` where there were no annotations is no change: none are added.
  const bare = widget("v1", {});
  const [converted] = (await fn(review("example.com/v2", bare))).response!.convertedObjects;
  assert.deepEqual(converted.metadata, { ...bare.metadata, annotations: { "example.com/carried": "yes" } });
  const quiet = new Registry();
  on.conversion("widgets", { registry: quiet, from: "v1", to: "v2" }, (body) => ({
    ...body,
    metadata: { ...body.metadata, labels: { ...body.metadata.labels }, annotations: {} },
  }));
  const [untouched] = (await fnFor(quiet)(review("example.com/v2", bare))).response!.convertedObjects;
  assert.deepEqual(untouched.metadata, bare.metadata);
});

Deno.test("a converter's error fails the review with its message; so do bad results and unreachable versions", async () => {
  const fn = fnFor(sizes());
  const failureOf = async (desired: string, object: Record<string, unknown>) => {
    const answer = await fn(review(desired, object));
    assert.deepEqual(answer.response!.convertedObjects, []);
    assert.equal(answer.response!.result.status, "Failure");
    return answer.response!.result.message;
  };
  const before = kopfMetrics.webhookRequests.get(["v1-to-v2", "error"]);
  assert.equal(await failureOf("example.com/v2", widget("v1", { size: "huge" })), 'spec.size "huge" is not a size.');
  assert.equal(kopfMetrics.webhookRequests.get(["v1-to-v2", "error"]), before + 1);
  assert.equal(
    await failureOf("example.com/v1", widget("v3", { capacity: {} })),
    "Cannot convert widgets.example.com from v3 to v1: no chain of converters leads there; the registered " +
      "converters are: v1→v2 (v1-to-v2), v2→v1 (v2ToV1), v2→v3 (v2ToV3).",
  );
  assert.match(
    await failureOf("other.com/v1", { ...widget("v1", {}), apiVersion: "other.com/v1" }) ?? "",
    /^No converters are registered for Widget in other\.com; the resources with converters are: widgets\.example\.com\.$/,
  );

  const registry = new Registry();
  on.conversion("widgets", { registry, from: "v1", to: "v2" }, function forgetful() {});
  on.conversion("widgets", { registry, from: "v2", to: "v1" }, function badLabels(body) {
    return { ...body, metadata: { ...body.metadata, labels: { n: 1 } } } as never;
  });
  assert.equal(
    (await fnFor(registry)(review("example.com/v2", widget("v1", {})))).response!.result.message,
    "The converter 'forgetful' (v1→v2) returned undefined, not an object: return the converted object.",
  );
  assert.equal(
    (await fnFor(registry)(review("example.com/v1", widget("v2", {})))).response!.result.message,
    'The conversion from v2 to v1 (badLabels) set metadata.labels has a non-string value at "n" ' +
      "(labels must map names to strings).",
  );
});

Deno.test("malformed reviews are refused with 400", async () => {
  const fn = fnFor(sizes());
  const refused = async (body: unknown, message: RegExp) =>
    await assert.rejects(
      fn(body),
      (error: unknown) => error instanceof WebhookError && error.status === 400 && message.test(error.message),
    );
  await refused([], /must be a JSON object of kind ConversionReview/);
  await refused({ kind: "ConversionReview" }, /has no request/);
  await refused(
    { kind: "ConversionReview", request: { uid: "1", desiredAPIVersion: "v2", objects: [] } },
    /group\/version/,
  );
  await refused(
    review("example.com/v2", { metadata: {} }),
    /objects\[0\] must be an object with apiVersion and metadata/,
  );
});

Deno.test("resolveTargets: one target per CRD, whatever version the selector names; duplicates are left out", () => {
  const registry = new Registry();
  on.conversion("widgets.v1.example.com", { registry, from: "v1", to: "v2" }, function first(body) {
    return body;
  });
  on.conversion("wd", { registry, from: "v1", to: "v2" }, function second(body) {
    return body;
  });
  on.conversion("widgets", { registry, from: "v2", to: "v1" }, function back(body) {
    return body;
  });
  on.conversion("gadgets", { registry, from: "v2", to: "v1" }, function nowhere(body) {
    return body;
  });
  const targets = resolveTargets(registry.converters, [WIDGETS, WIDGETS_V1]);
  assert.deepEqual(targets.map(({ name, group, kind }) => ({ name, group, kind })), [
    { name: "widgets.example.com", group: "example.com", kind: "Widget" },
  ]);
  assert.deepEqual(targets[0].converters.map((converter) => converter.id), ["first", "back"]);
});

Deno.test("the CRD's conversion block: the server's URL or service with /conversion/<crd>, its CA, review v1", () => {
  const url: WebhookClientConfig = { url: "https://127.0.0.1:8443/hooks/", caBundle: "Q0E=" };
  assert.deepEqual(desiredConversion(url, "widgets.example.com"), {
    strategy: "Webhook",
    webhook: {
      clientConfig: { url: "https://127.0.0.1:8443/hooks/conversion/widgets.example.com", caBundle: "Q0E=" },
      conversionReviewVersions: ["v1"],
    },
  });
  assert.deepEqual(conversionClientConfig({ service: { namespace: "ops", name: "op" } }, "widgets.example.com"), {
    service: { namespace: "ops", name: "op", path: "/conversion/widgets.example.com", port: 443 },
  });
});

Deno.test("converters alone need a webhook server; with one, its function answers conversion and admission reviews", async () => {
  const registry = sizes();
  const settings = new Settings();
  const client = {} as ApiClient;
  await assert.rejects(startAdmission({ registry, settings, client, resources: [WIDGETS] }), {
    message: NO_CONVERSION_SERVER_MESSAGE,
  });
  const served: ((review: unknown) => Promise<unknown>)[] = [];
  settings.admission.server = async function* (fn, signal) {
    served.push(fn);
    yield { url: "https://127.0.0.1:1" };
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
  };
  const admission = await startAdmission({ registry, settings, client, resources: [WIDGETS, WIDGETS_V1] });
  try {
    await admission.ready;
    assert.equal(admission.active, true);
    const answer = await served[0](review("example.com/v1", widget("v2", { size: { value: 3, unit: "Gi" } })));
    assert.deepEqual((answer as ConversionReview).response!.convertedObjects, [widget("v1", { size: "3Gi" })]);
    const admissionReview = {
      kind: "AdmissionReview",
      request: {
        uid: "a",
        operation: "CREATE",
        userInfo: {},
        resource: { group: "example.com", version: "v2", resource: "widgets" },
        object: widget("v2", {}),
      },
    };
    await assert.rejects(served[0](admissionReview), /not served by admission handlers/);
  } finally {
    await admission.close();
  }
});

Deno.test("on.conversion: anonymous converters are named <from>-to-<to>; versions are required and checked", () => {
  const registry = new Registry();
  on.conversion("widgets", { registry, from: "v1", to: "v2" }, (body) => body);
  on.conversion("widgets", { registry, from: "v2", to: "v1", id: "back" }, (body) => body);
  assert.deepEqual(registry.converters.map(({ id, from, to }) => ({ id, from, to })), [
    { id: "v1-to-v2", from: "v1", to: "v2" },
    { id: "back", from: "v2", to: "v1" },
  ]);
  assert.equal(registry.handlers.length + registry.webhooks.length, 0);
  const refused = (options: unknown, message: string) =>
    assert.throws(() => on.conversion("widgets", { registry, ...options as object } as never, function convert() {}), {
      name: "TypeError",
      message: `kopf.on.conversion("widgets", convert): ${message}`,
    });
  refused({ to: "v2" }, 'the from option is required for on.conversion, e.g. { from: "v1", to: "v2" }.');
  refused({ from: "v1", to: "v1" }, 'from and to are the same version, "v1"; a converter changes it.');
  refused({ from: "V1", to: "v2" }, 'from must be a version name such as "v1" or "v2beta1", got "V1".');
  refused(
    { from: "v1", to: "v2", labels: {} },
    "unknown option labels (converters convert every object of their resource: they take no filters); " +
      "the options of on.conversion are: id, registry, from, to.",
  );
});
