/**
 * The source bytes that each function of a script ran, from V8's block coverage: how much of a
 * path's code ran, weighted by how often (bench/path_census.ts).
 *
 * @module
 */

/** One range of V8's coverage: a function's whole source or one of its blocks, and how often it ran. */
export interface Range {
  startOffset: number;
  endOffset: number;
  count: number;
}

/** One script of V8's precise coverage: its functions, each with its own range first, then its blocks'. */
export interface ScriptCoverage {
  url: string;
  functions: { functionName: string; ranges: Range[] }[];
}

/**
 * The source bytes each function of a script ran, in all: every block's count times its length, less
 * the blocks and functions nested in it, which count by their own counts.
 */
export function bytesRun(script: ScriptCoverage): number[] {
  const blocks = script.functions.flatMap((fn, owner) => fn.ranges.map((range) => ({ ...range, owner, inner: 0 })));
  // Outer before inner: by start, then the longer first (a function's own range before its first block).
  blocks.sort((a, b) => a.startOffset - b.startOffset || b.endOffset - a.endOffset);
  const run = script.functions.map(() => 0);
  const open: typeof blocks = [];
  for (const block of blocks) {
    while (open.length && open[open.length - 1].endOffset <= block.startOffset) open.pop();
    const parent = open[open.length - 1];
    if (parent) parent.inner += block.endOffset - block.startOffset;
    open.push(block);
  }
  for (const block of blocks) {
    run[block.owner] += block.count * Math.max(0, block.endOffset - block.startOffset - block.inner);
  }
  return run;
}
