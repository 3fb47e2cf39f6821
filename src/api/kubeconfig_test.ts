/** Tests of kubeconfig loading: TLS material, every auth kind, contexts, merging, exec plugins, errors. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { CredentialsError } from "./credentials.ts";
import { loadKubeconfig, locateKubeconfig } from "./kubeconfig.ts";
import { inTempDir, withEnv } from "../../tests/support/environment.ts";

const CA_PEM = "-----BEGIN CERTIFICATE-----\nQ0EgY2VydA==\n-----END CERTIFICATE-----\n";
const CERT_PEM = "-----BEGIN CERTIFICATE-----\nY2xpZW50IGNlcnQ=\n-----END CERTIFICATE-----\n";
const KEY_PEM = "-----BEGIN PRIVATE KEY-----\nY2xpZW50IGtleQ==\n-----END PRIVATE KEY-----\n";
const b64 = (text: string): string => btoa(text);
const EXEC_V1 = "client.authentication.k8s.io/v1";

type Entry = Record<string, unknown>;

/** A kubeconfig document with one cluster `c`, one user `u`, one context `ctx` (current). */
function config(
  { cluster = {}, user = {}, context = {}, extra = {} }: {
    cluster?: Entry;
    user?: Entry;
    context?: Entry;
    extra?: Entry;
  } = {},
): Entry {
  return {
    apiVersion: "v1",
    kind: "Config",
    "current-context": "ctx",
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443", ...cluster } }],
    users: [{ name: "u", user: { token: "static-token", ...user } }],
    contexts: [{ name: "ctx", context: { cluster: "c", user: "u", ...context } }],
    ...extra,
  };
}

async function writeConfig(dir: string, doc: Entry | string, name = "config"): Promise<string> {
  const path = join(dir, name);
  await Deno.writeTextFile(path, typeof doc === "string" ? doc : stringify(doc));
  return path;
}

/** Runs `fn` in a fresh temporary folder, removed afterwards. */

/** Asserts that loading fails with a one-line CredentialsError whose message matches all patterns. */
async function assertLoadFails(
  options: { path?: string; context?: string },
  ...patterns: (string | RegExp)[]
): Promise<CredentialsError> {
  const error = await loadKubeconfig(options).then(
    () => assert.fail("expected a CredentialsError"),
    (error: unknown) => error,
  );
  assert.ok(error instanceof CredentialsError, `not a CredentialsError: ${error}`);
  assert.ok(!error.message.includes("\n"), `not one line: ${JSON.stringify(error.message)}`);
  for (const pattern of patterns) {
    if (typeof pattern === "string") {
      assert.ok(error.message.includes(pattern), `"${pattern}" not in: ${error.message}`);
    } else assert.match(error.message, pattern);
  }
  return error;
}

Deno.test("locateKubeconfig: explicit path, then the KUBECONFIG list, then the home file", () => {
  assert.deepEqual(locateKubeconfig("/x", "/a:/b", "/h"), { files: ["/x"], origin: "path" });
  assert.deepEqual(locateKubeconfig(undefined, "/a::/b:", "/h"), { files: ["/a", "/b"], origin: "KUBECONFIG" });
  assert.deepEqual(locateKubeconfig(undefined, "", "/h"), { files: ["/h"], origin: "home" });
  assert.equal(locateKubeconfig(undefined, undefined, undefined), undefined);
});

Deno.test("inline certificate data: PEM strings for the HTTP client, server, namespace, source", async () => {
  await inTempDir(async (dir) => {
    const path = await writeConfig(
      dir,
      config({
        cluster: {
          server: "https://127.0.0.1:6443//",
          "certificate-authority-data": b64(CA_PEM),
          "tls-server-name": "kubernetes.default",
          "proxy-url": "http://proxy:3128",
        },
        user: { token: undefined, "client-certificate-data": b64(CERT_PEM), "client-key-data": b64(KEY_PEM) },
        context: { namespace: "team-a" },
      }),
    );
    const credentials = await loadKubeconfig({ path });
    assert.equal(credentials.server, "https://127.0.0.1:6443");
    assert.deepEqual(credentials.tls, {
      caCerts: [CA_PEM],
      cert: CERT_PEM,
      key: KEY_PEM,
      insecure: false,
      serverName: "kubernetes.default",
      proxyUrl: "http://proxy:3128",
    });
    assert.equal(credentials.defaultNamespace, "team-a");
    assert.equal(credentials.source, `kubeconfig ${path} (context "ctx")`);
    assert.equal(await credentials.authorization(), undefined);
  });
});

