/**
 * Indexes: in-memory views over many objects, kept up to date from the watch streams, so that
 * handlers of one object can look at others without listing them from the API server. Here two
 * indexes over pods feed the liveness probes and a timer of each kopfexample.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

/** Whether each pod, by its [namespace, name], is running. */
type IsRunning = kopf.Index<boolean, [string, string]>;
/** The names of the pods, by their [label, value]. */
type ByLabel = kopf.Index<string, [string, string]>;

// A Map lets keys be tuples (compared by value); a plain object would only allow string keys.
kopf.index("pods", function isRunning({ namespace, name, status }) {
  return new Map([[[namespace, name], status.phase === "Running"]]);
});

kopf.index("pods", function byLabel({ labels, name }) {
  return new Map(Object.entries(labels).map(([label, value]) => [[label, value], name]));
});

// Activities see the indexes too: here they are what the liveness endpoint reports.
kopf.on.probe(function podCount({ indices }) {
  return (indices.isRunning as IsRunning).size;
});

kopf.on.probe(function podNames({ indices }) {
  return [...(indices.isRunning as IsRunning).keys()].map(([, name]) => name).sort();
});

// A timer of each kopfexample summarises the pods from the indexes: no API request is made for it.
kopf.timer("kex", { interval: 2 }, function summarize({ indices, patch }) {
  const isRunning = indices.isRunning as IsRunning;
  const byLabel = indices.byLabel as ByLabel;
  const running: string[] = [];
  for (const [[namespace, name], store] of isRunning) {
    if ([...store].includes(true)) running.push(`${namespace}/${name}`);
  }
  const apps: Record<string, string[]> = {};
  for (const [[label, value], names] of byLabel) if (label === "app") apps[value] = [...names].sort();
  patch.status.pods = { seen: isRunning.size, running: running.sort(), apps };
});
