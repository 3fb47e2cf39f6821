/**
 * `kopf generate crd`: the CRD generated from tests/fixtures/crd/gadget.ts (every mapped construct)
 * is accepted by the API server, `kubectl explain` shows its descriptions, `kubectl get` its printer
 * columns, and objects that break a marker are rejected by the API server with that marker's
 * reason; declarations without a faithful schema fail with one line that says what to write.
 */

import assert from "node:assert/strict";
import { parse } from "yaml";
import { ApiError } from "../src/api/errors.ts";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import type { Resource } from "../src/model/resource.ts";
import { applyCrds, freshNamespace, testCluster } from "./support/cluster.ts";
import { runKopf } from "./support/kopf_process.ts";
import { eventually } from "./support/eventually.ts";

const FIXTURES = ["tests/fixtures/crd/gadget.ts", "tests/fixtures/crd/schedule.ts"];

const GADGETS: Resource = {
  group: "crd.kopf.dev",
  version: "v1",
  plural: "gadgets",
  kind: "Gadget",
  singular: "gadget",
  namespaced: true,
  preferred: true,
  shortcuts: ["gd"],
  categories: [],
  verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
  subresources: ["status"],
};

/** A spec that every marker accepts. */
const VALID = {
  title: "A gadget",
  minReplicas: 1,
  exposure: "External",
  ports: [80, 443],
  disks: [{ name: "data", size: 10.5 }],
  labels: { app: "gadget" },
  schedule: { cron: "*/5 * * * *" },
  http: { path: "/", timeout: 2.5 },
  notBefore: "2030-01-01T00:00:00Z",
  comment: null,
  config: { anything: [1, "two", { three: 3 }] },
  owner: null,
  matrix: [[1, 2], [3]],
};

