/**
 * The options each kind of registration takes and what their values may be: one table, so that
 * every `kopf.on.*` function (and `kopf.subhandler`) refuses the same mistakes with the same words,
 * and a mistake fails when the handler file is imported rather than when the handler would run.
 *
 * @module
 */

import { ADMISSION_OPERATIONS } from "../model/admission.ts";
import { validateFilters } from "./filter_validation.ts";

/** The kinds of registration: one per `kopf.on.*` function, and sub-handlers. */
export type RegistrationKind =
  | "create"
  | "update"
  | "delete"
  | "resume"
  | "field"
  | "event"
  | "timer"
  | "daemon"
  | "index"
  | "validate"
  | "mutate"
  | "conversion"
  | "startup"
  | "cleanup"
  | "login"
  | "probe"
  | "subhandler";

/** Says what a value must be, or `undefined` when it is fine. */
type Check = (value: unknown) => string | undefined;

const seconds: Check = (value) =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? undefined : "a non-negative number of seconds";
const count: Check = (value) =>
  typeof value === "number" && Number.isInteger(value) && value >= 0 ? undefined : "a non-negative integer";
const flag: Check = (value) => typeof value === "boolean" ? undefined : "true or false";
const anything: Check = () => undefined;
const ERRORS_MODES = ["temporary", "permanent", "ignored"];

/** One of some strings, named as `"a", "b" or "c"`. */
function oneOf(values: readonly string[]): Check {
  const named = values.map((value) => JSON.stringify(value));
  const text = `${named.slice(0, -1).join(", ")} or ${named.at(-1)}`;
  return (value) => typeof value === "string" && values.includes(value) ? undefined : text;
}

const operation = oneOf(ADMISSION_OPERATIONS);

// A CRD version's name is a DNS label (`v1`, `v2beta1`, `v1alpha1`).
const VERSION_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const version: Check = (value) =>
  typeof value === "string" && value.length <= 63 && VERSION_NAME.test(value)
    ? undefined
    : `a version name such as "v1" or "v2beta1"`;

/**
 * The checks of single option values. Filters (`labels`, `annotations`, `when`, `field`, `value`,
 * `old`, `new`) depend on each other and on the kind: `validateFilters` checks them together.
 */
const CHECKS: Readonly<Record<string, Check>> = {
  id: (value) => typeof value === "string" && value !== "" ? undefined : "a non-empty string",
  param: anything,
  registry: (value) =>
    typeof value === "object" && value !== null && typeof (value as { add?: unknown }).add === "function"
      ? undefined
      : "a kopf.Registry",
  errors: oneOf(ERRORS_MODES),
  timeout: seconds,
  retries: count,
  backoff: seconds,
  optional: flag,
  deleted: flag,
  interval: seconds,
  idle: seconds,
  initialDelay: seconds,
  sharp: flag,
  sharded: flag,
  cancellationBackoff: seconds,
  cancellationTimeout: seconds,
  cancellationPolling: seconds,
  operation,
  operations: (value) =>
    Array.isArray(value) && value.length > 0 && value.every((item) => operation(item) === undefined)
      ? undefined
      : `a non-empty list of ${ADMISSION_OPERATIONS.join(", ")} (leave it out for all operations)`,
  subresource: (value) =>
    typeof value === "string" && value !== "" ? undefined : `a name such as "status", or "*" for all`,
  persistent: flag,
  sideEffects: flag,
  ignoreFailures: flag,
  from: version,
  to: version,
};

const IDENTITY = ["id", "param", "registry"];
const FILTERS = ["labels", "annotations", "when", "field", "value"];
const CHANGES = ["old", "new"];
const RETRYING = ["errors", "timeout", "retries", "backoff"];
const RESOURCE = [...IDENTITY, ...FILTERS];
const ACTIVITY = [...IDENTITY, ...RETRYING];
const ADMISSION = [
  ...RESOURCE,
  "operations",
  "operation",
  "subresource",
  "persistent",
  "sideEffects",
  "ignoreFailures",
];

/** The options of each kind, in the order the error messages list them. */
const ALLOWED: Readonly<Record<RegistrationKind, readonly string[]>> = {
  create: [...RESOURCE, ...RETRYING],
  update: [...RESOURCE, ...CHANGES, ...RETRYING],
  delete: [...RESOURCE, ...RETRYING, "optional"],
  resume: [...RESOURCE, ...RETRYING, "deleted"],
  field: [...RESOURCE, ...CHANGES, ...RETRYING],
  event: RESOURCE,
  timer: [...RESOURCE, ...RETRYING, "interval", "idle", "initialDelay", "sharp"],
  daemon: [
    ...RESOURCE,
    ...RETRYING,
    "initialDelay",
    "cancellationBackoff",
    "cancellationTimeout",
    "cancellationPolling",
  ],
  index: [...RESOURCE, ...RETRYING, "sharded"],
  validate: ADMISSION,
  mutate: ADMISSION,
  conversion: ["id", "registry", "from", "to"],
  startup: ACTIVITY,
  cleanup: ACTIVITY,
  login: ACTIVITY,
  probe: ACTIVITY,
  subhandler: ["id", "param", ...FILTERS, ...CHANGES, ...RETRYING],
};