Deno.test("certificate files: relative paths resolve against the kubeconfig's folder", async () => {
  await inTempDir(async (dir) => {
    await Deno.mkdir(join(dir, "pki"));
    await Deno.writeTextFile(join(dir, "pki", "ca.crt"), CA_PEM);
    await Deno.writeTextFile(join(dir, "pki", "u.crt"), CERT_PEM);
    await Deno.writeTextFile(join(dir, "pki", "u.key"), KEY_PEM.replaceAll("PRIVATE KEY", "EC PRIVATE KEY"));
    const path = await writeConfig(
      dir,
      config({
        cluster: { "certificate-authority": "pki/ca.crt", "insecure-skip-tls-verify": true },
        user: { "client-certificate": "pki/u.crt", "client-key": join(dir, "pki", "u.key") },
      }),
    );
    const credentials = await loadKubeconfig({ path });
    assert.deepEqual(credentials.tls.caCerts, [CA_PEM]);
    assert.equal(credentials.tls.cert, CERT_PEM);
    assert.match(credentials.tls.key!, /BEGIN EC PRIVATE KEY/);
    assert.equal(credentials.tls.insecure, true);
    assert.equal(credentials.defaultNamespace, undefined);
  });
});

Deno.test("static token: Bearer header; cheap per call, no file re-read, no YAML re-parse", async () => {
  await inTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "ca.crt"), CA_PEM);
    const path = await writeConfig(dir, config({ cluster: { "certificate-authority": "ca.crt" } }));
    const credentials = await loadKubeconfig({ path });
    assert.equal(await credentials.authorization(), "Bearer static-token");
    assert.equal(credentials.fixedAuthorization, "Bearer static-token", "a request takes it without a promise");

    // Nothing on disk is needed any more: per-call resolution reads neither the kubeconfig nor the CA.
    await Deno.remove(path);
    await Deno.remove(join(dir, "ca.crt"));
    const calls = 20_000;
    const started = performance.now();
    for (let i = 0; i < calls; i++) await credentials.authorization();
    const perCallUs = (performance.now() - started) * 1000 / calls;
    assert.equal(await credentials.authorization(), "Bearer static-token");
    assert.ok(perCallUs < 200, `authorization() took ${perCallUs.toFixed(1)} µs per call`);
    console.log(`authorization() with a static token: ${perCallUs.toFixed(1)} µs per call`);
  });
});

Deno.test("JSON and YAML's JSON-like flow style both load (JSON skips the YAML parser)", async () => {
  await inTempDir(async (dir) => {
    const json = await writeConfig(dir, JSON.stringify(config({ context: { namespace: "from-json" } }), null, 2));
    const fromJson = await loadKubeconfig({ path: json });
    assert.equal(fromJson.server, "https://127.0.0.1:6443");
    assert.equal(fromJson.defaultNamespace, "from-json");
    assert.equal(await fromJson.authorization(), "Bearer static-token");

    const flow = "{current-context: ctx, clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}], " +
      "users: [{name: u, user: {token: flow-token}}], contexts: [{name: ctx, context: {cluster: c, user: u}}]}";
    const fromFlow = await loadKubeconfig({ path: await writeConfig(dir, flow, "flow") });
    assert.equal(fromFlow.server, "https://127.0.0.1:6443");
    assert.equal(await fromFlow.authorization(), "Bearer flow-token");
  });
});

Deno.test("tokenFile: relative to the kubeconfig, trimmed, re-read after invalidate()", async () => {
  await inTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "token"), "file-token-1\n");
    const path = await writeConfig(dir, config({ user: { token: "ignored-static", tokenFile: "token" } }));
    const credentials = await loadKubeconfig({ path });
    assert.equal(await credentials.authorization(), "Bearer file-token-1");
    assert.equal(credentials.fixedAuthorization, undefined, "a token file is re-read: never fixed");

    await Deno.writeTextFile(join(dir, "token"), "file-token-2\n");
    assert.equal(await credentials.authorization(), "Bearer file-token-1", "re-read before it is due");
    credentials.invalidate();
    assert.equal(await credentials.authorization(), "Bearer file-token-2");
  });
});

Deno.test("tokenFile: a missing file fails the load, naming the kubeconfig and the token file", async () => {
  await inTempDir(async (dir) => {
    const path = await writeConfig(dir, config({ user: { tokenFile: "absent-token" } }));
    await assertLoadFails({ path }, `kubeconfig ${path}:`, `token file ${join(dir, "absent-token")} not found`);
  });
});

Deno.test("basic auth: Basic base64(user:password)", async () => {
  await inTempDir(async (dir) => {
    const path = await writeConfig(dir, config({ user: { token: undefined, username: "admin", password: "pä55" } }));
    const credentials = await loadKubeconfig({ path });
    const header = await credentials.authorization();
    assert.equal(header, "Basic YWRtaW46cMOkNTU=");
    const decoded = new TextDecoder().decode(Uint8Array.from(atob(header!.slice(6)), (c) => c.charCodeAt(0)));
    assert.equal(decoded, "admin:pä55");
  });
});

