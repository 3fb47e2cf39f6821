/**
 * Namespace patterns: what `-n PATTERN` and `operator({ namespaces })` accept, and whether a
 * namespace matches them.
 *
 * A pattern is a comma-separated list of globs (`*` any run of characters, `?` one character;
 * spaces around globs are trimmed); a glob starting with `!` excludes. The first glob is
 * decisive: a namespace that does not match it does not match the pattern, whatever follows; a
 * leading exclusion implies a leading `*`. After the first glob, the rightmost glob that matches
 * the namespace decides. Several patterns match a namespace if any of them does. A regular
 * expression (in code only) must match the whole name.
 *
 * Pure: no I/O.
 *
 * @module
 */

/** What a pattern may be: a string of globs, or a regular expression matched against the whole name. */
export type NamespacePatternInput = string | RegExp;

interface Glob {
  readonly negated: boolean;
  readonly regexp: RegExp;
}

/**
 * One namespace pattern, e.g. `myapp-*,!*-pr-*,*-pr-123`.
 *
 * @example
 * ```ts
 * const pattern = new NamespacePattern("myapp-*,!*-pr-*,*-pr-123");
 * pattern.matches("myapp-live"); // true
 * pattern.matches("myapp-pr-123"); // true
 * pattern.matches("myapp-pr-456"); // false
 * pattern.matches("otherapp-pr-123"); // false: not matched by the decisive first glob
 * ```
 */
export class NamespacePattern {
  /** The pattern as given. */
  readonly source: NamespacePatternInput;
  /** The namespace's name if the pattern is one exact name (no `,`, `*`, `?`, `!`); `undefined` otherwise. */
  readonly exact: string | undefined;
  readonly #globs: readonly Glob[] | undefined;
  readonly #regexp: RegExp | undefined;

  /** Parses a pattern; throws a `TypeError` for anything but a string or a `RegExp`. */
  constructor(source: NamespacePatternInput) {
    this.source = source;
    if (source instanceof RegExp) {
      // Full match: anchored, whatever the expression says.
      this.#regexp = new RegExp(`^(?:${source.source})$`, source.flags.replace(/[gy]/g, ""));
      this.exact = undefined;
      return;
    }
    if (typeof source !== "string") {
      throw new TypeError(`A namespace pattern must be a string or a RegExp, not ${typeof source}.`);
    }
    const trimmed = source.trim();
    this.exact = /[,*?!]/.test(trimmed) ? undefined : trimmed;
    this.#globs = trimmed.split(",").map((part) => part.trim()).filter((part) => part !== "").map((part) => {
      const negated = part.startsWith("!");
      return { negated, regexp: globToRegExp(negated ? part.slice(1).trim() : part) };
    });
  }

  /** Whether the namespace matches: see the module's description for the rules. */
  matches(namespace: string): boolean {
    if (this.#regexp) return this.#regexp.test(namespace);
    const globs = this.#globs!;
    if (globs.length === 0) return false;
    let rest = globs;
    // A leading exclusion implies a leading `*`: everything matches first, then it is excluded.
    if (!globs[0].negated) {
      if (!globs[0].regexp.test(namespace)) return false;
      rest = globs.slice(1);
    }
    let matched = true;
    for (const glob of rest) {
      if (glob.regexp.test(namespace)) matched = !glob.negated;
    }
    return matched;
  }

  /** The pattern as given (a regular expression as `/.../`). */
  toString(): string {
    return String(this.source);
  }
}

/**
 * Several patterns, OR-ed: what an operator serves in namespaced mode.
 *
 * @example
 * ```ts
 * const patterns = new NamespacePatterns(["ns1", "dyn-*"]);
 * patterns.matches("dyn-1"); // true
 * patterns.exact; // ["ns1"]
 * patterns.allExact; // false: namespaces must be listed and watched to find the dyn-* ones
 * ```
 */
export class NamespacePatterns {
  /** The patterns. */
  readonly patterns: readonly NamespacePattern[];

  /** Parses each pattern. */
  constructor(patterns: Iterable<NamespacePatternInput>) {
    this.patterns = [...patterns].map((pattern) => new NamespacePattern(pattern));
  }

  /** Whether any pattern matches the namespace. */
  matches(namespace: string): boolean {
    return this.patterns.some((pattern) => pattern.matches(namespace));
  }

  /** The exact names among the patterns (each once): what is served without listing namespaces. */
  get exact(): string[] {
    return [...new Set(this.patterns.flatMap((pattern) => pattern.exact === undefined ? [] : [pattern.exact]))];
  }

  /** Whether every pattern is an exact name: then namespaces need not be listed or watched. */
  get allExact(): boolean {
    return this.patterns.every((pattern) => pattern.exact !== undefined);
  }

  /** The patterns, comma-separated for messages. */
  toString(): string {
    return this.patterns.map(String).join(", ");
  }
}

function globToRegExp(glob: string): RegExp {
  let source = "";
  for (const char of glob) {
    if (char === "*") source += ".*";
    else if (char === "?") source += ".";
    else source += char.replace(/[.+^${}()|[\]\\/-]/g, "\\$&");
  }
  return new RegExp(`^${source}$`, "s");
}
