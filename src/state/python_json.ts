/**
 * JSON text exactly as Python's `json.dumps(value, separators=(",", ":"))` writes it, which is how
 * Kopf encodes its progress records and diff-bases: no spaces, every character outside printable
 * ASCII escaped as `\uXXXX` (lowercase hex, UTF-16 units), and floats in Python's `repr` notation.
 *
 * Two things a JavaScript value cannot carry are reconstructed as Kopf would have seen them:
 * - Integral numbers are written as integers. The API server never sends `1.0` (Go encodes integral
 *   floats without a fraction), so Kopf sees them as `int` too.
 * - JavaScript iterates integer-like keys (`"9"`, `"10"`) first and numerically, whatever the order of
 *   the JSON text. Objects with such keys are always maps on the server side (struct fields have
 *   names), and the API server writes map keys sorted, so such objects are written with their keys
 *   sorted, which restores the order Kopf received them in.
 *
 * @module
 */

/**
 * A JSON value (readonly containers allowed) whose objects may hold `undefined` members, which are
 * skipped as `JSON.stringify` skips them.
 */
export type LooseJsonValue =
  | string
  | number
  | boolean
  | null
  | undefined
  | readonly LooseJsonValue[]
  | { readonly [key: string]: LooseJsonValue };

/**
 * Encodes a value as Python's `json.dumps(value, separators=(",", ":"))` does (with its default
 * `ensure_ascii=True`).
 *
 * @example
 * ```ts
 * dumpPythonJson({ spec: { name: "ü", ratio: 0.00001 } }); // '{"spec":{"name":"\\u00fc","ratio":1e-05}}'
 * ```
 */
export function dumpPythonJson(value: LooseJsonValue): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return ESCAPED.test(value) ? quotePythonString(value) : `"${value}"`;
  if (typeof value === "number") return formatPythonNumber(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (Array.isArray(value)) return `[${value.map((item) => dumpPythonJson(item)).join(",")}]`;
  // Appended, not joined from a list of parts, and the keys' tests inline, not by helpers: every
  // progress record and diff-base is written so, and each distinct function on that path costs at a
  // cluster's pace (docs/performance/cpu.md, "Fewer functions, a third pass").
  const object = value as { readonly [key: string]: LooseJsonValue };
  let keys = Object.keys(object);
  for (let index = 0; index < keys.length; index++) {
    const first = keys[index].charCodeAt(0);
    if (first >= 48 && first <= 57 && isIndexLike(keys[index])) {
      keys = keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      break;
    }
  }
  let text = "";
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index];
    const item = object[key];
    if (item === undefined) continue;
    const quoted = ESCAPED.test(key) ? quotePythonString(key) : `"${key}"`;
    text += `${text ? "," : ""}${quoted}:${dumpPythonJson(item)}`;
  }
  return `{${text}}`;
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  "\\": "\\\\",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

/** A character that a Python string literal escapes: tested for first, then replaced (the global twin). */
const ESCAPED = /["\\]|[^\x20-\x7e]/;
const ESCAPED_ALL = new RegExp(ESCAPED.source, "g");

/** A string literal with Python's ASCII-only escaping: `"`, `\`, the five short escapes, `\uXXXX` otherwise. */
export function quotePythonString(text: string): string {
  // Printable ASCII (space to tilde) stays as is, except `"` and `\`; astral characters become their
  // two surrogate escapes because the replacement works on UTF-16 units, as Python's encoder does.
  // (`dumpPythonJson` tests for the first case itself.)
  if (!ESCAPED.test(text)) return `"${text}"`;
  const escaped = text.replace(ESCAPED_ALL, (char) => {
    return SHORT_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
  return `"${escaped}"`;
}

/**
 * A number as Python writes it after reading it from the API server: integers as integers, other
 * floats in `repr` notation (exponent form below 1e-4, with at least two exponent digits).
 */
export function formatPythonNumber(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`JSON cannot hold the number ${value}.`);
  if (Number.isInteger(value)) return String(value === 0 ? 0 : value); // no "-0": the server sends ints
  const magnitude = Math.abs(value);
  if (magnitude >= 1e-4) return String(value);
  // JavaScript gives the shortest round-tripping digits, as Python does; only the exponent differs: e-7 vs e-07.
  return value.toExponential().replace(/e([+-])(\d)$/, "e$10$2");
}

/**
 * Whether JavaScript orders the key as an array index, i.e. before all other keys. Objects with such
 * keys are written with their keys sorted (see the module's note).
 */
function isIndexLike(key: string): boolean {
  return /^(?:0|[1-9][0-9]{0,9})$/.test(key) && Number(key) < 4294967295;
}