Deno.test("a context without a user is anonymous", async () => {
  await inTempDir(async (dir) => {
    const doc = config({ cluster: { server: "http://127.0.0.1:8080" } });
    doc.contexts = [{ name: "ctx", context: { cluster: "c" } }];
    const credentials = await loadKubeconfig({ path: await writeConfig(dir, doc) });
    assert.equal(credentials.server, "http://127.0.0.1:8080");
    assert.equal(await credentials.authorization(), undefined);
  });
});

Deno.test("named context: chosen over current-context; its cluster, user and namespace", async () => {
  await inTempDir(async (dir) => {
    const doc = config({
      extra: {
        clusters: [
          { name: "c", cluster: { server: "https://one:6443" } },
          { name: "c2", cluster: { server: "https://two:6443" } },
        ],
        users: [{ name: "u", user: { token: "t1" } }, { name: "u2", user: { token: "t2" } }],
        contexts: [
          { name: "ctx", context: { cluster: "c", user: "u" } },
          { name: "other", context: { cluster: "c2", user: "u2", namespace: "ns2" } },
        ],
      },
    });
    const path = await writeConfig(dir, doc);
    const byDefault = await loadKubeconfig({ path });
    assert.equal(byDefault.server, "https://one:6443");
    assert.equal(await byDefault.authorization(), "Bearer t1");
    const named = await loadKubeconfig({ path, context: "other" });
    assert.equal(named.server, "https://two:6443");
    assert.equal(await named.authorization(), "Bearer t2");
    assert.equal(named.defaultNamespace, "ns2");
    assert.equal(named.source, `kubeconfig ${path} (context "other")`);
  });
});

Deno.test("KUBECONFIG list: merged kubectl-style, first definition and first current-context win", async () => {
  await inTempDir(async (dir) => {
    const first = await writeConfig(
      dir,
      {
        "current-context": "one",
        clusters: [{ name: "shared", cluster: { server: "https://first:6443" } }],
        users: [{ name: "shared", user: { token: "first-token" } }],
        contexts: [{ name: "one", context: { cluster: "shared", user: "shared" } }],
      },
      "first",
    );
    const second = await writeConfig(
      dir,
      {
        "current-context": "two",
        clusters: [
          { name: "shared", cluster: { server: "https://second:6443" } },
          { name: "own", cluster: { server: "https://own:6443" } },
        ],
        users: [{ name: "shared", user: { token: "second-token" } }],
        contexts: [{ name: "two", context: { cluster: "own", user: "shared" } }],
      },
      "second",
    );
    const missing = join(dir, "missing");
    await withEnv({ KUBECONFIG: [first, missing, second].join(":") }, async () => {
      const current = await loadKubeconfig();
      assert.equal(current.server, "https://first:6443");
      assert.equal(current.source, `kubeconfig ${first}:${missing}:${second} (context "one")`);
      const two = await loadKubeconfig({ context: "two" });
      assert.equal(two.server, "https://own:6443");
      assert.equal(await two.authorization(), "Bearer first-token");
    });
    await withEnv({ KUBECONFIG: `${missing}:${missing}2` }, async () => {
      await assertLoadFails({}, "none of the files in KUBECONFIG exists", missing);
    });
  });
});

/** Writes an exec credential plugin that counts its calls and answers with a short-lived token. */
async function writePlugin(dir: string): Promise<{ calls: () => Promise<number> }> {
  const script = [
    "#!/bin/sh",
    'dir=$(dirname "$0")',
    'n=$(cat "$dir/calls" 2>/dev/null || echo 0)',
    "n=$((n+1))",
    'echo "$n" > "$dir/calls"',
    'expires=$(date -u -d "+${LIFETIME} seconds" +%Y-%m-%dT%H:%M:%S.%3NZ)',
    'printf \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",' +
    '"status":{"token":"exec-%s","expirationTimestamp":"%s"}}\\n\' "$n" "$expires"',
    "",
  ].join("\n");
  await Deno.mkdir(join(dir, "bin"));
  await Deno.writeTextFile(join(dir, "bin", "plugin.sh"), script, { mode: 0o755 });
  return {
    calls: async () => Number((await Deno.readTextFile(join(dir, "bin", "calls"))).trim()),
  };
}

