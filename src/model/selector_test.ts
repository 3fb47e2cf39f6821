// Unit tests of resource selectors: the string and object forms, their validation, name matching,
// categories, EVERYTHING, preferred versions and the ambiguity rule (features 2.1–2.6, 2.9).

import assert from "node:assert/strict";
import type { Resource } from "./resource.ts";
import { EVERYTHING, groupsToScan, Selector } from "./selector.ts";

const WATCHABLE = ["create", "delete", "get", "list", "patch", "update", "watch"];

function res(fields: Partial<Resource> & Pick<Resource, "plural" | "kind">): Resource {
  return {
    group: "",
    version: "v1",
    singular: fields.kind.toLowerCase(),
    namespaced: true,
    preferred: true,
    shortcuts: [],
    categories: [],
    verbs: WATCHABLE,
    subresources: [],
    ...fields,
  };
}

const PODS = res({ plural: "pods", kind: "Pod", shortcuts: ["po"], categories: ["all"], subresources: ["status"] });
const METRIC_PODS = res({ group: "metrics.k8s.io", version: "v1beta1", plural: "pods", kind: "PodMetrics" });
const EVENTS = res({ plural: "events", kind: "Event", shortcuts: ["ev"] });
const K8S_EVENTS = res({ group: "events.k8s.io", plural: "events", kind: "Event", shortcuts: ["ev"] });
const CONFIGMAPS = res({ plural: "configmaps", kind: "ConfigMap", shortcuts: ["cm"] });
const KEX_V1 = res({
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
  shortcuts: ["kopfexes", "kopfex", "kexes", "kex"],
  categories: ["mycat"],
  subresources: ["status"],
});
const KEX_V2 = { ...KEX_V1, version: "v2", preferred: false };
const WIDGETS_A = res({ group: "a.example", plural: "widgets", kind: "Widget", categories: ["mycat"] });
const WIDGETS_B = res({ group: "b.example", plural: "widgets", kind: "Widget" });
// K3s reports empty singulars for builtins.
const K3S_NODES = res({ plural: "nodes", kind: "Node", singular: "", namespaced: false });

const ALL: Resource[] = [PODS, METRIC_PODS, EVENTS, K8S_EVENTS, CONFIGMAPS, KEX_V1, KEX_V2, WIDGETS_A, WIDGETS_B];

function selected(input: ConstructorParameters<typeof Selector>[0], resources: Resource[] = ALL): Resource[] {
  return new Selector(input).select(resources).resources;
}

Deno.test("a plain name matches the plural, singular, kind, or a short name in any group", () => {
  for (const name of ["kopfexamples", "kopfexample", "KopfExample", "kopfexes", "kopfex", "kexes", "kex"]) {
    assert.deepEqual(selected(name), [KEX_V1], name);
  }
  assert.deepEqual(selected("cm"), [CONFIGMAPS]);
});

Deno.test("names match exactly and case-sensitively", () => {
  for (const name of ["kopfexample_", "Kopfexample", "KEX", "kopfExamples", "ke"]) {
    assert.deepEqual(selected(name), [], name);
  }
});

Deno.test("a dotted string is name.group, name.version, or name.version.group", () => {
  const group = new Selector("kopfexamples.kopf.dev");
  assert.equal(group.name, "kopfexamples");
  assert.equal(group.group, "kopf.dev");
  assert.equal(group.version, undefined);
  assert.deepEqual(group.select(ALL).resources, [KEX_V1]);

  const full = new Selector("kopfexamples.v2.kopf.dev");
  assert.equal(full.version, "v2");
  assert.equal(full.group, "kopf.dev");
  assert.deepEqual(full.select(ALL).resources, [KEX_V2]);

  // The second part is a version if it looks like one: then any group of that version.
  const versioned = new Selector("pods.v1");
  assert.equal(versioned.version, "v1");
  assert.equal(versioned.group, undefined);
  assert.deepEqual(versioned.select(ALL).resources, [PODS]);

  const beta = new Selector("pods.v1beta1");
  assert.equal(beta.version, "v1beta1");
  assert.deepEqual(beta.select(ALL).resources, [METRIC_PODS]);

  assert.deepEqual(new Selector("pods.v2alpha3.x.io").version, "v2alpha3");
  // Not versions: the rest is a group.
  assert.equal(new Selector("pods.v1gamma1").group, "v1gamma1");
  assert.equal(new Selector("pods.vv1.x.io").group, "vv1.x.io");
  assert.equal(new Selector("pods.metrics.k8s.io").group, "metrics.k8s.io");
  assert.deepEqual(selected("pods.metrics.k8s.io"), [METRIC_PODS]);
  assert.deepEqual(selected("PodMetrics.v1beta1.metrics.k8s.io"), [METRIC_PODS]);
});

