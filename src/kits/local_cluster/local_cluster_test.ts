// Real control planes, no fakes. Each start takes seconds (the very first one on a machine may
// build the binaries for many minutes), so the tests share few clusters and use steps.
import assert from "node:assert/strict";
import { eventually } from "../../../tests/support/eventually.ts";
import { featureGateArgs, LocalCluster } from "./local_cluster.ts";

/** Minimal Kubernetes API calls with Deno's fetch, the way the framework talks to the cluster. */
class Api implements Disposable {
  #client: Deno.HttpClient;
  #cluster: LocalCluster;

  constructor(cluster: LocalCluster) {
    this.#cluster = cluster;
    this.#client = Deno.createHttpClient({ caCerts: [cluster.caCert] });
  }

  async request(method: string, path: string, body?: unknown): Promise<Response> {
    return await fetch(`${this.#cluster.server}${path}`, {
      method,
      client: this.#client,
      headers: {
        Authorization: `Bearer ${this.#cluster.token}`,
        "Content-Type": "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  async json(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const response = await this.request(method, path, body);
    const text = await response.text();
    assert.ok(response.ok, `${method} ${path}: HTTP ${response.status} ${text}`);
    return JSON.parse(text);
  }

  /** Waits until GET `path` answers 404. */
  async waitGone(path: string): Promise<void> {
    await eventually(`${path} to be gone`, async () => {
      const response = await this.request("GET", path);
      await response.body?.cancel();
      return response.status === 404;
    }, { interval: 0.25 });
  }

  [Symbol.dispose](): void {
    this.#client.close();
  }
}

/** Process ids whose command line mentions `text` (our processes all name the cluster folder). */
async function processesMentioning(text: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    try {
      const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`);
      if (cmdline.includes(text)) pids.push(Number(entry.name));
    } catch {
      // Exited while we looked: not ours to count anyway.
    }
  }
  return pids;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("LocalCluster runs a real API server that Deno's fetch and kubectl can use", async (t) => {
  await using cluster = await LocalCluster.start();
  using api = new Api(cluster);

  await t.step("it reports the pinned version", async () => {
    const version = await api.json("GET", "/version");
    assert.equal(version.gitVersion, "v1.36.3");
    assert.equal(cluster.version, "1.36.3");
    assert.match(cluster.server, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.match(cluster.etcdUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  await t.step("the admin token can create a namespace and a ConfigMap", async () => {
    await api.json("POST", "/api/v1/namespaces", { metadata: { name: "ns1" } });
    await api.json("POST", "/api/v1/namespaces/ns1/configmaps", {
      metadata: { name: "cm1" },
      data: { key: "value" },
    });
    const list = await api.json("GET", "/api/v1/namespaces");
    const names = (list.items as { metadata: { name: string } }[]).map((ns) => ns.metadata.name);
    assert.ok(names.includes("ns1"), `namespaces: ${names}`);
  });

  await t.step("requests without the token are not admins", async () => {
    using client = Deno.createHttpClient({ caCerts: [cluster.caCert] });
    const response = await fetch(`${cluster.server}/api/v1/namespaces`, { client });
    await response.body?.cancel();
    assert.ok([401, 403].includes(response.status), `HTTP ${response.status}`);
  });

  await t.step("kubectl works with the kubeconfig", async () => {
    const output = await new Deno.Command("kubectl", {
      args: ["--kubeconfig", cluster.kubeconfig, "get", "ns", "ns1", "-o", "name"],
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.ok(output.success, `kubectl failed: ${stderr}`);
    assert.equal(new TextDecoder().decode(output.stdout).trim(), "namespace/ns1");
  });

  await t.step("writeKubeconfig makes another kubeconfig for another server URL", async () => {
    const path = await cluster.writeKubeconfig("https://localhost:1");
    const config = JSON.parse(await Deno.readTextFile(path));
    assert.notEqual(path, cluster.kubeconfig);
    assert.equal(config.clusters[0].cluster.server, "https://localhost:1");
    assert.equal(config.users[0].user.token, cluster.token);
    assert.equal(config["current-context"], "local-cluster");
  });

  await t.step("a restarted API server keeps the data and the URL", async () => {
    const server = cluster.server;
    await cluster.stopApiserver();
    const down = await api.request("GET", "/version").then(
      async (response) => {
        await response.body?.cancel();
        return false;
      },
      () => true,
    );
    assert.ok(down, "the API server still answers after stopApiserver()");
    await cluster.startApiserver();
    assert.equal(cluster.server, server);
    const configMap = await api.json("GET", "/api/v1/namespaces/ns1/configmaps/cm1");
    assert.deepEqual(configMap.data, { key: "value" });
  });

  await t.step("stop() ends the processes and removes the folder, and can be repeated", async () => {
    assert.ok((await processesMentioning(cluster.directory)).length >= 2);
    await cluster.stop();
    assert.equal(await exists(cluster.directory), false);
    assert.deepEqual(await processesMentioning(cluster.directory), []);
    await cluster.stop();
  });
});

Deno.test("LocalCluster with a bad kube-apiserver flag fails with the apiserver's log", async () => {
  const error = await LocalCluster.start({ apiserverArgs: ["--no-such-flag"] }).then(
    async (cluster) => {
      await cluster.stop();
      assert.fail("must reject");
    },
    (error: Error) => error,
  );
  assert.match(error.message, /^kube-apiserver exited with code \d+ before it became ready/);
  assert.match(error.message, /unknown flag: --no-such-flag/);
  // The folder was removed and nothing of it keeps running.
  const folder = /\(([^()]*)\/logs\/kube-apiserver\.log\)/.exec(error.message)?.[1];
  assert.ok(folder, error.message);
  assert.equal(await exists(folder), false);
  assert.deepEqual(await processesMentioning(folder), []);
});

Deno.test("LocalCluster with controllers deletes namespaces and garbage", async (t) => {
  await using cluster = await LocalCluster.start({ controllers: ["namespace", "garbagecollector"] });
  using api = new Api(cluster);

  await t.step("a deleted namespace disappears with its contents", async () => {
    await api.json("POST", "/api/v1/namespaces", { metadata: { name: "doomed" } });
    await api.json("POST", "/api/v1/namespaces/doomed/configmaps", { metadata: { name: "cm" } });
    await api.json("DELETE", "/api/v1/namespaces/doomed");
    await api.waitGone("/api/v1/namespaces/doomed");
  });

  await t.step("an object whose owner is deleted is garbage-collected", async () => {
    await api.json("POST", "/api/v1/namespaces", { metadata: { name: "gc" } });
    const owner = await api.json("POST", "/api/v1/namespaces/gc/configmaps", {
      metadata: { name: "owner" },
    });
    const { uid } = owner.metadata as { uid: string };
    await api.json("POST", "/api/v1/namespaces/gc/configmaps", {
      metadata: {
        name: "owned",
        ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid }],
      },
    });
    await api.json("DELETE", "/api/v1/namespaces/gc/configmaps/owner");
    await api.waitGone("/api/v1/namespaces/gc/configmaps/owned");
  });
});

Deno.test("featureGates become one --feature-gates flag; bad names or values are refused before anything starts", () => {
  assert.deepEqual(featureGateArgs(undefined), []);
  assert.deepEqual(featureGateArgs({}), []);
  assert.deepEqual(featureGateArgs({ ShardedListAndWatch: true, Other: false }), [
    "--feature-gates=ShardedListAndWatch=true,Other=false",
  ]);
  assert.throws(() => featureGateArgs({ "A=B": true }), /featureGates must map gate names/);
  assert.throws(() => featureGateArgs({ A: "yes" as unknown as boolean }), /got "A": "yes"/);
});

Deno.test("LocalCluster with the ShardedListAndWatch gate filters lists by shardSelector", async () => {
  await using cluster = await LocalCluster.start({ featureGates: { ShardedListAndWatch: true } });
  using api = new Api(cluster);
  const all = "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')";
  // One hash value of 2^64: no object of the test has it (an empty range is an HTTP 500, never send one).
  const none = "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')";
  await api.json("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "cm" } });
  const list = (selector: string) =>
    api.json("GET", `/api/v1/namespaces/default/configmaps?shardSelector=${encodeURIComponent(selector)}`);
  const everything = await list(all);
  assert.deepEqual((everything.metadata as { shardInfo?: unknown }).shardInfo, { selector: all });
  assert.ok((everything.items as unknown[]).length >= 1);
  assert.deepEqual((await list(none)).items, []);
});