Deno.test("exec plugin: called once until the token expires, again after expiry and after invalidate()", async () => {
  await inTempDir(async (dir) => {
    const plugin = await writePlugin(dir);
    const exec = {
      apiVersion: "client.authentication.k8s.io/v1",
      command: "./bin/plugin.sh", // relative with a slash: against the kubeconfig's folder
      env: [{ name: "LIFETIME", value: "2" }],
      interactiveMode: "Never",
    };
    const path = await writeConfig(dir, config({ user: { token: undefined, exec } }));
    const credentials = await loadKubeconfig({ path });
    assert.equal(await plugin.calls(), 1, "called once at load to fail early");

    const started = Date.now();
    for (let i = 0; i < 5; i++) assert.equal(await credentials.authorization(), "Bearer exec-1");
    const concurrent = await Promise.all([1, 2, 3].map(() => credentials.authorization()));
    assert.deepEqual(concurrent, ["Bearer exec-1", "Bearer exec-1", "Bearer exec-1"]);
    assert.ok(Date.now() - started < 1500, "the checks before expiry took too long to be meaningful");
    assert.equal(await plugin.calls(), 1, "not called again before expiry");

    await new Promise((resolve) => setTimeout(resolve, 2300));
    assert.equal(await credentials.authorization(), "Bearer exec-2");
    assert.equal(await credentials.authorization(), "Bearer exec-2");
    assert.equal(await plugin.calls(), 2, "called again once after expiry");

    // A burst of 401s: every failed request invalidates, yet the plugin runs once.
    credentials.invalidate();
    const renewed = credentials.authorization();
    credentials.invalidate();
    credentials.invalidate();
    assert.deepEqual(await Promise.all([renewed, credentials.authorization()]), ["Bearer exec-3", "Bearer exec-3"]);
    assert.equal(await credentials.authorization(), "Bearer exec-3");
    assert.equal(await plugin.calls(), 3, "called again once after invalidate()");

    credentials.invalidate(); // the renewed token was rejected too: renew again
    assert.equal(await credentials.authorization(), "Bearer exec-4");
    assert.equal(await plugin.calls(), 4);
  });
});

Deno.test("exec plugin with a client certificate: it becomes the TLS material", async () => {
  await inTempDir(async (dir) => {
    const status = { clientCertificateData: CERT_PEM, clientKeyData: KEY_PEM };
    await Deno.writeTextFile(join(dir, "credential.json"), JSON.stringify({ kind: "ExecCredential", status }));
    const plugin = join(dir, "cert-plugin.sh");
    await Deno.writeTextFile(plugin, `#!/bin/sh\ncat "${join(dir, "credential.json")}"\n`, { mode: 0o755 });
    const exec = { apiVersion: EXEC_V1, command: plugin };
    const path = await writeConfig(dir, config({ user: { token: undefined, exec } }));
    const credentials = await loadKubeconfig({ path });
    assert.equal(credentials.tls.cert, CERT_PEM);
    assert.equal(credentials.tls.key, KEY_PEM);
    assert.equal(await credentials.authorization(), undefined);
  });
});

Deno.test("exec plugin errors: one line naming the kubeconfig, the command and its stderr", async () => {
  await inTempDir(async (dir) => {
    const failing = join(dir, "failing.sh");
    await Deno.writeTextFile(failing, "#!/bin/sh\necho 'error: you must log in first' >&2\necho 'more' >&2\nexit 3\n", {
      mode: 0o755,
    });
    const exec = { apiVersion: EXEC_V1, command: failing };
    const path = await writeConfig(dir, config({ user: { token: undefined, exec } }));
    await assertLoadFails(
      { path },
      `kubeconfig ${path}:`,
      `exec plugin "${failing}" of user "u" failed: error: you must log in first`,
    );

    const absent = await writeConfig(
      dir,
      config({ user: { token: undefined, exec: { apiVersion: EXEC_V1, command: "kopf-no-such-plugin-xyz" } } }),
      "absent",
    );
    await assertLoadFails(
      { path: absent },
      `kubeconfig ${absent}:`,
      `"kopf-no-such-plugin-xyz"`,
      "not found; install it or fix users[].user.exec.command",
    );

    const installHint = "kopf-no-such-plugin-xyz is required to log in.\nInstall it with: brew install xyz";
    const hinted = await writeConfig(
      dir,
      config({
        user: { token: undefined, exec: { apiVersion: EXEC_V1, command: "kopf-no-such-plugin-xyz", installHint } },
      }),
      "hinted",
    );
    await assertLoadFails(
      { path: hinted },
      `exec plugin command "kopf-no-such-plugin-xyz" of user "u" not found; kopf-no-such-plugin-xyz is required to ` +
        "log in. Install it with: brew install xyz",
    );

    const silent = join(dir, "silent.sh");
    await Deno.writeTextFile(silent, "#!/bin/sh\nexit 3\n", { mode: 0o755 });
    const quiet = await writeConfig(
      dir,
      config({ user: { token: undefined, exec: { apiVersion: EXEC_V1, command: silent } } }),
      "quiet",
    );
    await assertLoadFails({ path: quiet }, `exec plugin "${silent}" of user "u" failed: it exited with code 3`);
  });
});

