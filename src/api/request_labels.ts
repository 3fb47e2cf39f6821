/**
 * What a request is counted as in the request counters and metrics, when it does not say: a verb
 * from its method, a resource from its path.
 *
 * @module
 */

import type { Verb } from "./counters.ts";

/** The verb a request is counted as when it names none, by its HTTP method. */
export const VERB_OF_METHOD: Record<string, Verb> = {
  GET: "get",
  POST: "create",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
};

/**
 * The resource a path addresses, for counting: `/api/v1/namespaces/ns/pods/x/status` ->
 * `pods/status`; non-resource paths (`/apis`, `/version`) count under themselves.
 */
export function resourceOfPath(path: string): string {
  const parts = path.split("?", 1)[0].split("/").filter(Boolean);
  let rest: string[];
  if (parts[0] === "api" && parts.length >= 2) rest = parts.slice(2);
  else if (parts[0] === "apis" && parts.length >= 3) rest = parts.slice(3);
  else return "/" + parts.join("/");
  if (rest.length === 0) return "/" + parts.join("/");
  if (rest[0] === "namespaces" && rest.length >= 3) rest = rest.slice(2);
  const [plural, , subresource] = rest;
  return subresource ? `${plural}/${subresource}` : plural;
}
