/**
 * An operator embedded in an application: the program calls `kopf.operator()` itself instead of
 * being run by `kopf run`, and shares its state with the operator's handlers through the memo.
 * The "application" here is a small HTTP service that answers which objects the operator greeted.
 *
 *     KUBECONFIG=… deno run -A examples/12-embedded/example.ts
 *     curl http://127.0.0.1:8080/
 *
 * `EXAMPLE_NAMESPACE` limits the operator to one namespace (all namespaces otherwise);
 * `EXAMPLE_PORT` changes the port. Ctrl+C (SIGINT) or SIGTERM stop the operator, then the program.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

/** What the application and the handlers share: the objects greeted and not yet deleted. */
interface Greetings {
  readonly greeted: Set<string>;
}

// Each object's memo starts as a shallow copy of the operator's memo, so all handlers see this one Set.
function greetingsOf(memo: kopf.AnyMemo): Greetings {
  return memo as unknown as Greetings;
}

kopf.on.create("kopfexamples", function greet({ memo, namespace, name, logger }) {
  greetingsOf(memo).greeted.add(`${namespace}/${name}`);
  logger.info(`Hello, ${name}!`);
});

kopf.on.delete("kopfexamples", function farewell({ memo, namespace, name, logger }) {
  greetingsOf(memo).greeted.delete(`${namespace}/${name}`);
  logger.info(`Good bye, ${name}!`);
});

// `kopf run` sets up logging itself; an embedding program decides, here for the operator's usual lines.
await kopf.configureLogging();

const namespace = Deno.env.get("EXAMPLE_NAMESPACE");
const port = Number(Deno.env.get("EXAMPLE_PORT") ?? 8080);
const greetings: Greetings = { greeted: new Set() };
let ready = false;

// The application's own activity. It answers from the start and says whether the operator is ready.
const server = Deno.serve(
  { hostname: "127.0.0.1", port, onListen: ({ port }) => console.log(`The application listens on port ${port}.`) },
  () => Response.json({ ready, greeted: [...greetings.greeted].sort() }),
);

// Without a `signal`, the operator stops on SIGINT or SIGTERM; it returns once it has stopped.
await kopf.operator({
  namespaces: namespace ? [namespace] : [],
  clusterwide: !namespace,
  standalone: true,
  memo: { ...greetings },
  ready: () => {
    ready = true;
    console.log("The operator is ready.");
  },
});

await server.shutdown();
console.log("The application has stopped.");