Deno.test("errors: file missing, invalid YAML, empty file", async () => {
  await inTempDir(async (dir) => {
    const missing = join(dir, "nope");
    await assertLoadFails({ path: missing }, `kubeconfig ${missing}: file not found`);
    const bad = await writeConfig(dir, "clusters: [\n  - name: c\n contexts: {", "bad");
    const error = await assertLoadFails({ path: bad }, `kubeconfig ${bad}: not valid YAML: `);
    assert.ok(error.message.length < 200, error.message);
    const empty = await writeConfig(dir, "\n", "empty");
    await assertLoadFails({ path: empty }, `kubeconfig ${empty}: the file is empty`);
  });
});

Deno.test("errors: no contexts, current-context not set, named context not found", async () => {
  await inTempDir(async (dir) => {
    const none = await writeConfig(dir, { ...config(), contexts: [] }, "none");
    await assertLoadFails({ path: none }, `kubeconfig ${none}: defines no contexts`);

    const unset = await writeConfig(dir, { ...config(), "current-context": "" }, "unset");
    await assertLoadFails({ path: unset }, `kubeconfig ${unset}: current-context is not set`, `"ctx"`, "--context");

    const path = await writeConfig(dir, config());
    await assertLoadFails(
      { path, context: "prod" },
      `kubeconfig ${path}: context "prod" not found`,
      `available contexts: "ctx"`,
    );
    const dangling = await writeConfig(dir, { ...config(), "current-context": "gone" }, "dangling");
    await assertLoadFails({ path: dangling }, `kubeconfig ${dangling}: current-context "gone" not found`);
  });
});

Deno.test("errors: the context's cluster or user missing; a cluster without server", async () => {
  await inTempDir(async (dir) => {
    const noCluster = await writeConfig(dir, config({ context: { cluster: "elsewhere" } }), "nocluster");
    await assertLoadFails({ path: noCluster }, `kubeconfig ${noCluster}:`, `cluster "elsewhere"`, "not found", `"c"`);
    const noUser = await writeConfig(dir, config({ context: { user: "nobody" } }), "nouser");
    await assertLoadFails({ path: noUser }, `kubeconfig ${noUser}:`, `user "nobody"`, "not found", `"u"`);
    const noServer = await writeConfig(dir, config({ cluster: { server: undefined } }), "noserver");
    await assertLoadFails({ path: noServer }, `kubeconfig ${noServer}:`, `cluster "c"`, "has no server");
    const badServer = await writeConfig(dir, config({ cluster: { server: "127.0.0.1:6443" } }), "badserver");
    await assertLoadFails({ path: badServer }, `kubeconfig ${badServer}:`, `cluster "c"`, "invalid server URL");
  });
});

Deno.test("errors: unused broken entries do not break the load", async () => {
  await inTempDir(async (dir) => {
    const doc = config();
    (doc.clusters as Entry[]).push({ name: "broken", cluster: {} });
    (doc.contexts as Entry[]).push({ name: "broken", context: {} });
    const credentials = await loadKubeconfig({ path: await writeConfig(dir, doc) });
    assert.equal(credentials.server, "https://127.0.0.1:6443");
  });
});

Deno.test("errors: referenced certificate and key files missing", async () => {
  await inTempDir(async (dir) => {
    const ca = await writeConfig(dir, config({ cluster: { "certificate-authority": "ca.crt" } }), "ca");
    await assertLoadFails(
      { path: ca },
      `kubeconfig ${ca}:`,
      `certificate-authority file of cluster "c" (${join(dir, "ca.crt")}) not found`,
    );
    await Deno.writeTextFile(join(dir, "u.key"), KEY_PEM);
    const cert = await writeConfig(
      dir,
      config({ user: { "client-certificate": "u.crt", "client-key": "u.key" } }),
      "cert",
    );
    await assertLoadFails(
      { path: cert },
      `kubeconfig ${cert}:`,
      `client-certificate file of user "u" (${join(dir, "u.crt")}) not found`,
    );
    await Deno.writeTextFile(join(dir, "u.crt"), CERT_PEM);
    const key = await writeConfig(
      dir,
      config({ user: { "client-certificate": "u.crt", "client-key": "v.key" } }),
      "key",
    );
    await assertLoadFails(
      { path: key },
      `kubeconfig ${key}:`,
      `client-key file of user "u" (${join(dir, "v.key")}) not found`,
    );
  });
});