/** Options without which a kind cannot work, with an example for the message. */
const REQUIRED: Partial<Record<RegistrationKind, Readonly<Record<string, string>>>> = {
  field: { field: `{ field: "spec.size" }` },
  conversion: { from: `{ from: "v1", to: "v2" }`, to: `{ from: "v1", to: "v2" }` },
};

const ACTIVITIES: ReadonlySet<RegistrationKind> = new Set(["startup", "cleanup", "login", "probe"]);
// Converters see every object of their resource, whatever its labels or fields: they take no filters.
const UNFILTERED: ReadonlySet<RegistrationKind> = new Set([...ACTIVITIES, "conversion"]);

/** Whether a kind of registration takes no resource: `(fn)` and `(options, fn)`. */
export function isActivity(kind: RegistrationKind): boolean {
  return ACTIVITIES.has(kind);
}

/** How messages name a kind: `on.create`, `sub-handlers`. */
function kindName(kind: RegistrationKind): string {
  return kind === "subhandler" ? "sub-handlers" : `on.${kind}`;
}

/**
 * A value as a message shows it: strings quoted, lists and plain objects as (short) JSON.
 *
 * @example
 * ```ts
 * shown("x"); // '"x"'
 * shown(NaN); // "NaN"
 * ```
 */
export function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (typeof value !== "object" || value === null) return String(value);
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
    return `a ${proto.constructor?.name ?? "object"}`;
  }
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    return "an object";
  }
  return text.length > 60 ? `${text.slice(0, 57)}\u2026` : text;
}

/** Why some option names are not taken, when another kind takes them: the likely confusion. */
function hintFor(kind: RegistrationKind, unknown: readonly string[]): string {
  if ((kind === "validate" || kind === "mutate") && unknown.some((name) => RETRYING.includes(name))) {
    return " (admission handlers are never retried, so errors/timeout/retries/backoff do not apply)";
  }
  if (kind === "conversion" && unknown.some((name) => FILTERS.includes(name))) {
    return " (converters convert every object of their resource: they take no filters)";
  }
  const hints = unknown.flatMap((name) => {
    const takers = (Object.keys(ALLOWED) as RegistrationKind[])
      .filter((other) => other !== "subhandler" && ALLOWED[other].includes(name));
    return takers.length > 0 && takers.length <= 2 ? [`${name} is for ${takers.map(kindName).join(" and ")}`] : [];
  });
  return hints.length ? ` (${hints.join("; ")})` : "";
}

/**
 * Checks a registration's options: an object, only the names its kind takes, each value of the
 * right type and range, the required ones present, and the filters consistent.
 *
 * @param kind the kind of registration.
 * @param label how messages name the registration, e.g. `kopf.on.create("kopfexamples", createFn)`.
 * @param options the options as given (with `registry`, if given).
 * @param filterKind the kind whose filter rules apply; sub-handlers follow their top-level parent.
 * @throws {TypeError} `<label>: <what is wrong and what to do>.`
 *
 * @example
 * ```ts
 * checkOptions("create", 'kopf.on.create("kex", fn)', { retries: -1 });
 * // TypeError: kopf.on.create("kex", fn): retries must be a non-negative integer, got -1.
 * ```
 */
export function checkOptions(
  kind: RegistrationKind,
  label: string,
  options: unknown,
  filterKind: string = kind,
): void {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`${label}: the options must be an object, got ${shown(options)}.`);
  }
  const allowed = ALLOWED[kind];
  const unknown = Object.keys(options).filter((name) => !allowed.includes(name));
  if (unknown.length) {
    throw new TypeError(
      `${label}: unknown option${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}${hintFor(kind, unknown)}; ` +
        `the options of ${kindName(kind)} are: ${allowed.join(", ")}.`,
    );
  }
  const given = options as Readonly<Record<string, unknown>>;
  for (const [name, value] of Object.entries(given)) {
    const expected = value === undefined ? undefined : CHECKS[name]?.(value);
    if (expected !== undefined) throw new TypeError(`${label}: ${name} must be ${expected}, got ${shown(value)}.`);
  }
  for (const [name, example] of Object.entries(REQUIRED[kind] ?? {})) {
    if (given[name] === undefined) {
      throw new TypeError(`${label}: the ${name} option is required for ${kindName(kind)}, e.g. ${example}.`);
    }
  }
  if (given.operation !== undefined && given.operations !== undefined) {
    throw new TypeError(`${label}: give either operation or operations, not both.`);
  }
  if (given.from !== undefined && given.from === given.to) {
    throw new TypeError(`${label}: from and to are the same version, ${shown(given.from)}; a converter changes it.`);
  }
  if (!UNFILTERED.has(kind)) validateFilters(filterKind, given, label);
}
