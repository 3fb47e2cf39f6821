import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { measureFunctions } from "./function_lengths.ts";

const SOURCE = `export function declared(): number {
  const arrow = () => {
    return 1;
  };
  return arrow();
}

class Thing {
  method(): void {}
  #hidden(): void {
    [1, 2].forEach((n) => {
      console.log(n);
    });
  }
}

export const assigned = function (): void {};
new Thing();
`;

Deno.test("every function is measured from its first line to its last, named by what holds it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "sample.ts");
    await Deno.writeTextFile(file, SOURCE);
    const found = await measureFunctions([file]);
    const path = relative(Deno.cwd(), file);
    assert.deepEqual(found, [
      { file: path, line: 1, name: "declared", lines: 6 },
      { file: path, line: 10, name: "#hidden", lines: 5 },
      { file: path, line: 2, name: "arrow", lines: 3 },
      { file: path, line: 11, name: "(callback of .forEach)", lines: 3 },
      { file: path, line: 9, name: "method", lines: 1 },
      { file: path, line: 17, name: "assigned", lines: 1 },
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
