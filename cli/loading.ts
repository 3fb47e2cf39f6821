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

/** Imports files (relative to the working directory) and module specifiers, in order. */
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
  for (const specifier of modules) await importOrExplain(specifier, specifier);
}

async function importOrExplain(specifier: string, shown: string): Promise<void> {
  try {
    await import(specifier);
  } catch (error) {
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new LoadingError(`${shown}: failed to import: ${detail}`, { cause: error });
  }
}
