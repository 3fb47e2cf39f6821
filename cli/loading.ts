/**
 * Importing the user's handler files and modules, which register their handlers as they load.
 *
 * @module
 */

import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** A handler file or module could not be imported; the CLI prints it and exits with code 1. */
export class LoadingError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "LoadingError";
  }
}

/**
 * Imports files (relative to the working directory), then module specifiers, each in order.
 *
 * @param files Paths of handler files.
 * @param modules Module specifiers (`-m`): a path (`./x.ts`, `../x.ts`, `/abs/x.ts`, relative to
 *   the working directory), a URL (`file:`, `npm:`, `jsr:`, `https:`), or a bare name resolved by
 *   the import map.
 */
export async function loadHandlers(files: string[], modules: string[]): Promise<void> {
  for (const file of files) {
    const path = resolve(file);
    try {
      const stat = await Deno.stat(path);
      if (!stat.isFile) throw new LoadingError(`${file}: not a file.`);
    } catch (error) {
      if (error instanceof LoadingError) throw error;
      throw new LoadingError(`${file}: no such handler file (looked at ${path}).`);
    }
    await importOrExplain(pathToFileURL(path).href, file);
  }
  for (const specifier of modules) await importOrExplain(resolveSpecifier(specifier), specifier);
}

/**
 * A `-m` specifier as `import()` needs it: paths become `file:` URLs relative to the working
 * directory (not to this file); URLs and bare names stay as they are.
 *
 * @param specifier The specifier as given.
 */
export function resolveSpecifier(specifier: string): string {
  if (/^\.{1,2}([/\\]|$)/.test(specifier) || specifier.startsWith("/") || /^[a-zA-Z]:[/\\]/.test(specifier)) {
    return pathToFileURL(resolve(specifier)).href;
  }
  return specifier;
}

async function importOrExplain(specifier: string, shown: string): Promise<void> {
  try {
    await import(specifier);
  } catch (error) {
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new LoadingError(`${shown}: failed to import: ${detail}`, { cause: error });
  }
}
