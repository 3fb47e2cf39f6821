/** Tests of the choice between kubeconfig and in-cluster credentials. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { CredentialsError } from "./credentials.ts";
import { loadDefaultCredentials } from "./default_credentials.ts";
import { inTempDir, withEnv } from "../../tests/support/environment.ts";

function kubeconfig(server: string): string {
  return stringify({
    "current-context": "main",
    clusters: [{ name: "c", cluster: { server } }],
    users: [{ name: "u", user: { token: "kube-token" } }],
    contexts: [{ name: "main", context: { cluster: "c", user: "u" } }, {
      name: "side",
      context: { cluster: "c", user: "u", namespace: "side-ns" },
    }],
  });
}

/** A temporary home, service account folder and explicit kubeconfig, with no outside influence. */
async function scene(dir: string) {
  const home = join(dir, "home");
  const sa = join(dir, "sa");
  await Deno.mkdir(join(home, ".kube"), { recursive: true });
  await Deno.mkdir(sa);
  const explicit = join(dir, "explicit");
  await Deno.writeTextFile(explicit, kubeconfig("https://explicit:6443"));
  return { home, sa, explicit, homeConfig: join(home, ".kube", "config") };
}

const CLEAN = {
  KUBECONFIG: undefined,
  KUBERNETES_SERVICE_HOST: undefined,
  KUBERNETES_SERVICE_PORT: undefined,
  USERPROFILE: undefined,
};

Deno.test("default credentials: explicit kubeconfig or context, then KUBECONFIG, then ~/.kube/config", async () => {
  await inTempDir(async (dir) => {
    const { home, sa, explicit, homeConfig } = await scene(dir);
    await Deno.writeTextFile(homeConfig, kubeconfig("https://home:6443"));
    await Deno.writeTextFile(join(sa, "token"), "sa-token");
    const inCluster = { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" };
    await withEnv({ ...CLEAN, ...inCluster, HOME: home }, async () => {
      const options = { serviceAccountRoot: sa };
      assert.equal(
        (await loadDefaultCredentials({ ...options, kubeconfig: explicit })).server,
        "https://explicit:6443",
      );
      const side = await loadDefaultCredentials({ ...options, context: "side" });
      assert.equal(side.server, "https://home:6443");
      assert.equal(side.defaultNamespace, "side-ns");
      const home = await loadDefaultCredentials(options);
      assert.equal(home.source, `kubeconfig ${homeConfig} (context "main")`);
      await withEnv({ KUBECONFIG: explicit }, async () => {
        assert.equal((await loadDefaultCredentials(options)).server, "https://explicit:6443");
      });
    });
  });
});

Deno.test("default credentials: the service account when there is no kubeconfig", async () => {
  await inTempDir(async (dir) => {
    const { home, sa } = await scene(dir);
    await Deno.writeTextFile(join(sa, "token"), "sa-token");
    await withEnv(
      { ...CLEAN, HOME: home, KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" },
      async () => {
        const credentials = await loadDefaultCredentials({ serviceAccountRoot: sa });
        assert.equal(credentials.server, "https://10.0.0.1:443");
        assert.equal(await credentials.authorization(), "Bearer sa-token");
      },
    );
  });
});

Deno.test("default credentials: nothing found, and the message says where it looked", async () => {
  await inTempDir(async (dir) => {
    const { home, sa, homeConfig } = await scene(dir);
    await withEnv({ ...CLEAN, HOME: home }, async () => {
      const error = await loadDefaultCredentials({ serviceAccountRoot: sa }).then(
        () => assert.fail("expected a CredentialsError"),
        (error: unknown) => error,
      );
      assert.ok(error instanceof CredentialsError);
      assert.ok(!error.message.includes("\n"));
      assert.match(error.message, /^no Kubernetes credentials found: KUBECONFIG is not set, /);
      assert.ok(error.message.includes(`${homeConfig} does not exist`), error.message);
      assert.ok(error.message.includes("KUBERNETES_SERVICE_HOST is not set"), error.message);
    });
    await withEnv({ ...CLEAN, HOME: home, KUBERNETES_SERVICE_HOST: "10.0.0.1" }, async () => {
      const error = await loadDefaultCredentials({ serviceAccountRoot: sa }).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof CredentialsError);
      assert.ok(error.message.includes(`${join(sa, "token")} not found`), error.message);
    });
  });
});
