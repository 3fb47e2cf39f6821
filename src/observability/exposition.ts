/**
 * Metrics kept in memory and written in Prometheus' text exposition format (version 0.0.4):
 * counters, gauges and histograms with fixed label names, in a registry that renders them all.
 *
 * Our own writer rather than a library: the format is a few lines of text per series, and the
 * hot path must cost no more than a map lookup and an addition (see the README's dependencies).
 *
 * @module
 */

/** The content type of the text exposition format. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** What every metric kind shares: a name, a help text, label names, and its series as text. */
export interface Metric {
  /** The metric's name, e.g. `kopf_handler_runs_total`. */
  readonly name: string;
  /** One line saying what it measures. */
  readonly help: string;
  /** `counter`, `gauge` or `histogram`. */
  readonly type: "counter" | "gauge" | "histogram";
  /** Appends the `# HELP`, `# TYPE` and sample lines to `lines`. */
  render(lines: string[]): void;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Label values escaped as the format requires: backslash, double quote and line feed. */
function escapeValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** Series are kept by their label values joined with a separator no label value is expected to hold. */
const SEPARATOR = "\u0000";

abstract class Labelled<S> implements Metric {
  readonly name: string;
  readonly help: string;
  abstract readonly type: "counter" | "gauge" | "histogram";
  readonly labelNames: readonly string[];
  protected readonly series: Map<string, { values: readonly string[]; state: S }> = new Map();

