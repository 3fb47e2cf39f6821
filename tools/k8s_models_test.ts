import assert from "node:assert/strict";
import { generate, modelProperties, modelsWithDates, OUTPUT, renderModels } from "./k8s_models.ts";

const META = `import { V1OwnerReference } from '../models/V1OwnerReference.js';
export declare class V1ObjectMeta {
    /**
     * Date of creation: 'x'?: Date;
     */
    'creationTimestamp'?: Date;
    /**
     * Labels.
     */
    'labels'?: {
        [key: string]: string;
    };
    'ownerReferences'?: Array<V1OwnerReference>;
    'name': string;
    static readonly discriminator: string | undefined;
    constructor();
}`;

const model = (name: string, properties: string) =>
  `export declare class ${name} {\n${properties}\n    static readonly discriminator: string | undefined;\n}`;

const MODELS = [
  { name: "V1ObjectMeta", text: META },
  { name: "V1OwnerReference", text: model("V1OwnerReference", "    'uid': string;") },
  { name: "V1Pod", text: model("V1Pod", "    'metadata'?: V1ObjectMeta;\n    'kind'?: string;") },
  { name: "V1Lease", text: model("V1Lease", "    'renewTime'?: V1MicroTime;") },
  { name: "V1Budget", text: model("V1Budget", "    'pods'?: {\n        [key: string]: Date;\n    };") },
  { name: "V1Spec", text: model("V1Spec", "    'owners'?: Array<V1OwnerReference>;\n    'meta': V1ObjectMeta;") },
];

Deno.test("the properties of a model's class are read with their optionality and types; comments do not count", () => {
  assert.deepEqual(modelProperties(MODELS[0]), [
    { name: "creationTimestamp", optional: true, type: "Date" },
    { name: "labels", optional: true, type: "{ [key: string]: string; }" },
    { name: "ownerReferences", optional: true, type: "Array<V1OwnerReference>" },
    { name: "name", optional: false, type: "string" },
  ]);
});

Deno.test("models with a Date, also through the models they refer to, are found", () => {
  assert.deepEqual([...modelsWithDates(MODELS)].sort(), ["V1Budget", "V1Lease", "V1ObjectMeta", "V1Pod", "V1Spec"]);
});

Deno.test("a model with a Date is re-declared with strings for dates and the re-declared models for models", () => {
  const text = renderModels(MODELS, "0.0.0");
  assert.match(
    text,
    /export interface V1ObjectMeta extends Omit<k8s\.V1ObjectMeta, "creationTimestamp"> \{\n.*\n {2}creationTimestamp\?: string;\n\}/,
  );
  assert.match(
    text,
    /export interface V1Pod extends Omit<k8s\.V1Pod, "metadata"> \{\n.*\n {2}metadata\?: V1ObjectMeta;\n\}/,
  );
  assert.match(text, /\n {2}renewTime\?: string;\n/);
  assert.match(text, /\n {2}pods\?: \{ \[key: string\]: string \};\n/);
  assert.match(text, /export interface V1Spec extends Omit<k8s\.V1Spec, "meta"> \{\n.*\n {2}meta: V1ObjectMeta;\n\}/);
  assert.doesNotMatch(text, /interface V1OwnerReference/, "a model without dates is client-node's own");
});

Deno.test("a type this tool does not know is an error naming the model, not a guess", () => {
  const odd = { name: "V1Odd", text: model("V1Odd", "    'at'?: Date;\n    'x'?: Map<string, Date>;") };
  assert.throws(() => renderModels([odd], "0.0.0"), /V1Odd: the type Map<string, Date> has Map/);
});

Deno.test("src/model/k8s_models.ts is what tools/k8s_models.ts writes for the installed client-node", async () => {
  const expected = await generate();
  assert.equal(await Deno.readTextFile(OUTPUT), expected, "run: deno run -A tools/k8s_models.ts");
  assert.match(expected, /^export interface V1ConfigMap extends Omit<k8s\.V1ConfigMap, "metadata"> \{$/m);
});
