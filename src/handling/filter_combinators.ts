/**
 * Combinators of filter callbacks (`kopf.allOf`, `anyOf`, `noneOf`, `not`), for `when` and for
 * per-value callbacks alike, and how a callback's result is read.
 *
 * @module
 */

/** A filter callback's result as a boolean; promises are refused (they would always be truthy). */
export function truthy(result: unknown): boolean {
  if (typeof result === "object" && result !== null && typeof (result as { then?: unknown }).then === "function") {
    throw new TypeError("Filter callbacks must be synchronous and return a boolean, not a promise.");
  }
  return Boolean(result);
}

/**
 * A callback that matches when all the given callbacks match (`true` for none); later callbacks
 * are not called once one fails. Works for `when` and for per-value callbacks alike.
 *
 * @example
 * ```ts
 * kopf.on.create("kopfexamples", { when: kopf.allOf([isBig, isNew]) }, fn);
 * ```
 */
export function allOf<A extends unknown[]>(fns: readonly ((...args: A) => boolean)[]): (...args: A) => boolean {
  const all = [...fns];
  return (...args: A): boolean => all.every((fn) => truthy(fn(...args)));
}

/**
 * A callback that matches when any of the given callbacks matches (`false` for none); later
 * callbacks are not called once one succeeds.
 *
 * @example
 * ```ts
 * kopf.on.create("kopfexamples", { labels: { tier: kopf.anyOf([isFront, isBack]) } }, fn);
 * ```
 */
export function anyOf<A extends unknown[]>(fns: readonly ((...args: A) => boolean)[]): (...args: A) => boolean {
  const any = [...fns];
  return (...args: A): boolean => any.some((fn) => truthy(fn(...args)));
}

/**
 * A callback that matches when none of the given callbacks matches (`true` for none).
 *
 * @example
 * ```ts
 * kopf.on.create("kopfexamples", { when: kopf.noneOf([isSystem, isPaused]) }, fn);
 * ```
 */
export function noneOf<A extends unknown[]>(fns: readonly ((...args: A) => boolean)[]): (...args: A) => boolean {
  const some = anyOf(fns);
  return (...args: A): boolean => !some(...args);
}

/**
 * A callback that matches when the given callback does not.
 *
 * @example
 * ```ts
 * kopf.on.create("kopfexamples", { when: kopf.not(({ name }) => name === "a") }, fn);
 * ```
 */
export function not<A extends unknown[]>(fn: (...args: A) => boolean): (...args: A) => boolean {
  return (...args: A): boolean => !truthy(fn(...args));
}