Deno.test("errors: bad certificate data, half a key pair, impersonation", async () => {
  await inTempDir(async (dir) => {
    const notB64 = await writeConfig(dir, config({ cluster: { "certificate-authority-data": "%%%" } }), "notb64");
    await assertLoadFails({ path: notB64 }, `kubeconfig ${notB64}:`, "certificate-authority-data", "not valid base64");
    const notPem = await writeConfig(dir, config({ cluster: { "certificate-authority-data": b64("DER?") } }), "notpem");
    await assertLoadFails({ path: notPem }, `kubeconfig ${notPem}:`, "certificate-authority-data", "is not PEM");
    const half = await writeConfig(dir, config({ user: { "client-certificate-data": b64(CERT_PEM) } }), "half");
    await assertLoadFails({ path: half }, `kubeconfig ${half}:`, "client-certificate but no client-key");
    const imp = await writeConfig(dir, config({ user: { as: "admin", "as-groups": ["system:masters"] } }), "imp");
    await assertLoadFails({ path: imp }, `kubeconfig ${imp}:`, "impersonation (as, as-groups)");
  });
});

Deno.test("exec plugin: args, env, and KUBERNETES_EXEC_INFO with the cluster only when provideClusterInfo is set", async () => {
  await inTempDir(async (dir) => {
    const script = [
      "#!/bin/sh",
      'dir=$(dirname "$0")',
      'printf "%s" "$KUBERNETES_EXEC_INFO" > "$dir/info.json"',
      'printf "%s|%s|%s" "$1" "$2" "$GREETING" > "$dir/seen"',
      `printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}'`,
      "",
    ].join("\n");
    await Deno.writeTextFile(join(dir, "plugin.sh"), script, { mode: 0o755 });
    const exec = {
      apiVersion: "client.authentication.k8s.io/v1beta1",
      command: "./plugin.sh",
      args: ["--region", "eu"],
      env: [{ name: "GREETING", value: "first" }, { name: "GREETING", value: "hello" }],
      provideClusterInfo: true,
    };
    const cluster = {
      "certificate-authority-data": b64(CA_PEM),
      "tls-server-name": "api.internal",
      extensions: [
        { name: "other", extension: { ignored: true } },
        { name: "client.authentication.k8s.io/exec", extension: { audience: "kopf" } },
      ],
    };
    const path = await writeConfig(dir, config({ cluster, user: { token: undefined, exec } }));
    const credentials = await loadKubeconfig({ path });
    assert.equal(await credentials.authorization(), "Bearer t");
    assert.equal(await Deno.readTextFile(join(dir, "seen")), "--region|eu|hello");
    assert.deepEqual(JSON.parse(await Deno.readTextFile(join(dir, "info.json"))), {
      apiVersion: "client.authentication.k8s.io/v1beta1",
      kind: "ExecCredential",
      spec: {
        interactive: false,
        cluster: {
          server: "https://127.0.0.1:6443",
          "tls-server-name": "api.internal",
          "certificate-authority-data": b64(CA_PEM),
          config: { audience: "kopf" },
        },
      },
    });

    const withoutInfo = await writeConfig(
      dir,
      config({ cluster, user: { token: undefined, exec: { ...exec, provideClusterInfo: false } } }),
      "without-info",
    );
    await loadKubeconfig({ path: withoutInfo });
    assert.deepEqual(JSON.parse(await Deno.readTextFile(join(dir, "info.json"))), {
      apiVersion: "client.authentication.k8s.io/v1beta1",
      kind: "ExecCredential",
      spec: { interactive: false },
    });
  });
});

Deno.test("exec plugin: configurations kubectl refuses, and interactiveMode Always, fail the load", async () => {
  await inTempDir(async (dir) => {
    const cases: [Entry, string][] = [
      [{ command: "true" }, `exec of user "u" has no apiVersion; set users[].user.exec.apiVersion`],
      [
        { apiVersion: "client.authentication.k8s.io/v1alpha1", command: "true" },
        `unsupported apiVersion "client.authentication.k8s.io/v1alpha1"`,
      ],
      [{ apiVersion: EXEC_V1 }, `exec of user "u" has no command`],
      [{ apiVersion: EXEC_V1, command: "true", interactiveMode: "Always" }, "an operator has no terminal"],
      [{ apiVersion: EXEC_V1, command: "true", interactiveMode: "Sometimes" }, `invalid interactiveMode "Sometimes"`],
      [{ apiVersion: EXEC_V1, command: "true", env: [{ value: "x" }] }, 'an exec.env entry of user "u" has no name'],
      [{ apiVersion: EXEC_V1, command: "true", args: "--all" }, 'exec.args of user "u" must be a list, not a string'],
    ];
    for (const [index, [exec, message]] of cases.entries()) {
      const path = await writeConfig(dir, config({ user: { token: undefined, exec } }), `case-${index}`);
      await assertLoadFails({ path }, `kubeconfig ${path}: `, message);
    }
  });
});

