import assert from "node:assert/strict";
import { parseStagingModules, requiredVersion, stagingVersion } from "./go_mod.ts";

const GO_MOD = `// This is a generated file. Do not edit directly.
module k8s.io/kubernetes

go 1.26.0

require (
	github.com/blang/semver/v4 v4.0.0
	go.etcd.io/etcd/api/v3 v3.6.8
	go.etcd.io/etcd/client/v3 v3.6.8
	k8s.io/api v0.0.0
)

require (
	go.etcd.io/etcd/server/v3 v3.6.8 // indirect
	go.etcd.io/etcd/server/v3extra v9.9.9 // indirect
)

require go.uber.org/zap v1.27.0

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	k8s.io/cri-streaming v0.0.0 => ./staging/src/k8s.io/cri-streaming
	github.com/example/forked => github.com/example/forked v1.2.3
	// k8s.io/commented => ./staging/src/k8s.io/commented
)

replace k8s.io/streaming => ./staging/src/k8s.io/streaming
`;

Deno.test("parseStagingModules finds block and one-line replaces to ./staging, nothing else", () => {
  assert.deepEqual(parseStagingModules(GO_MOD), [
    "k8s.io/api",
    "k8s.io/client-go",
    "k8s.io/cri-streaming",
    "k8s.io/streaming",
  ]);
});

Deno.test("parseStagingModules of a go.mod without staging is empty", () => {
  assert.deepEqual(parseStagingModules("module x\n\ngo 1.26\n"), []);
});

Deno.test("requiredVersion reads block and one-line requires, indirect or not", () => {
  assert.equal(requiredVersion(GO_MOD, "go.etcd.io/etcd/server/v3"), "v3.6.8");
  assert.equal(requiredVersion(GO_MOD, "go.uber.org/zap"), "v1.27.0");
  assert.equal(requiredVersion(GO_MOD, "go.etcd.io/etcd/api/v3"), "v3.6.8");
});

Deno.test("requiredVersion does not match prefixes, replaces or absent modules", () => {
  assert.equal(requiredVersion(GO_MOD, "go.etcd.io/etcd/server"), undefined);
  assert.equal(requiredVersion(GO_MOD, "github.com/example/forked"), undefined);
  assert.equal(requiredVersion(GO_MOD, "k8s.io/absent"), undefined);
});

Deno.test("stagingVersion maps v1.X.Y to v0.X.Y", () => {
  assert.equal(stagingVersion("1.36.3"), "v0.36.3");
  assert.equal(stagingVersion("v1.36.3"), "v0.36.3");
  assert.equal(stagingVersion("1.37.0-rc.1"), "v0.37.0-rc.1");
  assert.throws(() => stagingVersion("2.0.0"), /expected a release like "1.36.3"/);
});
