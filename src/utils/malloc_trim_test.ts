import assert from "node:assert/strict";
import { LIBC_PATHS } from "./libc.ts";
import { installedLibc } from "../../tests/support/libc.ts";
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

/** The first of the known places of glibc that this machine has. */
const libc = installedLibc();

Deno.test({
  name: "with the FFI permission narrowed to the C library's path, the C heap can be trimmed too",
  ignore: Deno.build.os !== "linux",
  permissions: { ffi: libc ? [libc] : false, read: true },
  fn() {
    assert.ok(libc, `this machine is Linux with glibc at one of ${LIBC_PATHS.join(", ")}`);
    assert.equal(Deno.permissions.querySync({ name: "ffi" }).state, "prompt", "not the whole permission");
    const trim = mallocTrimmer();
    assert.equal(typeof trim, "function");
    trim!();
  },
});
