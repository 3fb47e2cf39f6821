import assert from "node:assert/strict";
import { crdFromDeclarations, defaultPlural } from "./crd_definition.ts";
import { denoDocOf } from "./fixtures/deno_doc.ts";

Deno.test("the CRD of one version: names, scope, the spec and status, the status subresource, printer columns", async () => {
  const doc = await denoDocOf(`
type Integer = number;
/**
 * The spec.
 * @printerColumn Size .spec.size
 * @printerColumn Ratio .spec.ratio
 * @printerColumn Since .spec.since
 * @printerColumn Label .spec.label
 * @printerColumn "Free text" .spec.free.text string
 * @printerColumn Age .metadata.creationTimestamp
 */
export interface PolicySpec {
  size: Integer;
  ratio?: number;
  /** @format date-time */
  since?: string;
  label?: string;
  /** @preserveUnknownFields */
  free?: unknown;
}
/** @printerColumn Ready .status.ready */
export interface PolicyStatus {
  ready?: boolean;
}`);
  const crd = crdFromDeclarations(doc, {
    kind: "Policy",
    group: "example.com",
    scope: "Cluster",
    shortNames: ["pol"],
  });
  assert.deepEqual(crd.metadata, { name: "policies.example.com" });
  assert.deepEqual(crd.spec.names, {
    kind: "Policy",
    listKind: "PolicyList",
    plural: "policies",
    singular: "policy",
    shortNames: ["pol"],
  });
  assert.equal(crd.spec.scope, "Cluster");
  const [version] = crd.spec.versions;
  assert.equal(crd.spec.versions.length, 1);
  assert.equal(version.name, "v1");
  assert.equal(version.served && version.storage, true);
  assert.deepEqual(version.subresources, { status: {} });
  const root = version.schema.openAPIV3Schema;
  assert.deepEqual(Object.keys(root.properties!), ["spec", "status"]);
  assert.deepEqual(root.required, ["spec"], "a spec with required fields is required");
  assert.equal(root.properties!.spec.description, "The spec.");
  assert.deepEqual(Object.keys(root.properties!.spec), ["description", "type", "properties", "required"]);
  assert.deepEqual(version.additionalPrinterColumns, [
    { name: "Size", type: "integer", jsonPath: ".spec.size" },
    { name: "Ratio", type: "number", jsonPath: ".spec.ratio" },
    { name: "Since", type: "date", jsonPath: ".spec.since" },
    { name: "Label", type: "string", jsonPath: ".spec.label" },
    { name: "Free text", type: "string", jsonPath: ".spec.free.text" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    { name: "Ready", type: "boolean", jsonPath: ".status.ready" },
  ]);
});

Deno.test("versions: <Kind><Version>Spec where declared, else <Kind>Spec; the last version is stored", async () => {
  const doc = await denoDocOf(`
export interface BoxSpec {
  size?: number;
}
export interface BoxV2Spec {
  width?: number;
  height?: number;
}
export interface BoxV1beta1Status {
  ok?: boolean;
}`);
  const crd = crdFromDeclarations(doc, { kind: "Box", group: "example.com", versions: ["v1beta1", "v1", "v2"] });
  assert.equal(crd.metadata.name, "boxes.example.com");
  assert.equal(crd.spec.scope, "Namespaced");
  assert.equal(crd.spec.names.shortNames, undefined);
  const versions = crd.spec.versions.map((version) => ({
    name: version.name,
    storage: version.storage,
    fields: Object.keys(version.schema.openAPIV3Schema.properties!.spec.properties!),
    status: version.subresources !== undefined,
    required: version.schema.openAPIV3Schema.required,
  }));
  assert.deepEqual(versions, [
    { name: "v1beta1", storage: false, fields: ["size"], status: true, required: undefined },
    { name: "v1", storage: false, fields: ["size"], status: false, required: undefined },
    { name: "v2", storage: true, fields: ["width", "height"], status: false, required: undefined },
  ]);
  assert.equal(crd.spec.versions.every((version) => version.served), true);
  assert.throws(
    () => crdFromDeclarations(doc, { kind: "Crate", group: "example.com", versions: ["v3"] }),
    /^CrdSchemaError: No declaration CrateSpec \(or CrateV3Spec for version v3\) in the files: declare the spec/,
  );
});

Deno.test("the default plural: the kind in lower case with an English ending", () => {
  assert.equal(defaultPlural("Gadget"), "gadgets");
  assert.equal(defaultPlural("Policy"), "policies");
  assert.equal(defaultPlural("Gateway"), "gateways");
  assert.equal(defaultPlural("Box"), "boxes");
  assert.equal(defaultPlural("Status"), "statuses");
  assert.equal(defaultPlural("Patch"), "patches");
});