Deno.test("keyword forms restrict which name matches", () => {
  assert.deepEqual(selected({ kind: "KopfExample" }), [KEX_V1]);
  assert.deepEqual(selected({ kind: "kopfexamples" }), []);
  assert.deepEqual(selected({ plural: "kopfexamples" }), [KEX_V1]);
  assert.deepEqual(selected({ plural: "kex" }), []);
  assert.deepEqual(selected({ singular: "kopfexample" }), [KEX_V1]);
  assert.deepEqual(selected({ singular: "KopfExample" }), []);
  assert.deepEqual(selected({ shortcut: "kex" }), [KEX_V1]);
  assert.deepEqual(selected({ shortcut: "kopfexamples" }), []);
  assert.deepEqual(selected({ group: "kopf.dev", version: "v2", plural: "kopfexamples" }), [KEX_V2]);
  assert.deepEqual(selected({ group: "", plural: "pods" }), [PODS]);
  assert.deepEqual(selected({ group: "kopf.dev", kind: "Pod" }), []);
});

Deno.test("an empty singular falls back to the lower-cased kind", () => {
  assert.deepEqual(selected("node", [K3S_NODES]), [K3S_NODES]);
  assert.deepEqual(selected({ singular: "node" }, [K3S_NODES]), [K3S_NODES]);
  assert.deepEqual(selected("Node", [K3S_NODES]), [K3S_NODES]);
});

Deno.test("without a version only preferred versions match; with one, exactly that version", () => {
  assert.deepEqual(selected({ group: "kopf.dev", plural: "kopfexamples" }), [KEX_V1]);
  assert.deepEqual(selected({ group: "kopf.dev", version: "v1", plural: "kopfexamples" }), [KEX_V1]);
  assert.deepEqual(selected({ group: "kopf.dev", version: "v2", plural: "kopfexamples" }), [KEX_V2]);
  // v2 preferred: versionless selectors follow the preference.
  const v1 = { ...KEX_V1, preferred: false };
  const v2 = { ...KEX_V2, preferred: true };
  assert.deepEqual(selected("kex", [v1, v2]), [v2]);
  assert.deepEqual(selected("kex.v1", [v1, v2]), [v1]);
  assert.deepEqual(selected("kopfexamples.v1.kopf.dev", [v1, v2]), [v1]);
  assert.deepEqual(selected(EVERYTHING, [v1, v2]), [v2]);
});

Deno.test("a name in two non-core groups is ambiguous: nothing is served", () => {
  const selection = new Selector("widgets").select(ALL);
  assert.deepEqual(selection.resources, []);
  assert.deepEqual(selection.ambiguous, [WIDGETS_A, WIDGETS_B]);
  // A group resolves it.
  assert.deepEqual(new Selector("widgets.a.example").select(ALL), { resources: [WIDGETS_A], ambiguous: [] });
  assert.deepEqual(selected({ kind: "Widget", group: "b.example" }), [WIDGETS_B]);
  assert.deepEqual(new Selector({ kind: "Widget" }).select(ALL).ambiguous, [WIDGETS_A, WIDGETS_B]);
});

Deno.test("the core group wins over other groups with the same name", () => {
  assert.deepEqual(new Selector("pods").select(ALL), { resources: [PODS], ambiguous: [] });
  assert.deepEqual(new Selector({ plural: "pods" }).select(ALL), { resources: [PODS], ambiguous: [] });
  // Core events win over events.k8s.io events when named.
  assert.deepEqual(selected("events"), [EVENTS]);
  assert.deepEqual(selected("events.events.k8s.io"), [K8S_EVENTS]);
  // The same resource listed twice is one resource, not an ambiguity.
  assert.deepEqual(new Selector("kex").select([KEX_V1, KEX_V1]), { resources: [KEX_V1], ambiguous: [] });
});

Deno.test("categories select all resources listing them and are never ambiguous", () => {
  assert.deepEqual(new Selector({ category: "mycat" }).select(ALL), { resources: [KEX_V1, WIDGETS_A], ambiguous: [] });
  assert.deepEqual(selected({ category: "mycat", group: "a.example" }), [WIDGETS_A]);
  assert.deepEqual(selected({ category: "all" }), [PODS]);
  assert.deepEqual(selected({ category: "none" }), []);
});

