import assert from "node:assert/strict";
import { mallocTrimmer } from "./malloc_trim.ts";

Deno.test({
  name: "on Linux with glibc and the FFI permission, the C heap can be trimmed",
  ignore: Deno.build.os !== "linux",
  fn() {
    const trim = mallocTrimmer();
    assert.equal(typeof trim, "function", "this machine is Linux with glibc; the tests run with -A");
    trim!();
  },
});

Deno.test({
  name: "without the FFI permission nothing is trimmed, and nobody is asked",
  permissions: { ffi: false },
  fn() {
    assert.equal(mallocTrimmer(), undefined);
  },
});
