/**
 * Values that must exist once per process however many copies of this library are loaded: a
 * handler file importing `@kopf/kopf` by another URL than the CLI (a local path, `jsr:`, a bundle
 * with the CLI inside) gets its own copy of every module, and module-level state would split --
 * handlers registered in one copy's registry, the operator reading the other's. Such values live
 * on `globalThis` under a registry-wide `Symbol.for` key, so every copy finds the first one.
 *
 * @module
 */

interface Slot {
  readonly layout: number;
  readonly value: unknown;
}

/**
 * Returns the process-wide value named `name`, made by `make` on first use. `layout` is the
 * version of the value's shape: copies that disagree about it cannot share the value, and the
 * second one fails to load with a message that says so instead of losing handlers silently.
 *
 * @example
 * ```ts
 * import { processGlobal } from "./process_global.ts";
 * const a = processGlobal("example-counter", 1, () => ({ count: 0 }));
 * const b = processGlobal("example-counter", 1, () => ({ count: 0 }));
 * console.assert(a === b);
 * ```
 *
 * @param name The value's name, unique within the library (the key is `Symbol.for("@kopf/kopf:" + name)`).
 * @param layout The version of the value's shape; bump it when a change makes older copies unable to use it.
 * @param make Makes the value when no copy has made it yet.
 */
export function processGlobal<T>(name: string, layout: number, make: () => T): T {
  const key = Symbol.for(`@kopf/kopf:${name}`);
  const slots = globalThis as unknown as Record<symbol, Slot | undefined>;
  const existing = slots[key];
  if (existing === undefined) {
    const slot: Slot = { layout, value: make() };
    Object.defineProperty(globalThis, key, { value: slot, enumerable: false, writable: false, configurable: false });
    return slot.value as T;
  }
  if (existing.layout !== layout) {
    throw new Error(
      `Two incompatible copies of @kopf/kopf are loaded in this process (the ${name} of one has layout ` +
        `${existing.layout}, of the other ${layout}): the handler files and the CLI must import the same ` +
        `version of @kopf/kopf \u2014 align the versions in the import maps (deno.json) or build them together ` +
        `with \`kopf build\`.`,
    );
  }
  return existing.value as T;
}

const BRANDS = new WeakMap<object, symbol>();

/**
 * Makes `instanceof` of a class also accept instances made by another copy of the library: a
 * handler that throws `kopf.PermanentError` from its copy must be seen as permanent by the copy
 * that runs it. Instances carry a registry-wide symbol per class; subclasses that are not shared
 * themselves keep the ordinary check.
 *
 * @example
 * ```ts
 * import { shareInstances } from "./process_global.ts";
 * class Failure extends Error {}
 * shareInstances(Failure, "example-failure");
 * class Copy extends Error {}
 * shareInstances(Copy, "example-failure");
 * console.assert(new Copy() instanceof Failure);
 * ```
 *
 * @param cls The class.
 * @param name Its name within the library.
 */
// deno-lint-ignore no-explicit-any
export function shareInstances(cls: abstract new (...args: any[]) => unknown, name: string): void {
  const brand = Symbol.for(`@kopf/kopf:class:${name}`);
  BRANDS.set(cls, brand);
  Object.defineProperty(cls.prototype, brand, { value: true, enumerable: false });
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: object, value: unknown): boolean {
      if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
      const own = BRANDS.get(this);
      return own !== undefined && typeof value === "object" && value !== null &&
        (value as Record<symbol, unknown>)[own] === true;
    },
  });
}
