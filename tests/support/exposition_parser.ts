/**
 * A strict reader of Prometheus' text exposition format (0.0.4), written from the format's
 * specification for the tests: it throws on anything the format does not allow — a sample
 * before its metric's `# TYPE`, a metric family split in two, bad names or label syntax, bad
 * escapes, duplicate series, a histogram whose buckets are not cumulative or lack `+Inf`, a
 * counter that is negative — and returns the samples for assertions on their values.
 *
 * @module
 */

/** One sample line: name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The metric families and their samples. */
export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

function parseValue(text: string, line: number): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`line ${line}: bad value "${text}"`);
  return Number(text);
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf("=", i);
    if (eq < 0) throw new Error(`line ${line}: a label without "="`);
    const name = text.slice(i, eq);
    if (!LABEL.test(name)) throw new Error(`line ${line}: bad label name "${name}"`);
    if (name in labels) throw new Error(`line ${line}: label ${name} given twice`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: the value of ${name} is not quoted`);
    let value = "";
    let j = eq + 2;
    for (;; j++) {
      if (j >= text.length) throw new Error(`line ${line}: unterminated value of ${name}`);
      const c = text[j];
      if (c === '"') break;
      if (c === "\\") {
        const next = text[++j];
        if (next === "\\") value += "\\";
        else if (next === '"') value += '"';
        else if (next === "n") value += "\n";
        else throw new Error(`line ${line}: bad escape \\${next} in ${name}`);
      } else {
        value += c;
      }
    }
    labels[name] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (i !== text.length) throw new Error(`line ${line}: expected "," after label ${name}`);
  }
  return labels;
}

/** The family a sample belongs to: a histogram's `_bucket`, `_sum` and `_count` belong to it. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  const match = /^(.*)_(bucket|sum|count)$/.exec(name);
  if (match && (types.get(match[1]) === "histogram" || types.get(match[1]) === "summary")) return match[1];
  return undefined;
}

/** Parses an exposition; throws an `Error` naming the line on anything the format forbids. */
export function parseExposition(text: string): Exposition {
  if (text.length && !text.endsWith("\n")) throw new Error("the exposition does not end with a line feed");
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: Sample[] = [];
  const seen = new Set<string>();
  const closed = new Set<string>();
  let current: string | undefined;
  const lines = text.split("\n").slice(0, -1);
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    if (raw.startsWith("#")) {
      const match = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(raw);
      if (!match) return; // Other comments are allowed.
      const [, kind, name, rest] = match;
      if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name "${name}"`);
      if (closed.has(name)) throw new Error(`line ${line}: the family ${name} is split`);
      if (current !== name && current !== undefined) closed.add(current);
      current = name;
      if (kind === "HELP") {
        if (helps.has(name)) throw new Error(`line ${line}: a second HELP for ${name}`);
        helps.add(name);
      } else {
        if (types.has(name)) throw new Error(`line ${line}: a second TYPE for ${name}`);
        if (samples.some((sample) => familyOf(sample.name, new Map([[name, rest ?? ""]])) === name)) {
          throw new Error(`line ${line}: TYPE of ${name} after its samples`);
        }
        if (!TYPES.has(rest ?? "")) throw new Error(`line ${line}: bad type "${rest}"`);
        types.set(name, rest!);
      }
      return;
    }
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(raw);
    if (!match) throw new Error(`line ${line}: not a sample: ${raw}`);
    const [, name, labelText, valueText] = match;
    const family = familyOf(name, types) ?? name;
    if (closed.has(family)) throw new Error(`line ${line}: the family ${family} is split`);
    if (current !== family && current !== undefined) closed.add(current);
    current = family;
    const labels = parseLabels(labelText ?? "", line);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`line ${line}: duplicate series ${key}`);
    seen.add(key);
    const value = parseValue(valueText, line);
    const type = types.get(family);
    if (type === "counter" && !(value >= 0)) throw new Error(`line ${line}: a counter must not be negative`);
    if (type === "histogram" && name === family) throw new Error(`line ${line}: a bare sample of histogram ${family}`);
    if (type === "histogram" && name.endsWith("_bucket") && !("le" in labels)) {
      throw new Error(`line ${line}: a bucket without "le"`);
    }
    samples.push({ name, labels, value });
  });
  checkHistograms(types, samples);
  return { types, samples };
}

function checkHistograms(types: Map<string, string>, samples: Sample[]): void {
  for (const [family, type] of types) {
    if (type !== "histogram") continue;
    const groups = new Map<string, Sample[]>();
    for (const sample of samples.filter((s) => s.name === `${family}_bucket`)) {
      const { le: _, ...rest } = sample.labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      groups.set(key, [...groups.get(key) ?? [], sample]);
    }
    for (const [key, buckets] of groups) {
      const bounds = buckets.map((b) => parseValue(b.labels.le, 0));
      for (let i = 1; i < buckets.length; i++) {
        if (!(bounds[i] > bounds[i - 1])) throw new Error(`${family}${key}: bucket bounds do not ascend`);
        if (buckets[i].value < buckets[i - 1].value) throw new Error(`${family}${key}: buckets are not cumulative`);
      }
      if (bounds.at(-1) !== Infinity) throw new Error(`${family}${key}: no +Inf bucket`);
      const count = samples.find((s) =>
        s.name === `${family}_count` && JSON.stringify(Object.entries(s.labels).sort()) === key
      );
      if (!count || count.value !== buckets.at(-1)!.value) throw new Error(`${family}${key}: _count differs from +Inf`);
    }
  }
}

/** The sum of the values of a metric's samples whose labels include the given ones. */
export function total(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  return exposition.samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
