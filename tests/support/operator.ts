/**
 * Running an operator in the test process against the shared cluster, for one namespace.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";
import type { RunningOperator } from "../../src/reactor/operator.ts";
import { testCluster } from "./cluster.ts";

/** A running operator and how to stop it. */
export interface TestOperator {
  running: RunningOperator;
  stop: () => Promise<void>;
}

/** Starts an operator with the given registry for one namespace; resolves once its streams are listed. */
export async function runOperator(
  registry: kopf.Registry,
  namespace: string,
  options: Partial<kopf.OperatorOptions> = {},
): Promise<TestOperator> {
  const { credentials } = await testCluster();
  const controller = new AbortController();
  let ready: (running: RunningOperator) => void = () => {};
  const readiness = new Promise<RunningOperator>((resolve) => ready = resolve);
  const done = kopf.operator({
    registry,
    credentials,
    namespaces: [namespace],
    standalone: true,
    signal: controller.signal,
    ready,
    ...options,
  });
  const running = await Promise.race([
    readiness,
    done.then(() => Promise.reject(new Error("the operator exited early"))),
  ]);
  return {
    running,
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}
