import assert from "node:assert/strict";
import { isRedeclaredModel, parseDocLint } from "./doc_lint.ts";

Deno.test("the findings of deno doc --lint are read with their rule, message, file and line", () => {
  const output = [
    "error[missing-jsdoc]: exported symbol is missing JSDoc documentation",
    "  --> /repo/src/model/body.ts:15:3",
    "   | ",
    "15 |   name?: string;",
    "   |   ^",
    "",
    "",
    "error[private-type-ref]: public type 'ChangeFn' references private type 'HandlerResult'",
    "  --> /repo/node_modules/.deno/x/index.d.ts:60:1",
    "",
    "error: Found 2 documentation lint errors.",
  ].join("\n");
  assert.deepEqual(parseDocLint(output), [
    {
      rule: "missing-jsdoc",
      message: "exported symbol is missing JSDoc documentation",
      path: "/repo/src/model/body.ts",
      line: 15,
    },
    {
      rule: "private-type-ref",
      message: "public type 'ChangeFn' references private type 'HandlerResult'",
      path: "/repo/node_modules/.deno/x/index.d.ts",
      line: 60,
    },
  ]);
});

Deno.test("a re-declared model extending client-node's model of the same name is by design; nothing else is", () => {
  const at = (path: string, message: string) => ({ rule: "private-type-ref", message, path, line: 1 });
  const models = "/repo/src/model/k8s_models.ts";
  assert.equal(isRedeclaredModel(at(models, "public type 'V1Pod' references private type 'V1Pod'")), true);
  assert.equal(isRedeclaredModel(at(models, "public type 'V1Pod' references private type 'V1PodSpec'")), false);
  assert.equal(isRedeclaredModel(at("/repo/src/model/body.ts", "public type 'A' references private type 'A'")), false);
  assert.equal(
    isRedeclaredModel({ ...at(models, "public type 'V1Pod' references private type 'V1Pod'"), rule: "missing-jsdoc" }),
    false,
  );
});
