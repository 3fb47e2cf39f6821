/**
 * What an error answer of the API server says beyond its HTTP status: its `Status` body, decoded
 * when it is one, and how long the server asks to wait before the next attempt.
 *
 * @module
 */

import type { ApiStatus } from "./errors.ts";

/** Decodes a `Status` body, if the text is one. */
export function parseStatus(text: string): ApiStatus | undefined {
  try {
    const parsed = JSON.parse(text);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed as ApiStatus : undefined;
  } catch {
    return undefined;
  }
}

/** Seconds the server asked to wait: the `Retry-After` header, else the Status' `retryAfterSeconds`. */
export function retryAfter(headers: Headers, status: ApiStatus | undefined): number | undefined {
  const header = headers.get("Retry-After");
  if (header !== null) {
    const seconds = Number(header);
    if (Number.isFinite(seconds)) return Math.max(0, seconds);
    const date = Date.parse(header);
    if (!Number.isNaN(date)) return Math.max(0, (date - Date.now()) / 1000);
  }
  const seconds = status?.details?.retryAfterSeconds;
  return typeof seconds === "number" ? seconds : undefined;
}
