/**
 * Small file and text helpers shared by the local cluster's building and process management.
 *
 * @module
 */

/** Whether a path exists and is a regular file (a symlink to one counts). */
export async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** A `.catch()` handler for removals of things that may already be gone. */
export function ignoreNotFound(error: unknown): void {
  if (!(error instanceof Deno.errors.NotFound)) throw error;
}

/** The last `count` lines of a text, for error messages. */
export function lastLines(text: string, count: number): string {
  return text.trimEnd().split("\n").slice(-count).join("\n");
}
