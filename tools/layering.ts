/**
 * The layers of `src/` and the rules over the import graph that keep them (docs/architecture.md
 * explains them): a module imports only its own folder or a lower layer; folders that share a
 * layer are independent of each other; nothing in `src/` imports an entry point; the CLI package
 * uses the library only through its published names; and no module is in a circle, type imports
 * included.
 *
 * @module
 */

import { findCycles, type ImportGraph } from "./import_graph.ts";

/**
 * The folders of `src/`, bottom layer first. Folders in one row share a layer and may not import
 * each other. A folder may be listed before it exists (a branch adding it then fits at once).
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["utils", "model"],
  ["observability"],
  ["state", "logging"],
  ["settings"],
  ["api"],
  ["handling"],
  ["engines", "kits"],
  ["reactor"],
];

/** The public entry points at the root: above every folder of `src/`, below the CLI. */
export const ENTRY_POINTS: readonly string[] = ["mod.ts", "on.ts", "advanced.ts", "testing.ts", "types.ts"];

function layerOf(folder: string): number {
  return LAYERS.findIndex((row) => row.includes(folder));
}

/** Where a module is: `src/<folder>/…`, `cli/…`, or a root entry point. */
function placeOf(module: string): { kind: "src"; folder: string } | { kind: "cli" } | { kind: "root" } {
  const parts = module.split("/");
  if (parts[0] === "src" && parts.length > 2) return { kind: "src", folder: parts[1] };
  if (parts[0] === "cli") return { kind: "cli" };
  return { kind: "root" };
}

/**
 * Every breach of the rules in a graph read from the repository's root (module paths such as
 * `src/handling/registry.ts`, `cli/main.ts`, `mod.ts`), one line each, saying what is wrong and
 * what to do; empty when the graph keeps them.
 */
export function checkLayering(graph: ImportGraph): string[] {
  const problems: string[] = [];
  for (const module of graph.modules) {
    const place = placeOf(module);
    if (place.kind === "src" && layerOf(place.folder) < 0) {
      problems.push(
        `${module}: the folder src/${place.folder}/ is in no layer; add it to LAYERS in tools/layering.ts ` +
          `and to docs/architecture.md, below every folder that imports it.`,
      );
    } else if (place.kind === "root" && module.split("/").length === 1 && !ENTRY_POINTS.includes(module)) {
      problems.push(
        `${module}: a module at the root that is no entry point; move it under src/ or add it to ENTRY_POINTS.`,
      );
    }
  }
  for (const edge of graph.edges) {
    const from = placeOf(edge.from);
    const to = placeOf(edge.to);
    const where = `${edge.from}:${edge.line} imports ${edge.typeOnly ? "types of " : ""}${edge.to}`;
    if (from.kind === "cli" && to.kind !== "cli") {
      problems.push(`${where}: the CLI uses the library through "@kopf/kopf" and its subpaths only.`);
    } else if (from.kind === "src" && to.kind !== "src") {
      problems.push(
        `${where}: src/ must not import an entry point or anything outside src/; import the module itself.`,
      );
    } else if (from.kind === "src" && to.kind === "src" && from.folder !== to.folder) {
      const fromLayer = layerOf(from.folder);
      const toLayer = layerOf(to.folder);
      if (fromLayer >= 0 && toLayer >= 0 && toLayer > fromLayer) {
        problems.push(
          `${where}: ${from.folder}/ may not import the higher layer ${to.folder}/; ` +
            `move what both need down, or pass it in from above (a parameter, a callback).`,
        );
      } else if (fromLayer >= 0 && fromLayer === toLayer) {
        problems.push(
          `${where}: ${from.folder}/ and ${to.folder}/ share a layer and stay independent; ` +
            `move what both need to a lower layer.`,
        );
      }
    }
  }
  for (const cycle of findCycles(graph)) {
    problems.push(
      `a circle of imports (type imports count): ${cycle.join(", ")}; move the shared declarations to ` +
        `a module that imports none of them, or invert one import.`,
    );
  }
  return problems;
}
