/** Tests of exec credential plugins on a fake clock: caching until expiry, renewal, sharing of runs; and their configuration. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CredentialsError } from "./credentials.ts";
import { ExecPlugin, readExecConfig } from "./exec_credentials.ts";
import { Fields } from "./kubeconfig_fields.ts";
import { inTempDir } from "../../tests/support/environment.ts";

const EXEC_V1 = "client.authentication.k8s.io/v1";
const EXPIRY = "2030-01-01T00:00:00Z";

/** A plugin that counts its runs and answers `run-<n>`, expiring at {@linkcode EXPIRY}. */
async function countingPlugin(dir: string): Promise<{ command: string; runs: () => Promise<number> }> {
  const command = join(dir, "plugin.sh");
  const script = [
    "#!/bin/sh",
    'dir=$(dirname "$0")',
    'n=$(cat "$dir/runs" 2>/dev/null || echo 0)',
    "n=$((n+1))",
    'echo "$n" > "$dir/runs"',
    `printf '{"apiVersion":"${EXEC_V1}","kind":"ExecCredential",` +
    `"status":{"token":"run-%s","expirationTimestamp":"${EXPIRY}"}}' "$n"`,
    "",
  ].join("\n");
  await Deno.writeTextFile(command, script, { mode: 0o755 });
  return { command, runs: async () => Number((await Deno.readTextFile(join(dir, "runs"))).trim()) };
}

function plugin(command: string, now: () => number): ExecPlugin {
  const config = readExecConfig(new Fields({ apiVersion: EXEC_V1, command }, "/k/config", 'user "u"', "exec."));
  return new ExecPlugin(config, { where: "kubeconfig /k/config", owner: 'user "u"', now });
}

Deno.test("ExecPlugin: the credential is kept until its expirationTimestamp, then the plugin runs again", async () => {
  await inTempDir(async (dir) => {
    const { command, runs } = await countingPlugin(dir);
    let now = Date.parse(EXPIRY) - 60_000;
    const exec = plugin(command, () => now);
    const first = await exec.credential();
    assert.deepEqual(first, { token: "run-1", cert: undefined, key: undefined, expiresAt: Date.parse(EXPIRY) });
    now = Date.parse(EXPIRY) - 1;
    assert.equal((await exec.credential()).token, "run-1");
    assert.equal(await runs(), 1);
    now = Date.parse(EXPIRY);
    assert.equal((await exec.credential()).token, "run-2", "expired at the timestamp itself");
    assert.equal((await exec.credential()).token, "run-3", "the new credential has expired already too");
    assert.equal(await runs(), 3);
  });
});

Deno.test("ExecPlugin: concurrent callers share one run; invalidating during a run does not start another", async () => {
  await inTempDir(async (dir) => {
    const { command, runs } = await countingPlugin(dir);
    const exec = plugin(command, () => 0);
    const pending = [exec.credential(), exec.credential()];
    exec.invalidate();
    pending.push(exec.credential());
    assert.deepEqual((await Promise.all(pending)).map((credential) => credential.token), ["run-1", "run-1", "run-1"]);
    assert.equal(await runs(), 1);

    exec.invalidate();
    exec.invalidate();
    assert.equal((await exec.credential()).token, "run-2");
    assert.equal(await runs(), 2);
  });
});

Deno.test("ExecPlugin: a failed run is not kept; the next call runs the plugin again", async () => {
  await inTempDir(async (dir) => {
    const command = join(dir, "flaky.sh");
    const flaky = [
      "#!/bin/sh",
      `if [ ! -e "${join(dir, "ready")}" ]; then echo "token service unavailable" >&2; exit 1; fi`,
      `printf '{"status":{"token":"late"}}'`,
      "",
    ].join("\n");
    await Deno.writeTextFile(command, flaky, { mode: 0o755 });
    const exec = plugin(command, Date.now);
    const error = await exec.credential().catch((error: unknown) => error);
    assert.ok(error instanceof CredentialsError);
    assert.equal(
      error.message,
      `kubeconfig /k/config: exec plugin "${command}" of user "u" failed: token service unavailable`,
    );
    await Deno.writeTextFile(join(dir, "ready"), "");
    assert.deepEqual(await exec.credential(), { token: "late", cert: undefined, key: undefined, expiresAt: undefined });
  });
});

Deno.test("readExecConfig: commands with a slash resolve against the kubeconfig, others are looked up in PATH", () => {
  const read = (exec: Record<string, unknown>) =>
    readExecConfig(new Fields({ apiVersion: EXEC_V1, ...exec }, "/home/u/.kube/config", 'user "u"', "exec."));
  assert.equal(read({ command: "bin/login" }).command, "/home/u/.kube/bin/login");
  assert.equal(read({ command: "/usr/bin/login" }).command, "/usr/bin/login");
  assert.equal(read({ command: "kubelogin" }).command, "kubelogin");
  assert.deepEqual(read({ command: "kubelogin", interactiveMode: "Never", provideClusterInfo: true }), {
    apiVersion: EXEC_V1,
    command: "kubelogin",
    args: [],
    env: {},
    installHint: undefined,
    provideClusterInfo: true,
  });
});