Deno.test("exec plugin: output that is not a usable ExecCredential fails with what is wrong", async () => {
  await inTempDir(async (dir) => {
    const cases: [string, string][] = [
      ["", "printed nothing; it must print an ExecCredential"],
      ["Please log in", "printed not JSON: "],
      [JSON.stringify({ kind: "Status" }), `printed a "Status" instead of an ExecCredential`],
      [JSON.stringify({ kind: "ExecCredential" }), "printed an ExecCredential without status"],
      [JSON.stringify({ kind: "ExecCredential", status: {} }), "with neither status.token nor a client certificate"],
      [
        JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1beta1", status: { token: "t" } }),
        `answered with apiVersion "client.authentication.k8s.io/v1beta1", not ${EXEC_V1}`,
      ],
      [JSON.stringify({ status: { token: 42 } }), "printed a status.token that is the number 42, not a string"],
      [JSON.stringify({ status: { clientCertificateData: CERT_PEM } }), "only one of clientCertificateData and"],
      [
        JSON.stringify({ status: { clientCertificateData: "x", clientKeyData: KEY_PEM } }),
        "status.clientCertificateData printed by exec plugin",
      ],
      [
        JSON.stringify({ status: { token: "t", expirationTimestamp: "tomorrow" } }),
        `status.expirationTimestamp "tomorrow", which is not an RFC 3339 time`,
      ],
    ];
    for (const [index, [output, message]] of cases.entries()) {
      await Deno.writeTextFile(join(dir, `output-${index}`), output);
      const plugin = join(dir, `plugin-${index}.sh`);
      await Deno.writeTextFile(plugin, `#!/bin/sh\ncat "${join(dir, `output-${index}`)}"\n`, { mode: 0o755 });
      const exec = { apiVersion: EXEC_V1, command: plugin };
      const path = await writeConfig(dir, config({ user: { token: undefined, exec } }), `case-${index}`);
      await assertLoadFails({ path }, `kubeconfig ${path}: `, message);
    }
  });
});

/** An unsigned JWT whose payload has the given claims. */
function jwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, "").replace(/\+/g, "-");
  return `${part({ alg: "none" })}.${part(claims)}.`;
}

Deno.test("auth-provider: the stored token is the bearer token; an expired one is refused with a hint", async () => {
  await inTempDir(async (dir) => {
    const user = (authProvider: Entry) => config({ user: { token: undefined, "auth-provider": authProvider } });
    const future = new Date(Date.now() + 3600_000).toISOString();
    const gcp = await writeConfig(
      dir,
      user({ name: "gcp", config: { "access-token": "ya29.token", expiry: future, "cmd-path": "gcloud" } }),
      "gcp",
    );
    assert.equal(await (await loadKubeconfig({ path: gcp })).authorization(), "Bearer ya29.token");

    const idToken = jwt({ iss: "https://issuer", exp: Math.floor(Date.now() / 1000) + 3600 });
    const oidc = await writeConfig(
      dir,
      user({ name: "oidc", config: { "id-token": idToken, "refresh-token": "r", "access-token": "unused" } }),
      "oidc",
    );
    assert.equal(await (await loadKubeconfig({ path: oidc })).authorization(), `Bearer ${idToken}`);

    const stale = await writeConfig(
      dir,
      user({ name: "gcp", config: { "access-token": "ya29.old", expiry: "2020-01-01T00:00:00Z" } }),
      "stale",
    );
    await assertLoadFails(
      { path: stale },
      `kubeconfig ${stale}: the gcp token of user "u" expired at 2020-01-01T00:00:00.000Z`,
      "refresh it by running a kubectl command with this context",
    );
    const expiredJwt = jwt({ exp: 1_600_000_000 });
    const staleOidc = await writeConfig(dir, user({ name: "oidc", config: { "id-token": expiredJwt } }), "stale-oidc");
    await assertLoadFails({ path: staleOidc }, `the oidc token of user "u" expired at 2020-09-13T12:26:40.000Z`);

    const empty = await writeConfig(dir, user({ name: "oidc", config: { "refresh-token": "r" } }), "empty");
    await assertLoadFails({ path: empty }, `the oidc auth-provider of user "u" has no token stored`);
  });
});

