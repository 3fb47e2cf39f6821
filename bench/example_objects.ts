/**
 * The benchmarks' objects: small kopfexamples named `kex-<index>`, created or changed many at a
 * time, and the result the contestants' create handler leaves on them (`status.done.ok`).
 *
 * @module
 */

import type { ApiClient } from "../src/api/client.ts";
import type { KubernetesObject } from "../src/model/body.ts";

/** The path of a namespace's kopfexamples. */
export function collection(namespace: string): string {
  return `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`;
}

/** The name of the object number `index`. */
export function objectName(index: number): string {
  return `kex-${index}`;
}

/** Creates one small object. */
export function createExample(client: ApiClient, namespace: string, name: string): Promise<unknown> {
  return client.request({
    method: "POST",
    path: collection(namespace),
    body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name }, spec: {} },
  });
}

/**
 * Makes the first `count` objects (`kex-0`, …, each in `namespaceOf(index)`) look new: no annotations, no
 * finalizers, no status; `parallel` at a time.
 */
export async function resetExamples(
  client: ApiClient,
  count: number,
  parallel: number,
  namespaceOf: (index: number) => string,
): Promise<void> {
  const merge = "application/merge-patch+json";
  await inParallel(0, count, parallel, async (index) => {
    const path = `${collection(namespaceOf(index))}/${objectName(index)}`;
    await client.request({
      method: "PATCH",
      path,
      contentType: merge,
      body: { metadata: { annotations: null, finalizers: null } },
    });
    await client.request({ method: "PATCH", path: `${path}/status`, contentType: merge, body: { status: null } });
  });
}

/** Runs `action` for each index from `from` up to (not including) `to`, `parallel` at a time. */
export async function inParallel(
  from: number,
  to: number,
  parallel: number,
  action: (index: number) => Promise<unknown>,
): Promise<void> {
  let next = from;
  const worker = async () => {
    while (next < to) await action(next++);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, to - from) }, worker));
}

/** A field of the object's status, if it is an object. */
export function status(object: KubernetesObject, field: string): Record<string, unknown> | undefined {
  return (object.status as Record<string, Record<string, unknown> | undefined> | undefined)?.[field];
}

/** Whether the create handler of bench/fixtures/compare_create.* has handled the object. */
export function isDone(object: KubernetesObject): boolean {
  return status(object, "done")?.ok === true;
}