Deno.test("EVERYTHING selects all preferred resources except events and is never ambiguous", () => {
  const selection = new Selector(EVERYTHING).select(ALL);
  assert.deepEqual(selection.resources, [PODS, METRIC_PODS, CONFIGMAPS, KEX_V1, WIDGETS_A, WIDGETS_B]);
  assert.deepEqual(selection.ambiguous, []);
  assert.deepEqual(selected({ plural: EVERYTHING }), selection.resources);
  assert.deepEqual(selected({ group: "kopf.dev", plural: EVERYTHING }), [KEX_V1]);
  assert.deepEqual(selected({ group: "kopf.dev", version: "v2", plural: EVERYTHING }), [KEX_V2]);
  assert.deepEqual(selected({ group: "", plural: EVERYTHING }), [PODS, CONFIGMAPS]);
  assert.deepEqual(selected({ group: "events.k8s.io", plural: EVERYTHING }), []);
  assert.equal(new Selector(EVERYTHING).specific, false);
  assert.equal(new Selector({ category: "all" }).specific, false);
  assert.equal(new Selector("kex").specific, true);
});

Deno.test("two names are an ambiguous specification", () => {
  assert.throws(() => new Selector({ plural: "kopfexamples", kind: "KopfExample" }), {
    name: "TypeError",
    message: /Ambiguous resource specification.*plural, kind/,
  });
  assert.throws(() => new Selector({ plural: EVERYTHING, category: "all" }), /Ambiguous resource specification/);
});

Deno.test("no name is an unspecific resource", () => {
  assert.throws(() => new Selector({}), { name: "TypeError", message: /Unspecific resource with no names/ });
  assert.throws(() => new Selector({ group: "kopf.dev", version: "v1" }), /Unspecific resource with no names/);
});

Deno.test("empty names and malformed strings are refused", () => {
  for (const key of ["plural", "kind", "singular", "shortcut", "category", "version"]) {
    assert.throws(() => new Selector({ group: "x", [key]: "" }), {
      name: "TypeError",
      message: new RegExp(`${key} must not be an empty string`),
    });
  }
  for (const text of ["", "pods.", ".pods", "pods..v1", "kopf.dev/v1", "pods/status", "kex "]) {
    assert.throws(() => new Selector(text), TypeError, JSON.stringify(text));
  }
  assert.throws(() => new Selector({ group: "kopf.dev/v1", plural: "kopfexamples" }), /give the group and the version/);
  assert.throws(() => new Selector({ plurals: "pods" } as never), /Unknown resource selector fields: plurals/);
  assert.throws(() => new Selector({ kind: 1 } as never), /kind must be a string, not number 1/);
  assert.throws(() => new Selector(null as never), /must be a string, an object or kopf.EVERYTHING, not null/);
  assert.throws(() => new Selector(Symbol("x") as never), TypeError);
  // The core group is an empty group, which is allowed.
  assert.equal(new Selector({ group: "", plural: "pods" }).group, "");
});

Deno.test("groups says which API groups need scanning", () => {
  assert.equal(new Selector("kex").groups, null);
  assert.equal(new Selector("pods.v1").groups, null);
  assert.equal(new Selector(EVERYTHING).groups, null);
  assert.deepEqual(new Selector("kopfexamples.kopf.dev").groups, ["kopf.dev"]);
  assert.deepEqual(new Selector({ group: "", plural: "pods" }).groups, [""]);
  assert.deepEqual(groupsToScan([new Selector("kopfexamples.kopf.dev"), new Selector({ group: "", kind: "Pod" })]), [
    "kopf.dev",
    "",
  ]);
  assert.equal(groupsToScan([new Selector("kopfexamples.kopf.dev"), new Selector("pods")]), null);
  assert.deepEqual(groupsToScan([]), []);
});

Deno.test("toString shows the selector as written", () => {
  assert.equal(String(new Selector("kex")), '"kex"');
  assert.equal(String(new Selector("pods.v1")), '"pods.v1"');
  assert.equal(String(new Selector(EVERYTHING)), "kopf.EVERYTHING");
  assert.equal(
    String(new Selector({ kind: "KopfExample", group: "kopf.dev" })),
    '{ group: "kopf.dev", kind: "KopfExample" }',
  );
  assert.equal(
    String(new Selector({ group: "kopf.dev", plural: EVERYTHING })),
    '{ group: "kopf.dev", plural: kopf.EVERYTHING }',
  );
});