Deno.test("errors: invalid YAML names the line; wrong types and conflicting fields are refused as by kubectl", async () => {
  await inTempDir(async (dir) => {
    const nested = await writeConfig(dir, "clusters: [\n  - name: c\n contexts: {", "nested");
    await assertLoadFails(
      { path: nested },
      `kubeconfig ${nested}: not valid YAML: Nested mappings are not allowed in compact mappings at line 2, column 11:`,
    );
    const twice = await writeConfig(dir, "current-context: a\ncurrent-context: b\n", "twice");
    await assertLoadFails({ path: twice }, `kubeconfig ${twice}: not valid YAML: Map keys must be unique at line 2`);
    const list = await writeConfig(dir, "- clusters\n", "list");
    await assertLoadFails({ path: list }, `kubeconfig ${list}: not a kubeconfig: expected a mapping`, "found a list");

    const cases: [Entry, string][] = [
      [{ ...config(), clusters: { c: {} } }, "clusters of the kubeconfig must be a list, not a mapping"],
      [
        config({ user: { token: 123 } }),
        `token of user "u" must be a string (quote it in the YAML), not the number 123`,
      ],
      [config({ cluster: { "insecure-skip-tls-verify": "maybe" } }), "must be true or false, not a string"],
      [
        config({ cluster: { "certificate-authority": "ca.crt", "certificate-authority-data": b64(CA_PEM) } }),
        `both certificate-authority and certificate-authority-data are set of cluster "c"; keep one of them`,
      ],
      [config({ user: { username: "admin", password: "p" } }), `user "u" has a username/password and another way`],
      [
        config({ user: { token: undefined, exec: { command: "x" }, "auth-provider": { name: "oidc" } } }),
        `user "u" has both exec and auth-provider`,
      ],
      [config({ cluster: { "proxy-url": "not a url" } }), `proxy-url "not a url" of cluster "c" is not a URL`],
    ];
    for (const [index, [doc, message]] of cases.entries()) {
      const path = await writeConfig(dir, doc, `case-${index}`);
      await assertLoadFails({ path }, `kubeconfig ${path}: `, message);
    }

    // kubectl reads YAML 1.1, where an unquoted yes is true.
    const text = stringify(config()).replace(/^( +)server:/m, "$1insecure-skip-tls-verify: yes\n$1server:");
    const yes = await writeConfig(dir, text, "yes");
    assert.equal((await loadKubeconfig({ path: yes })).tls.insecure, true);
  });
});

/** Runs openssl; false if it is not installed. */
async function openssl(dir: string, ...args: string[]): Promise<void> {
  const output = await new Deno.Command("openssl", { args, cwd: dir, stdout: "null", stderr: "piped" }).output();
  if (!output.success) throw new Error(`openssl ${args.join(" ")}: ${new TextDecoder().decode(output.stderr)}`);
}

const hasOpenssl = await new Deno.Command("openssl", { args: ["version"], stdout: "null", stderr: "null" }).output()
  .then((output) => output.success, () => false);

/** A CA, a server certificate for 127.0.0.1 signed by it, and a client certificate, as files in `dir`. */
async function issueCertificates(dir: string): Promise<void> {
  const ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
  await openssl(dir, ...`req -x509 ${ec} -days 1 -subj /CN=test-ca -keyout ca.key -out ca.crt`.split(" "));
  await openssl(dir, ...`req ${ec} -subj /CN=127.0.0.1 -keyout server.key -out server.csr`.split(" "));
  await Deno.writeTextFile(join(dir, "ext"), "subjectAltName=IP:127.0.0.1\n");
  await openssl(
    dir,
    ..."x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile ext -out server.crt"
      .split(" "),
  );
  await openssl(
    dir,
    ..."req -x509 -newkey rsa:2048 -nodes -days 1 -subj /O=system:masters/CN=admin -keyout client.key -out client.crt"
      .split(" "),
  );
}

Deno.test({
  name: "end to end: Deno.createHttpClient with the TLS material and the header reaches a TLS server",
  ignore: !hasOpenssl,
  async fn() {
    await inTempDir(async (dir) => {
      await issueCertificates(dir);

      const seen: (string | null)[] = [];
      const server = Deno.serve({
        hostname: "127.0.0.1",
        port: 0,
        cert: await Deno.readTextFile(join(dir, "server.crt")),
        key: await Deno.readTextFile(join(dir, "server.key")),
        onListen: () => {},
      }, (request) => {
        seen.push(request.headers.get("authorization"));
        return Response.json({ gitVersion: "v1.99.0" });
      });
      try {
        const read = (name: string) => Deno.readTextFile(join(dir, name)).then(b64);
        const path = await writeConfig(
          dir,
          config({
            cluster: {
              server: `https://127.0.0.1:${server.addr.port}`,
              "certificate-authority-data": await read("ca.crt"),
            },
            user: { "client-certificate-data": await read("client.crt"), "client-key-data": await read("client.key") },
          }),
        );
        const credentials = await loadKubeconfig({ path });
        const { caCerts, cert, key } = credentials.tls;
        assert.ok(cert && key);
        using client = Deno.createHttpClient({ caCerts, cert, key });
        const authorization = await credentials.authorization();
        const response = await fetch(`${credentials.server}/version`, {
          client,
          headers: authorization ? { authorization } : {},
        });
        assert.deepEqual(await response.json(), { gitVersion: "v1.99.0" });
        assert.deepEqual(seen, ["Bearer static-token"]);
      } finally {
        await server.shutdown();
      }
    });
  },
});