async function kubectl(kubeconfig: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command("kubectl", {
    args,
    env: { KUBECONFIG: kubeconfig },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

Deno.test("generate crd: the API server accepts the CRD, explains it, and enforces every marker", async () => {
  const { kubeconfig, client } = await testCluster();
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  try {
    const generated = await runKopf([
      "generate",
      "crd",
      ...FIXTURES,
      "--kind",
      "Gadget",
      "--group",
      "crd.kopf.dev",
      "--short-name",
      "gd",
      "-o",
      file,
    ]);
    assert.equal(generated.code, 0, generated.stderr);
    assert.equal(parse(await Deno.readTextFile(file)).metadata.name, "gadgets.crd.kopf.dev");

    const dryRun = await kubectl(kubeconfig, ["apply", "--dry-run=server", "-f", file]);
    assert.equal(dryRun.code, 0, dryRun.stderr);
    assert.match(dryRun.stdout, /gadgets\.crd\.kopf\.dev (created|configured|unchanged) \(server dry run\)/);
    await applyCrds(client, new URL(`file://${file}`));

    // The descriptions, once the API server publishes the schema (shortly after Established).
    const explained = await eventually("kubectl explain to know gadgets", async () => {
      const result = await kubectl(kubeconfig, ["explain", "gadgets.spec"]);
      return result.code === 0 ? result.stdout : undefined;
    });
    assert.match(explained, /What a gadget should be\./);
    assert.match(explained, /replicas\s+<integer> -required-\s+How many gadgets run\./);
    assert.match(explained, /disks\s+<\[\]Object> -required-\s+Its disks\./);
    assert.match(explained, /exposure\s+<string>\s+enum: Internal, External\s+Where it is reached from\./);
    const nested = await kubectl(kubeconfig, ["explain", "gadgets.spec.schedule"]);
    assert.match(nested.stdout, /cron\s+<string> -required-\s+A cron expression\./);

    const namespace = await freshNamespace(client, "crd-gen");
    const create = (name: string, spec: Record<string, unknown>) =>
      client.request<KubernetesObject>({
        method: "POST",
        path: resourcePath(GADGETS, { namespace }),
        body: { apiVersion: "crd.kopf.dev/v1", kind: "Gadget", metadata: { name }, spec },
      });

    // A valid object: accepted as it is, with the defaults filled in by the API server.
    const created = await create("valid", VALID);
    assert.equal((created.spec as { replicas: number }).replicas, 1, "@default 1");
    assert.equal((created.spec as { exposure: string }).exposure, "External");
    assert.deepEqual((created.spec as { config: unknown }).config, VALID.config, "@preserveUnknownFields");
    assert.equal((created.spec as { owner: unknown }).owner, null, "@nullable");
    const listed = await kubectl(kubeconfig, ["get", "gd", "-n", namespace]);
    assert.match(listed.stdout, /^NAME\s+REPLICAS\s+EXPOSURE\s+PHASE\s+/);
    assert.match(listed.stdout, /\nvalid\s+1\s+External\s+/);

    // Each marker broken once: the API server says which field and why.
    const broken: [string, Record<string, unknown>, RegExp][] = [
      ["pattern", { disks: [{ name: "Bad_Name", size: 1 }] }, /spec\.disks\[0\]\.name.*should match '\^\[a-z\]/],
      ["imported pattern", { schedule: { cron: "hourly" } }, /spec\.schedule\.cron.*should match/],
      ["maximum", { replicas: 11 }, /spec\.replicas.*should be less than or equal to 10/],
      ["minimum", { replicas: -1, minReplicas: -2 }, /spec\.replicas.*should be greater than or equal to 0/],
      ["alias minimum", { ports: [0] }, /spec\.ports\[0\].*should be greater than or equal to 1/],
      ["exclusiveMinimum", { disks: [{ name: "d", size: 0 }] }, /spec\.disks\[0\]\.size.*should be greater than 0/],
      ["exclusiveMaximum", { disks: [{ name: "d", size: 1024 }] }, /spec\.disks\[0\]\.size.*should be less than 1024/],
      ["maxLength", { title: "x".repeat(64) }, /spec\.title: Too long: may not be (longer|more) than 63/],
      ["minLength", { disks: [{ name: "", size: 1 }] }, /spec\.disks\[0\]\.name.*should be at least 1 chars long/],
      ["minItems", { disks: [] }, /spec\.disks.*should have at least 1 items/],
      ["maxItems", { ports: [1, 2, 3, 4, 5, 6, 7, 8, 9] }, /spec\.ports: Too many: 9: must have at most 8 items/],
      ["enum", { exposure: "Public" }, /spec\.exposure: Unsupported value: "Public": supported values: "Internal", /],
      ["required", { minReplicas: undefined }, /spec\.minReplicas: Required value/],
      ["nested required", { disks: [{ name: "d" }] }, /spec\.disks\[0\]\.size: Required value/],
      ["type", { replicas: 1.5 }, /spec\.replicas: Invalid value: "number": spec\.replicas in body must be of type/],
      ["format", { notBefore: "yesterday" }, /spec\.notBefore.*must be of type date-time/],
      ["validation", { replicas: 2, minReplicas: 3 }, /spec: Invalid value: .*minReplicas must not exceed replicas/],
      ["not nullable", { title: null }, /spec\.title: Required value/],
    ];
    for (const [marker, change, reason] of broken) {
      const error = await create(`broken-${marker.replaceAll(" ", "-").toLowerCase()}`, { ...VALID, ...change })
        .then(() => undefined, (error) => error);
      assert.ok(error instanceof ApiError, `${marker}: rejected (got ${error})`);
      assert.equal(error.status, 422, `${marker}: ${error.message}`);
      assert.match(error.message, reason, `${marker}: ${error.message}`);
    }
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("generate crd: declarations without a faithful schema fail with one line saying what to write", async () => {
  const cases: [string, RegExp][] = [
    ["Any", /^kopf: AnySpec\.value: any has no CRD schema; declare the type, or write unknown and mark/],
    ["Open", /^kopf: OpenSpec\.value: unknown has no CRD schema .*: mark OpenSpec\.value @preserveUnknownFields/],
    ["Mixed", /^kopf: MixedSpec\.value: the union string \| number has no CRD schema; write a union of string/],
    ["Date", /^kopf: DateSpec\.value: Date has no CRD schema .*; write string with @format date-time\.$/],
    ["Pair", /^kopf: PairSpec\.value: a tuple has no CRD schema; write an array \(T\[\]\) or an interface\.$/],
    ["Callback", /^kopf: CallbackSpec\.value: a function has no CRD schema; declare data only\.$/],
    ["Cache", /^kopf: CacheSpec\.value: Map has no CRD schema; write Record<string, T>\.$/],
  ];
  for (const [kind, message] of cases) {
    const result = await runKopf([
      "generate",
      "crd",
      "tests/fixtures/crd/unmappable.ts",
      "--kind",
      kind,
      "--group",
      "crd.kopf.dev",
    ]);
    const lines = result.stderr.split("\n").filter((line) => line.trim() && !line.startsWith("Download"));
    assert.equal(result.code, 1, `${kind}: ${result.stderr}`);
    assert.equal(result.stdout, "", "no CRD printed");
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0], message, kind);
  }
});
