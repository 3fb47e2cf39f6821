import assert from "node:assert/strict";
import { join } from "node:path";
import { executablePager, executableRanges } from "./executable_pages.ts";
import { LIBC_PATHS } from "./libc.ts";
import { installedLibc } from "../../tests/support/libc.ts";

Deno.test("the executable's read-only mappings are found in /proc/PID/maps, its writable ones and other files' not", () => {
  const maps = [
    "5600000000-5600001000 r--p 00000000 08:01 42 /opt/deno dir/deno",
    "5600001000-5600003000 r-xp 00001000 08:01 42 /opt/deno dir/deno",
    "5600003000-5600004000 rw-p 00003000 08:01 42 /opt/deno dir/deno",
    "7f0000000000-7f0000001000 r-xp 00000000 08:01 7 /usr/lib/x86_64-linux-gnu/libc.so.6",
    "7f0000001000-7f0000002000 rw-p 00000000 00:00 0 ",
    "7ffc00000000-7ffc00001000 r-xp 00000000 00:00 0 [vdso]",
    "",
  ].join("\n");
  assert.deepEqual(executableRanges(maps, "/opt/deno dir/deno"), [
    [0x5600000000n, 0x5600001000n],
    [0x5600001000n, 0x5600003000n],
  ]);
  assert.deepEqual(executableRanges(maps, "/opt/deno"), []);
});

Deno.test({
  name: "without the FFI permission nothing is given back, and nobody is asked",
  permissions: { ffi: false, read: true },
  fn() {
    assert.equal(executablePager(), undefined);
  },
});

Deno.test({
  name: "without reading /proc/self/maps nothing is given back either",
  permissions: { ffi: true, read: false },
  fn() {
    assert.equal(executablePager(), undefined);
  },
});

/** The first of the known places of glibc that this machine has. */
const libc = installedLibc();

Deno.test({
  name:
    "with the FFI permission narrowed to the C library and reading allowed, but not all permissions, nothing either",
  ignore: Deno.build.os !== "linux",
  permissions: { ffi: libc ? [libc] : false, read: true },
  fn() {
    assert.ok(libc, `this machine is Linux with glibc at one of ${LIBC_PATHS.join(", ")}`);
    assert.equal(executablePager(), undefined);
  },
});

/** The script of the child below: its executable's resident KiB before and after the pager, as JSON. */
const CHILD = `
import { executablePager } from ${JSON.stringify(new URL("./executable_pages.ts", import.meta.url).href)};
const resident = () => {
  let own = false, kib = 0;
  for (const line of Deno.readTextFileSync("/proc/self/smaps").split("\\n")) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) own = line.trimEnd().endsWith(Deno.execPath()) && !line.includes(" rw-p ");
    else if (own && line.startsWith("Rss:")) kib += Number(line.split(/\\s+/)[1]);
  }
  return kib;
};
await fetch("data:,x").then((response) => response.text());
const before = resident();
executablePager()!();
console.log(JSON.stringify({ before, after: resident() }));
`;

Deno.test({
  name: "on Linux with glibc and the FFI permission, the executable's pages that are not in use are given back",
  ignore: Deno.build.os !== "linux",
  async fn() {
    // A copy of the binary of its own: pages that another process maps (this one's) are never given back.
    const folder = await Deno.makeTempDir({ prefix: "kopf-executable-pages-" });
    try {
      const binary = join(folder, "deno");
      await Deno.copyFile(Deno.execPath(), binary);
      const script = join(folder, "child.ts");
      await Deno.writeTextFile(script, CHILD);
      const output = await new Deno.Command(binary, {
        args: ["run", "-A", "--no-config", script],
        env: { DENO_NO_UPDATE_CHECK: "1" },
      }).output();
      const text = new TextDecoder().decode(output.stdout);
      assert.ok(output.success, `the child failed: ${new TextDecoder().decode(output.stderr)}`);
      const { before, after } = JSON.parse(text) as { before: number; after: number };
      assert.ok(before > 4096, `the child ran with ${before} KiB of its executable resident`);
      assert.ok(after < before / 2, `${after} KiB resident after, ${before} before`);
    } finally {
      await Deno.remove(folder, { recursive: true });
    }
  },
});
