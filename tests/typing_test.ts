/**
 * Type tests: typed handlers and objects pass `deno check`, and a typo in a typed field fails it
 * with TypeScript's error naming the field. The fixtures with typos are excluded from the
 * project's own `deno check .`; each is checked here from a copy outside the project folder.
 */

import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);
const FIXTURES = new URL("fixtures/typing/", import.meta.url);

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

/** Checks a fixture from a copy outside the project (where the config's exclusions do not apply). */
async function checkCopy(name: string): Promise<{ success: boolean; output: string }> {
  const folder = await Deno.makeTempDir();
  try {
    const text = await Deno.readTextFile(new URL(name, FIXTURES));
    const path = `${folder}/${name}`;
    await Deno.writeTextFile(path, text.replaceAll('"../../../', `"${ROOT.href}`));
    return await check(path);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
}

Deno.test("typed handlers, typed client calls, stored objects, string timestamps, owner references and JSON results pass deno check", async () => {
  const { success, output } = await check(new URL("typed_handlers.ts", FIXTURES).pathname);
  assert.ok(success, output);
});

Deno.test("a typo in a typed spec of a built-in resource's handler fails deno check", async () => {
  const { success, output } = await checkCopy("typo_in_spec.ts");
  assert.equal(success, false);
  assert.match(
    output,
    /Property 'containres' does not exist on type 'Readonly<V1PodSpec>'. Did you mean 'containers'\?/,
  );
});

Deno.test("a typo in a typed object literal fails deno check", async () => {
  const { success, output } = await checkCopy("typo_in_object.ts");
  assert.equal(success, false);
  assert.match(output, /'dtaa' does not exist in type 'V1ConfigMap'/);
});

Deno.test("a typo in a custom resource's spec, typed by the type argument, fails deno check", async () => {
  const { success, output } = await checkCopy("typo_in_custom.ts");
  assert.equal(success, false);
  assert.match(output, /Property 'sise' does not exist on type/);
});

Deno.test("a memo and indexes declared by merging into kopf.Memo and kopf.Indices are typed without casts", async () => {
  const { success, output } = await checkCopy("declared_memo.ts");
  assert.ok(success, output);
});

Deno.test("a declared memo field used as another type fails deno check", async () => {
  const { success, output } = await checkCopy("typo_in_memo.ts");
  assert.equal(success, false);
  assert.match(
    output,
    /Type 'Set<string>' is missing the following properties from type 'Map<string, AbortController>'/,
  );
});

Deno.test("a misspelt field of a declared memo fails deno check", async () => {
  const { success, output } = await checkCopy("typo_memo_key.ts");
  assert.equal(success, false);
  assert.match(output, /Property 'confg' does not exist on type 'Memo'. Did you mean 'config'\?/);
});

Deno.test("a Date returned by a handler fails deno check", async () => {
  const { success, output } = await checkCopy("typo_date_result.ts");
  assert.equal(success, false);
  assert.match(output, /Type 'Date' is not assignable to type 'HandlerResult \| Promise<HandlerResult>'/);
});

Deno.test("a function returned by an async handler fails deno check", async () => {
  const { success, output } = await checkCopy("typo_function_result.ts");
  assert.equal(success, false);
  assert.match(output, /Type '\(\) => "too late"' is not assignable to type 'HandlerResult'/);
});

Deno.test("a timestamp of an object used as a Date fails deno check: it is a string", async () => {
  const { success, output } = await checkCopy("typo_timestamp_date.ts");
  assert.equal(success, false);
  assert.match(output, /Type 'string' is not assignable to type 'Date'/);
});

Deno.test("the namespace of a cluster-scoped built-in resource is undefined", async () => {
  const { success, output } = await checkCopy("typo_cluster_namespace.ts");
  assert.equal(success, false);
  assert.match(output, /Type 'undefined' is not assignable to type 'string'/);
});

Deno.test("the name in an admission handler may be undefined (an object made from generateName)", async () => {
  const { success, output } = await checkCopy("typo_admission_name.ts");
  assert.equal(success, false);
  assert.match(output, /'name' is possibly 'undefined'/);
});
