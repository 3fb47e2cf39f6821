import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { CrdTypesError, generateTypes, typeOf } from "./crd_types.ts";
import { main } from "./main.ts";

const ROOT = new URL("../", import.meta.url);
const TYPES_MODULE = new URL("types.ts", ROOT).href;

async function documents(file: URL): Promise<unknown[]> {
  return parseAllDocuments(await Deno.readTextFile(file)).map((document) => document.toJS());
}

/** Type-checks a module with the project's configuration; returns whether it passed and what deno said. */
async function check(path: string): Promise<{ success: boolean; output: string }> {
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["check", "--config", new URL("deno.json", ROOT).pathname, path],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { success: result.success, output: decoder.decode(result.stdout) + decoder.decode(result.stderr) };
}

Deno.test("schema types: scalars, enums, nullable, int-or-string, arrays, maps, open objects", () => {
  assert.equal(typeOf({ type: "string" }), "string");
  assert.equal(typeOf({ type: "integer", format: "int64" }), "number");
  assert.equal(typeOf({ type: "string", enum: ["A", "B"] }), '"A" | "B"');
  assert.equal(typeOf({ type: "string", enum: ["A", "B"], nullable: true }), '("A" | "B") | null');
  assert.equal(typeOf({ "x-kubernetes-int-or-string": true, anyOf: [] } as never), "number | string");
  assert.equal(typeOf({ type: "array", items: { type: "string" } }), "string[]");
  assert.equal(typeOf({ type: "array", items: { type: "array", items: { type: "integer" } } }), "number[][]");
  assert.equal(typeOf({ type: "array", items: { type: "string", enum: ["x", "y"] } }), 'Array<"x" | "y">');
  assert.equal(typeOf({ type: "object", additionalProperties: { type: "string" } }), "{ [key: string]: string }");
  assert.equal(typeOf({ type: "object", "x-kubernetes-preserve-unknown-fields": true }), "{ [key: string]: unknown }");
  assert.equal(typeOf({ "x-kubernetes-preserve-unknown-fields": true }), "{ [key: string]: unknown }");
  assert.equal(
    typeOf({ type: "object", required: ["a"], properties: { a: { type: "string" }, "b-c": { type: "boolean" } } }),
    '{\n  a: string;\n  "b-c"?: boolean;\n}',
  );
});

Deno.test("the example CRD: one interface named after the kind, open spec and status", async () => {
  const text = generateTypes(await documents(new URL("examples/crd.yaml", ROOT)), { typesModule: TYPES_MODULE });
  assert.match(text, /export interface KopfExample \{/);
  assert.match(text, /apiVersion\?: "kopf\.dev\/v1";/);
  assert.match(text, /spec\?: \{ \[key: string\]: unknown \};/);
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(file, text);
    const { success, output } = await check(file);
    assert.ok(success, output);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("rich, deeply nested CRDs: every served version, JSDoc, required fields; the output type-checks", async () => {
  const crds = [
    ...await documents(new URL("fixtures/certificate_crd.yaml", import.meta.url)),
    ...await documents(new URL("fixtures/monitoring_crd.yaml", import.meta.url)),
  ];
  const text = generateTypes(crds, { typesModule: TYPES_MODULE, source: "fixtures" });
  // One per kind and served version; the kind's own name is the storage version; v1alpha1 is not served.
  assert.match(text, /export interface CertificateV1 \{/);
  assert.match(text, /export interface CertificateV1beta1 \{/);
  assert.match(text, /export type Certificate = CertificateV1;/);
  assert.doesNotMatch(text, /V1alpha1/);
  assert.match(text, /export interface Monitor \{/);
  // Descriptions as JSDoc (a `*/` inside is escaped), defaults, required vs optional, nullable.
  assert.match(
    text,
    /\/\*\* The Secret that receives the signed certificate and its key\. \*\/\n\s+secretName: string;/,
  );
  assert.match(text, /A \*\\\/ in a description stays inside the comment\./);
  assert.match(text, /@default "2160h"/);
  assert.match(text, /\n {2}spec: \{/, "spec is required in the Certificate v1 schema");
  assert.match(text, /rotationPolicy\?: \("Never" \| "Always"\) \| null;/);
  assert.match(text, /replicas\?: number \| null;/);
  // int-or-string, maps of them, open objects with known fields, embedded resources, quoted names.
  assert.match(text, /limits\?: \{ \[key: string\]: number \| string \};/);
  assert.match(text, /containers\?: Array<\{\n\s+name: string;\n\s+\[key: string\]: unknown;\n\s+\}>;/);
  assert.match(text, /volumeClaimTemplate\?: \{ \[key: string\]: unknown \};/);
  assert.match(text, /"app\.kubernetes\.io\/part-of"\?: string;/);
  assert.match(text, /matrix\?: number\[\]\[\];/);

  const folder = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${folder}/types.ts`, text);
    const { success, output } = await check(`${folder}/types.ts`);
    assert.ok(success, output);

    // Handlers typed with them: correct use passes, a typo deep inside fails.
    const use = (body: string) =>
      `import * as kopf from "${new URL("mod.ts", ROOT).href}";\n` +
      `import type { Certificate, Monitor } from "./types.ts";\n${body}\n`;
    await Deno.writeTextFile(
      `${folder}/good.ts`,
      use(`kopf.on.create<Certificate>("certificates", ({ spec }) => spec.issuerRef.name + spec.secretName);
kopf.on.update<Monitor>("monitors", ({ spec }) =>
  spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]
    .matchExpressions?.[0].operator === "Gt" ? spec.resources?.limits?.cpu : spec.port);
const cert: Certificate = { spec: { secretName: "s", issuerRef: { name: "i" }, privateKey: null } };
console.log(cert);`),
    );
    const good = await check(`${folder}/good.ts`);
    assert.ok(good.success, good.output);

    await Deno.writeTextFile(
      `${folder}/typo.ts`,
      use(`kopf.on.create<Certificate>("certificates", ({ spec }) => spec.issuerRef.nmae);`),
    );
    const typo = await check(`${folder}/typo.ts`);
    assert.equal(typo.success, false);
    assert.match(typo.output, /Property 'nmae' does not exist/);

    await Deno.writeTextFile(
      `${folder}/enum.ts`,
      use(`const m: Monitor = { spec: { ruleSelector: { matchExpressions: [{ key: "k", operator: "Within" }] } } };
console.log(m);`),
    );
    const invalid = await check(`${folder}/enum.ts`);
    assert.equal(invalid.success, false);
    assert.match(invalid.output, /Type '"Within"' is not assignable/);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("no CRD among the documents: an error that says what to give", () => {
  assert.throws(() => generateTypes([{ kind: "ConfigMap" }]), CrdTypesError);
  assert.throws(() => generateTypes([{ kind: "ConfigMap" }]), /No CustomResourceDefinition found/);
});

Deno.test("kopf generate types CRD.yaml -o FILE writes the file; usage errors exit 2", async () => {
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    const crd = new URL("examples/crd.yaml", ROOT).pathname;
    assert.equal(await main(["generate", "types", crd, "-o", file]), 0);
    assert.match(await Deno.readTextFile(file), /import type \{ V1ObjectMeta \} from "@kopf\/kopf\/types";/);
    assert.equal(await main(["generate", "types"]), 2);
    assert.equal(await main(["generate", "nothing"]), 2);
  } finally {
    await Deno.remove(file);
  }
});
