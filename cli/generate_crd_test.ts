import assert from "node:assert/strict";
import { parse } from "yaml";
import { Declarations, type DocDefinition, type DocJson, type TsType } from "./doc_nodes.ts";
import { denoDocOf } from "./fixtures/deno_doc.ts";
import { main } from "./main.ts";

const ROOT = new URL("../", import.meta.url);
const FIXTURES = ["gadget.ts", "schedule.ts"].map((name) => new URL(`tests/fixtures/crd/${name}`, ROOT).pathname);
const GADGET = ["--kind", "Gadget", "--group", "crd.kopf.dev"];

/** Runs the CLI in a process of its own: its exit code and what it printed. */
async function kopf(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("cli/main.ts", ROOT).pathname, ...args],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

/** A type reduced to what the round trip keeps: a JSON value, compared with deepEqual. */
type Shape = string | Shape[] | { array: Shape } | { map: Shape } | {
  [property: string]: { optional: boolean; type: Shape };
};

/**
 * The shape of a type for the round trip: properties with their optionality, literal unions,
 * arrays, maps and nullability, references followed; `Integer` is `number` (TypeScript has no
 * integers), `@nullable` adds `null`, and an open object counts as its known properties (one with
 * none as `unknown`).
 */
function shape(type: TsType, declarations: Declarations, file: string): Shape {
  switch (type.kind) {
    case "keyword":
      return type.value;
    case "literal":
      return JSON.stringify(type.value.string ?? type.repr);
    case "parenthesized":
      return shape(type.value, declarations, file);
    case "typeOperator":
      return shape(type.value.tsType, declarations, file);
    case "array":
      return { array: shape(type.value, declarations, file) };
    case "union":
      return union(type.value.map((member) => shape(member, declarations, file)));
    case "typeLiteral":
      return object(type.value, declarations, file);
    case "typeRef": {
      const { typeName, typeParams = [], resolution } = type.value;
      if (typeName === "Integer") return "number";
      if (typeName === "Array") return { array: shape(typeParams[0], declarations, file) };
      if (typeName === "Record") return { map: shape(typeParams[1], declarations, file) };
      const found = declarations.resolve(typeName, resolution, file);
      assert.ok(found, `${typeName} is declared`);
      const { def = {} } = found.declaration;
      return def.tsType ? shape(def.tsType, declarations, found.file) : object(def, declarations, found.file);
    }
  }
  throw new Error(`No shape for ${type.kind}`);
}

/** A union's members, flattened and sorted; `undefined` is optionality, not a member. */
function union(members: Shape[]): Shape {
  const flat = members.flatMap((member) => Array.isArray(member) ? member : [member]);
  const unique = new Map(flat.filter((member) => member !== "undefined").map((one) => [JSON.stringify(one), one]));
  const sorted = [...unique.keys()].sort().map((key) => unique.get(key)!);
  return sorted.length === 1 ? sorted[0] : sorted;
}

function object(def: DocDefinition, declarations: Declarations, file: string): Shape {
  const properties: Record<string, { optional: boolean; type: Shape }> = {};
  for (const base of def.extends ?? []) Object.assign(properties, shape(base, declarations, file));
  for (const property of def.properties ?? []) {
    const type = property.tsType!;
    const undefinedToo = type.kind === "union" &&
      type.value.some((one) => one.kind === "keyword" && one.value === "undefined");
    const nullable = property.jsDoc?.tags?.some((tag) => tag.value === "@nullable");
    const mapped = shape(type, declarations, file);
    properties[property.name] = {
      optional: property.optional === true || undefinedToo,
      type: nullable ? union([mapped, "null"]) : mapped,
    };
  }
  const index = def.indexSignatures?.[0]?.tsType;
  if (Object.keys(properties).length) return properties;
  return index && !(index.kind === "keyword" && index.value === "unknown")
    ? { map: shape(index, declarations, file) }
    : "unknown";
}