  constructor(name: string, help: string, labelNames: readonly string[]) {
    if (!NAME.test(name)) throw new TypeError(`A metric name must match ${NAME}, not "${name}".`);
    for (const label of labelNames) {
      if (!LABEL.test(label) || label.startsWith("__") || label === "le") {
        throw new TypeError(`"${label}" cannot be a label name of ${name}: use letters, digits and "_".`);
      }
    }
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  protected abstract fresh(): S;

  /**
   * The series by their label values, one level of maps per label: found without joining the
   * values into a key (counted on every request and watch event).
   */
  #tree: Map<string, unknown> = new Map();

  /**
   * The live state of the series of these label values, made at its first use. A caller on a hot
   * path keeps it and counts into it directly (a counter's `value`, a histogram's `observe()`):
   * no lookup by labels per count. {@linkcode reset} detaches kept states: only gauges, set
   * afresh before each rendering, are reset.
   */
  seriesOf(values: readonly string[]): S {
    if (values.length !== this.labelNames.length) {
      throw new TypeError(`${this.name} takes the labels ${this.labelNames.join(", ")}; got ${values.length} values.`);
    }
    let node = this.#tree;
    const last = values.length - 1;
    for (let index = 0; index < last; index++) {
      let next = node.get(values[index]) as Map<string, unknown> | undefined;
      if (next === undefined) node.set(values[index], next = new Map());
      node = next;
    }
    const leaf = last < 0 ? "" : values[last];
    const found = node.get(leaf) as S | undefined;
    if (found !== undefined) return found;
    const key = values.length === 1 ? values[0] : values.join(SEPARATOR);
    let entry = this.series.get(key);
    if (!entry) {
      entry = { values: [...values], state: this.fresh() };
      this.series.set(key, entry);
    }
    node.set(leaf, entry.state);
    return entry.state;
  }

  /** Forgets every series (e.g. before gauges are set again from the current state). */
  reset(): void {
    this.series.clear();
    this.#tree = new Map();
  }

  protected renderSeries(lines: string[]): void {
    // A metric without labels has its one series from the start, as zero.
    if (this.labelNames.length === 0 && this.series.size === 0) this.seriesOf([]);
    for (const { values, state } of this.series.values()) this.renderOne(lines, values, state);
  }

  protected abstract renderOne(lines: string[], values: readonly string[], state: S): void;

  protected labels(values: readonly string[], extra?: string): string {
    const pairs = this.labelNames.map((label, i) => `${label}="${escapeValue(values[i])}"`);
    if (extra !== undefined) pairs.push(extra);
    return pairs.length ? `{${pairs.join(",")}}` : "";
  }

  render(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`);
    this.renderSeries(lines);
  }
}

/**
 * A value that only grows, by label values.
 *
 * @example
 * ```ts
 * import { Counter } from "./exposition.ts";
 * const runs = new Counter("app_runs_total", "Runs so far.", ["outcome"]);
 * runs.inc(["success"]);
 * ```
 */
export class Counter extends Labelled<{ value: number }> {
  readonly type = "counter" as const;

  protected fresh(): { value: number } {
    return { value: 0 };
  }

  /** Adds `by` (1 by default; never negative) to the series of these label values. */
  inc(values: readonly string[] = [], by = 1): void {
    this.seriesOf(values).value += by;
  }

  /** The current value of one series (0 if it has none yet). */
  get(values: readonly string[] = []): number {
    const key = values.length === 1 ? values[0] : values.join(SEPARATOR);
    return this.series.get(key)?.state.value ?? 0;
  }

  protected renderOne(lines: string[], values: readonly string[], state: { value: number }): void {
    lines.push(`${this.name}${this.labels(values)} ${formatNumber(state.value)}`);
  }
}

/** A value that goes up and down, by label values. */
export class Gauge extends Labelled<{ value: number }> {
  readonly type = "gauge" as const;

  protected fresh(): { value: number } {
    return { value: 0 };
  }

  /** Sets the series of these label values. */
  set(values: readonly string[], value: number): void {
    this.seriesOf(values).value = value;
  }

  /** Adds `by` (may be negative) to the series of these label values. */
  add(values: readonly string[], by: number): void {
    this.seriesOf(values).value += by;
  }

  /** The current value of one series (0 if it has none yet). */
  get(values: readonly string[] = []): number {
    const key = values.length === 1 ? values[0] : values.join(SEPARATOR);
    return this.series.get(key)?.state.value ?? 0;
  }

  protected renderOne(lines: string[], values: readonly string[], state: { value: number }): void {
    lines.push(`${this.name}${this.labels(values)} ${formatNumber(state.value)}`);
  }
}

/** One series of a histogram: its buckets' counts, and the sum and count of its observations. */
export class HistogramSeries {
  /** Observations per bucket, not cumulative; those above the last bound are only in `count`. */
  readonly counts: number[];
  /** The sum of the observed values. */
  sum = 0;
  /** How many values were observed. */
  count = 0;
  readonly #bounds: readonly number[];

  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
    this.counts = new Array(bounds.length).fill(0);
  }

  /** Counts one observation. */
  observe(value: number): void {
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        this.counts[i]++;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

/** Observations counted into cumulative buckets by upper bound (seconds, usually), by label values. */
export class Histogram extends Labelled<HistogramSeries> {
  readonly type = "histogram" as const;
  readonly #bounds: readonly number[];

  /** @param bounds the buckets' upper bounds, ascending; `+Inf` is added. */
  constructor(name: string, help: string, labelNames: readonly string[], bounds: readonly number[]) {
    super(name, help, labelNames);
    for (let i = 1; i < bounds.length; i++) {
      if (!(bounds[i] > bounds[i - 1])) throw new TypeError(`The buckets of ${name} must ascend: ${bounds}.`);
    }
    this.#bounds = bounds;
  }

  protected fresh(): HistogramSeries {
    return new HistogramSeries(this.#bounds);
  }

  /** Counts one observation into the series of these label values. */
  observe(values: readonly string[], value: number): void {
    this.seriesOf(values).observe(value);
  }

  /** The number of observations of one series so far. */
  count(values: readonly string[] = []): number {
    const key = values.length === 1 ? values[0] : values.join(SEPARATOR);
    return this.series.get(key)?.state.count ?? 0;
  }

  protected renderOne(lines: string[], values: readonly string[], state: HistogramSeries): void {
    let cumulative = 0;
    for (let i = 0; i < this.#bounds.length; i++) {
      cumulative += state.counts[i];
      lines.push(`${this.name}_bucket${this.labels(values, `le="${formatNumber(this.#bounds[i])}"`)} ${cumulative}`);
    }
    lines.push(`${this.name}_bucket${this.labels(values, 'le="+Inf"')} ${state.count}`);
    lines.push(`${this.name}_sum${this.labels(values)} ${formatNumber(state.sum)}`);
    lines.push(`${this.name}_count${this.labels(values)} ${state.count}`);
  }
}

/**
 * A set of metrics rendered together; collectors run before each rendering to set gauges that
 * are read from the current state (queue depths, stream health) rather than kept up to date.
 */
export class MetricsRegistry {
  readonly #metrics = new Map<string, Metric>();
  readonly #collectors = new Set<() => void>();

  /** Adds a metric; its name must be new. Returns it, for `const x = registry.add(new Counter(...))`. */
  add<M extends Metric>(metric: M): M {
    if (this.#metrics.has(metric.name)) throw new TypeError(`The metric ${metric.name} is registered twice.`);
    this.#metrics.set(metric.name, metric);
    return metric;
  }

  /** Runs `collect` before each rendering until the returned function is called. */
  collect(collect: () => void): () => void {
    this.#collectors.add(collect);
    return () => this.#collectors.delete(collect);
  }

  /** All metrics in the text exposition format, ending with a line feed. */
  render(): string {
    for (const collect of this.#collectors) collect();
    const lines: string[] = [];
    for (const metric of this.#metrics.values()) metric.render(lines);
    return lines.join("\n") + "\n";
  }
}
