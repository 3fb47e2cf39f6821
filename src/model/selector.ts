/**
 * Resource selectors: what handlers name (`"kex"`, `"pods.v1"`, `{ kind: "KopfExample" }`,
 * `kopf.EVERYTHING`) and the rules by which such a name picks discovered resources.
 *
 * Pure: no I/O. Discovery (`src/api/discovery.ts`) supplies the resources to select from.
 *
 * @module
 */

import { type Resource, resourceName } from "./resource.ts";

/**
 * A marker that selects all resources (of a group and version, if given) instead of a name.
 * Core `events` and `events.k8s.io` events are never included: handling produces events, which
 * would cause more handling.
 *
 * @example
 * ```ts
 * new Selector(EVERYTHING);
 * new Selector({ group: "kopf.dev", plural: EVERYTHING });
 * ```
 */
export const EVERYTHING: unique symbol = Symbol("kopf.EVERYTHING");

/** The object form of a selector: at most one name (or category), optionally a group and version. */
export interface SelectorSpec {
  /** The API group; `""` is the core group. Any group when absent. */
  group?: string;
  /** The version, e.g. `v1`. The group's preferred version when absent. */
  version?: string;
  /** The plural name, e.g. `kopfexamples`, or {@linkcode EVERYTHING}. */
  plural?: string | typeof EVERYTHING;
  /** The kind, e.g. `KopfExample`. */
  kind?: string;
  /** The singular name, e.g. `kopfexample`. */
  singular?: string;
  /** A short name, e.g. `kex`. */
  shortcut?: string;
  /** A category, e.g. `all`; selects every resource listing it. */
  category?: string;
}

/** Anything a selector can be built from: a string, an object, or {@linkcode EVERYTHING}. */
export type SelectorInput = string | SelectorSpec | typeof EVERYTHING;

/** The outcome of selecting from discovered resources. */
export interface Selection {
  /** The resources to serve. */
  readonly resources: Resource[];
  /**
   * The resources that a named selector matched more than one of, none of them in the core group:
   * none of them is served. Empty if the selection is unambiguous.
   */
  readonly ambiguous: Resource[];
}

// `name.version` or `name.version.group`: the second dotted part looks like a Kubernetes version.
const VERSIONED = /^([^.]+)\.(v\d+(?:(?:alpha|beta)\d+)?)(?:\.(.+))?$/;

const SPEC_KEYS: ReadonlySet<string> = new Set([
  "group",
  "version",
  "plural",
  "kind",
  "singular",
  "shortcut",
  "category",
]);
const NAME_KEYS = ["plural", "kind", "singular", "shortcut", "category"] as const;

/**
 * A resource specification that matches discovered resources by name, group and version.
 *
 * The string forms: `"kopfexamples"` (any name: plural, singular, kind or short name),
 * `"kopfexamples.kopf.dev"` (in a group), `"kopfexamples.v1.kopf.dev"` (in a group version),
 * `"pods.v1"` (version v1 of any group: the second part is a version if it looks like one).
 * Without a version, only the groups' preferred versions match.
 *
 * @example
 * ```ts
 * const selector = new Selector("kex");
 * const { resources, ambiguous } = selector.select(discovered);
 * ```
 */
export class Selector {
  /** The API group; `undefined` for any group. */
  readonly group: string | undefined;
  /** The version; `undefined` for the preferred version of each group. */
  readonly version: string | undefined;
  /** A name that may be the plural, singular, kind or a short name (the string forms). */
  readonly name: string | undefined;
  /** The plural name. */
  readonly plural: string | undefined;
  /** The kind. */
  readonly kind: string | undefined;
  /** The singular name. */
  readonly singular: string | undefined;
  /** A short name. */
  readonly shortcut: string | undefined;
  /** A category. */
  readonly category: string | undefined;
  /** Whether it selects everything (but events) instead of a name. */
  readonly everything: boolean;
  readonly #text: string;

  /**
   * Builds a selector; throws a `TypeError` if the specification names two things, nothing, or
   * has empty or malformed names.
   */
  constructor(input: SelectorInput) {
    let spec: SelectorSpec & { name?: string };
    if (input === EVERYTHING) {
      spec = { plural: EVERYTHING };
      this.#text = "kopf.EVERYTHING";
    } else if (typeof input === "string") {
      spec = parseString(input);
      this.#text = JSON.stringify(input);
    } else if (typeof input === "object" && input !== null && !Array.isArray(input)) {
      spec = checkSpec(input);
      this.#text = describeSpec(input);
    } else {
      throw new TypeError(
        `A resource selector must be a string, an object or kopf.EVERYTHING, not ${describeValue(input)}.`,
      );
    }
    this.group = spec.group;
    this.version = spec.version;
    this.name = spec.name;
    this.plural = spec.plural === EVERYTHING ? undefined : spec.plural;
    this.everything = spec.plural === EVERYTHING;
    this.kind = spec.kind;
    this.singular = spec.singular;
    this.shortcut = spec.shortcut;
    this.category = spec.category;
  }

  /**
   * Whether it names one resource (by any name, plural, kind, singular or short name) rather than
   * a category or everything; only such selectors can be ambiguous.
   */
  get specific(): boolean {
    return !this.everything && this.category === undefined;
  }

  /** The API groups that discovery must scan for this selector; `null` for all groups. */
  get groups(): string[] | null {
    return this.group === undefined ? null : [this.group];
  }

