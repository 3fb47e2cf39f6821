import assert from "node:assert/strict";
import { cacheDirectory, cacheLayout } from "./cache.ts";

const env = (values: Record<string, string>) => (name: string) => values[name];

Deno.test("cacheDirectory prefers KOPF_LOCAL_CLUSTER_CACHE", () => {
  const lookup = env({ KOPF_LOCAL_CLUSTER_CACHE: "/c", XDG_CACHE_HOME: "/x", HOME: "/h" });
  assert.equal(cacheDirectory(lookup), "/c");
});

Deno.test("cacheDirectory falls back to XDG_CACHE_HOME, then HOME", () => {
  assert.equal(
    cacheDirectory(env({ XDG_CACHE_HOME: "/x", HOME: "/h" })),
    "/x/kopf-deno/local-cluster",
  );
  assert.equal(cacheDirectory(env({ HOME: "/h" })), "/h/.cache/kopf-deno/local-cluster");
});

Deno.test("cacheDirectory ignores empty variables", () => {
  const lookup = env({ KOPF_LOCAL_CLUSTER_CACHE: "", XDG_CACHE_HOME: "", HOME: "/h" });
  assert.equal(cacheDirectory(lookup), "/h/.cache/kopf-deno/local-cluster");
});

Deno.test("cacheDirectory without any home says which variable to set", () => {
  assert.throws(() => cacheDirectory(env({})), /KOPF_LOCAL_CLUSTER_CACHE/);
});

Deno.test("cacheLayout puts one version's files under v<version>", () => {
  const layout = cacheLayout("/c", "1.36.3");
  assert.deepEqual(layout, {
    root: "/c/v1.36.3",
    bin: "/c/v1.36.3/bin",
    src: "/c/v1.36.3/src",
    lock: "/c/v1.36.3/.lock",
    log: "/c/v1.36.3/build.log",
  });
  assert.equal(cacheLayout("/c", "v1.36.3").root, "/c/v1.36.3");
});