/** The shape of a declaration, or of a property of one (the generated kind's interface). */
function shapeOf(doc: DocJson, name: string, property?: string): Shape {
  const declarations = new Declarations(doc);
  const found = declarations.find(name);
  assert.ok(found, `${name} is declared`);
  const { def = {} } = found.declaration;
  if (!property) return object(def, declarations, found.file);
  const member = def.properties?.find((one) => one.name === property);
  assert.ok(member?.tsType, `${name}.${property} is declared`);
  return shape(member.tsType, declarations, found.file);
}

Deno.test("round trip: kopf generate types of the generated CRD declares what the source declares", async () => {
  const folder = await Deno.makeTempDir({ prefix: "kopf-crd-" });
  try {
    assert.equal(await main(["generate", "crd", ...FIXTURES, ...GADGET, "-o", `${folder}/crd.yaml`]), 0);
    assert.equal(
      await main([
        "generate",
        "types",
        `${folder}/crd.yaml`,
        "-o",
        `${folder}/types.ts`,
        "--types-module",
        new URL("types.ts", ROOT).href,
      ]),
      0,
    );
    const source = await denoDocOf(Object.fromEntries(
      await Promise.all(FIXTURES.map(async (file) => [file.split("/").at(-1)!, await Deno.readTextFile(file)])),
    ));
    const generated = await denoDocOf(await Deno.readTextFile(`${folder}/types.ts`));
    const spec = shapeOf(source, "GadgetSpec") as Record<string, { optional: boolean; type: Shape }>;
    // Not vacuous: the shape holds the properties, their optionality and the literal unions.
    assert.equal(Object.keys(spec).length, 17);
    assert.deepEqual(spec.exposure, { optional: true, type: ['"External"', '"Internal"'] });
    assert.deepEqual(spec.owner, { optional: true, type: ["null", "string"] });
    assert.deepEqual(spec.paused, { optional: true, type: "boolean" });
    assert.deepEqual(spec.disks.type, {
      array: {
        name: { optional: false, type: "string" },
        size: { optional: false, type: "number" },
        readOnly: { optional: true, type: "boolean" },
      },
    });
    assert.deepEqual(shapeOf(generated, "Gadget", "spec"), spec);
    assert.deepEqual(shapeOf(generated, "Gadget", "status"), shapeOf(source, "GadgetStatus"));
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("kopf generate crd: YAML to stdout or -o FILE, with the options' names, scope and versions", async () => {
  const printed = await kopf([
    "generate",
    "crd",
    ...FIXTURES,
    ...GADGET,
    "--version",
    "v1beta1",
    "--version",
    "v1",
    "--plural",
    "gizmos",
    "--scope",
    "cluster",
    "--short-name",
    "gz",
    "--short-name",
    "gzm",
  ]);
  assert.equal(printed.code, 0, printed.stderr);
  assert.match(printed.stdout, /^# Generated by `kopf generate crd` from gadget\.ts, schedule\.ts: regenerate/);
  const crd = parse(printed.stdout);
  assert.equal(crd.kind, "CustomResourceDefinition");
  assert.equal(crd.metadata.name, "gizmos.crd.kopf.dev");
  assert.deepEqual(crd.spec.names.shortNames, ["gz", "gzm"]);
  assert.equal(crd.spec.scope, "Cluster");
  assert.deepEqual(crd.spec.versions.map((v: { name: string; storage: boolean }) => [v.name, v.storage]), [
    ["v1beta1", false],
    ["v1", true],
  ]);
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  try {
    assert.equal(await main(["generate", "crd", ...FIXTURES, ...GADGET, "-o", file]), 0);
    assert.equal(parse(await Deno.readTextFile(file)).metadata.name, "gadgets.crd.kopf.dev");
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("kopf generate crd -o FILE --check: passes on the file it would write, fails on any other, writes nothing", async () => {
  const folder = await Deno.makeTempDir({ prefix: "kopf-crd-" });
  const file = `${folder}/crd.yaml`;
  try {
    const missing = await kopf(["generate", "crd", ...FIXTURES, ...GADGET, "-o", file, "--check"]);
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /^kopf: .*crd\.yaml does not exist: generate it again \(the same command without --check\)/,
    );
    await assert.rejects(Deno.stat(file), Deno.errors.NotFound);
    assert.equal(await main(["generate", "crd", ...FIXTURES, ...GADGET, "-o", file]), 0);
    assert.equal(await main(["generate", "crd", ...FIXTURES, ...GADGET, "-o", file, "--check"]), 0);
    const stale = (await Deno.readTextFile(file)).replace("scope: Namespaced", "scope: Cluster");
    assert.match(stale, /scope: Cluster/);
    await Deno.writeTextFile(file, stale);
    const result = await kopf(["generate", "crd", ...FIXTURES, ...GADGET, "-o", file, "--check"]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^kopf: .*crd\.yaml is not what gadget\.ts, schedule\.ts gives now: generate it again/);
    assert.equal(await Deno.readTextFile(file), stale);
    const usage = await kopf(["generate", "crd", ...FIXTURES, ...GADGET, "--check"]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /Error: --check compares with the file of -o: give -o FILE\./);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("kopf generate crd: usage errors exit 2; files it cannot map or read exit 1 with one line", async () => {
  const usage: [string[], RegExp][] = [
    [[...FIXTURES, "--group", "crd.kopf.dev"], /Error: Give the kind: --kind Widget\./],
    [[...FIXTURES, "--kind", "gadget", "--group", "crd.kopf.dev"], /The kind gadget is not a name in CamelCase/],
    [[...FIXTURES, "--kind", "Gadget"], /Error: Give the API group/],
    [[...FIXTURES, "--kind", "Gadget", "--group", "kopf"], /The group kopf is not a domain name with a dot/],
    [[...FIXTURES, ...GADGET, "--version", "1"], /The version 1 is not a Kubernetes version/],
    [[...FIXTURES, ...GADGET, "--version", "v1", "--version", "v1"], /A version is given twice/],
    [[...FIXTURES, ...GADGET, "--scope", "Global"], /The scope Global is neither Namespaced nor Cluster/],
    [[...FIXTURES, ...GADGET, "--plural", "Gadgets"], /The plural Gadgets is not a lower-case name/],
    [[...FIXTURES, ...GADGET, "--short-name", "G"], /The short name G is not a lower-case name/],
    [[...GADGET], /Give at least one TypeScript file/],
    [[...FIXTURES, ...GADGET, "--frobnicate"], /Unknown option '--frobnicate'/],
  ];
  for (const [args, message] of usage) {
    const result = await kopf(["generate", "crd", ...args]);
    assert.equal(result.code, 2, args.join(" "));
    assert.match(result.stderr, message);
    assert.match(result.stderr, /Usage: kopf generate crd/);
  }
  const folder = await Deno.makeTempDir({ prefix: "kopf-crd-" });
  try {
    await Deno.writeTextFile(`${folder}/bad.ts`, "export interface BadSpec {\n  when: Date;\n}\n");
    await Deno.writeTextFile(`${folder}/broken.ts`, "export interface BadSpec {\n  when: \n");
    const failures: [string[], RegExp][] = [
      [[`${folder}/bad.ts`, "--kind", "Bad"], /^kopf: BadSpec\.when: Date has no CRD schema .* @format date-time\.$/],
      [
        [`${folder}/broken.ts`, "--kind", "Bad"],
        /^kopf: deno doc cannot read .*broken\.ts: .* at file:\/\/.*:\d+:\d+$/,
      ],
      [[`${folder}/missing.ts`, "--kind", "Bad"], /^kopf: Cannot read .*missing\.ts: /],
      [[FIXTURES[0], "--kind", "Gadget"], /^kopf: GadgetSpec\.schedule: Schedule is imported from \.\/schedule\.ts/],
      [[FIXTURES[0], "--kind", "Widget"], /^kopf: No declaration WidgetSpec \(or WidgetV1Spec for version v1\)/],
    ];
    for (const [args, message] of failures) {
      const result = await kopf(["generate", "crd", ...args, "--group", "crd.kopf.dev"]);
      const lines = result.stderr.split("\n").filter((line) => line.trim() && !line.startsWith("Download"));
      assert.equal(result.code, 1, result.stderr);
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0], message);
    }
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});