  /** Whether a discovered resource matches: group, version (or preferred), and the name part. */
  matches(resource: Resource): boolean {
    if (this.group !== undefined && this.group !== resource.group) return false;
    if (this.version === undefined ? !resource.preferred : this.version !== resource.version) return false;
    // Some distributions (K3s) leave the singular of builtins empty: the lower-cased kind stands in.
    const singular = resource.singular || resource.kind.toLowerCase();
    if (this.name !== undefined) {
      return this.name === resource.plural || this.name === singular || this.name === resource.kind ||
        resource.shortcuts.includes(this.name);
    }
    if (this.plural !== undefined) return this.plural === resource.plural;
    if (this.kind !== undefined) return this.kind === resource.kind;
    if (this.singular !== undefined) return this.singular === singular;
    if (this.shortcut !== undefined) return resource.shortcuts.includes(this.shortcut);
    if (this.category !== undefined) return resource.categories.includes(this.category);
    return this.everything && !isEvents(resource);
  }

  /**
   * Picks the matching resources (each once). A specific selector that matches several resources
   * keeps only those of the core group, as kubectl does (`pods` is core pods, not
   * `pods.metrics.k8s.io`); if there are none or still several, nothing is served and the
   * candidates are reported as ambiguous.
   */
  select(resources: Iterable<Resource>): Selection {
    const matched = new Map<string, Resource>();
    for (const resource of resources) {
      const key = resourceName(resource);
      if (!matched.has(key) && this.matches(resource)) matched.set(key, resource);
    }
    const all = [...matched.values()];
    if (!this.specific || all.length <= 1) return { resources: all, ambiguous: [] };
    const core = all.filter((resource) => resource.group === "");
    const candidates = core.length > 0 ? core : all;
    return candidates.length === 1
      ? { resources: candidates, ambiguous: [] }
      : { resources: [], ambiguous: candidates };
  }

  /** The selector as written in code, e.g. `"kex"` or `{ group: "kopf.dev", kind: "KopfExample" }`. */
  toString(): string {
    return this.#text;
  }
}

/**
 * The API groups that discovery must scan for several selectors: their union, or `null` (all
 * groups) if any of them names no group.
 */
export function groupsToScan(selectors: Iterable<Selector>): string[] | null {
  const groups = new Set<string>();
  for (const selector of selectors) {
    const own = selector.groups;
    if (own === null) return null;
    for (const group of own) groups.add(group);
  }
  return [...groups];
}

function isEvents(resource: Resource): boolean {
  return resource.plural === "events" && (resource.group === "" || resource.group === "events.k8s.io");
}

function parseString(text: string): SelectorSpec & { name?: string } {
  if (text === "") throw new TypeError("A resource selector must not be an empty string; name a resource.");
  if (/[\s/]/.test(text)) {
    throw new TypeError(
      `The resource selector ${JSON.stringify(text)} contains a slash or a space: use "plural.version.group" ` +
        `(e.g. "kopfexamples.v1.kopf.dev") or an object { group, version, plural }.`,
    );
  }
  if (text.split(".").some((part) => part === "")) {
    throw new TypeError(
      `The resource selector ${JSON.stringify(text)} has an empty dotted part; ` +
        `use "name", "name.group", "name.version" or "name.version.group".`,
    );
  }
  const versioned = VERSIONED.exec(text);
  if (versioned) return { name: versioned[1], version: versioned[2], group: versioned[3] };
  const dot = text.indexOf(".");
  if (dot >= 0) return { name: text.slice(0, dot), group: text.slice(dot + 1) };
  return { name: text };
}

function checkSpec(spec: SelectorSpec): SelectorSpec {
  const unknown = Object.keys(spec).filter((key) => !SPEC_KEYS.has(key));
  if (unknown.length > 0) {
    throw new TypeError(
      `Unknown resource selector fields: ${unknown.join(", ")}; ` +
        `the known ones are ${[...SPEC_KEYS].join(", ")}.`,
    );
  }
  for (const key of SPEC_KEYS) {
    const value: unknown = spec[key as keyof SelectorSpec];
    if (value === undefined || (key === "plural" && value === EVERYTHING)) continue;
    if (typeof value !== "string") {
      throw new TypeError(`The resource selector's ${key} must be a string, not ${describeValue(value)}.`);
    }
    // The core group is the only meaningful empty name.
    if (value === "" && key !== "group") {
      throw new TypeError(
        `The resource selector's ${key} must not be an empty string; leave it out or give a specific name.`,
      );
    }
  }
  if (spec.group?.includes("/")) {
    throw new TypeError(
      `The resource selector's group ${JSON.stringify(spec.group)} contains a slash; ` +
        `give the group and the version separately: { group: "kopf.dev", version: "v1", \u2026 }.`,
    );
  }
  const names = NAME_KEYS.filter((key) => spec[key] !== undefined);
  if (names.length > 1) {
    throw new TypeError(
      `Ambiguous resource specification ${describeSpec(spec)}: give only one of ${names.join(", ")}.`,
    );
  }
  if (names.length === 0) {
    throw new TypeError(
      `Unspecific resource with no names: ${describeSpec(spec)}; ` +
        `give one of plural, kind, singular, shortcut, category (or plural: kopf.EVERYTHING).`,
    );
  }
  return spec;
}

function describeSpec(spec: SelectorSpec): string {
  const fields = [...SPEC_KEYS]
    .filter((key) => spec[key as keyof SelectorSpec] !== undefined)
    .map((key) => {
      const value = spec[key as keyof SelectorSpec];
      return `${key}: ${value === EVERYTHING ? "kopf.EVERYTHING" : JSON.stringify(value)}`;
    });
  return fields.length ? `{ ${fields.join(", ")} }` : "{}";
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "symbol") return value.toString();
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}
