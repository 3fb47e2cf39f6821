/**
 * examples/12-embedded: the program (run with `deno run`, not `kopf run`) serves its application
 * while its embedded operator greets and says good bye to objects, sharing what it saw through
 * the memo; SIGINT stops the operator, then the program, which exits by itself with code 0.
 */

import assert from "node:assert/strict";
import { createExample, deleteExample, exampleGone, freshNamespace, testCluster } from "../support/cluster.ts";
import { eventually } from "../support/eventually.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** A port that was free a moment ago. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

/** What the application answers. */
async function ask(url: string): Promise<{ ready: boolean; greeted: string[] }> {
  return await (await fetch(url)).json();
}

Deno.test("examples/12-embedded: the application reports the objects its operator greeted; SIGINT ends the program, exit 0", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "ex12");
  const port = freePort();
  const url = `http://127.0.0.1:${port}/`;
  const program = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "examples/12-embedded/example.ts"],
    cwd: ROOT,
    env: { KUBECONFIG: kubeconfig, EXAMPLE_NAMESPACE: namespace, EXAMPLE_PORT: String(port), NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = program.output();
  try {
    await eventually("the operator's readiness", async () => (await ask(url)).ready || undefined);
    await createExample(client, namespace, "visitor");
    await eventually("the greeting", async () => (await ask(url)).greeted.length > 0 || undefined);
    assert.deepEqual((await ask(url)).greeted, [`${namespace}/visitor`]);
    await deleteExample(client, namespace, "visitor");
    await exampleGone(client, namespace, "visitor");
    assert.deepEqual((await ask(url)).greeted, []);
    program.kill("SIGINT");
  } catch (error) {
    program.kill("SIGKILL");
    throw error;
  }
  const { code, stdout, stderr } = await output;
  const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  assert.equal(code, 0, text);
  for (
    const line of ["The operator is ready.", "Hello, visitor!", "Good bye, visitor!", "The application has stopped."]
  ) {
    assert.ok(text.includes(line), `${line}\n--- output ---\n${text}`);
  }
});
