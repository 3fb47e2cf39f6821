/**
 * Requests for `ValidatingWebhookConfiguration` and `MutatingWebhookConfiguration` objects
 * (`admissionregistration.k8s.io/v1`, cluster-scoped): creating one if absent, and replacing its
 * list of webhooks with a merge-patch.
 *
 * @module
 */

import type { ApiClient } from "./client.ts";
import { ApiConflictError } from "./errors.ts";
import { resourcePath } from "./paths.ts";

/** The two kinds of webhook configurations. */
export type WebhookConfigurationType = "validating" | "mutating";

const GROUP = "admissionregistration.k8s.io";
const VERSION = "v1";

/** The path of a configuration (or of their collection without a name). */
export function webhookConfigurationPath(type: WebhookConfigurationType, name?: string): string {
  const plural = `${type}webhookconfigurations`;
  return resourcePath({ group: GROUP, version: VERSION, plural, namespaced: false }, { name });
}

/**
 * Creates the configuration without webhooks if it does not exist (a 409 means it exists: fine).
 * Other errors (e.g. 403 without RBAC permissions to create it) are thrown.
 */
export async function createWebhookConfiguration(
  client: ApiClient,
  type: WebhookConfigurationType,
  name: string,
  signal?: AbortSignal,
): Promise<void> {
  const kind = type === "validating" ? "ValidatingWebhookConfiguration" : "MutatingWebhookConfiguration";
  try {
    await client.request({
      method: "POST",
      path: webhookConfigurationPath(type),
      body: { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { name }, webhooks: [] },
      signal,
    });
  } catch (error) {
    if (!(error instanceof ApiConflictError)) throw error;
  }
}

/** Replaces the configuration's webhooks with these (a merge-patch replaces the whole list). */
export async function patchWebhookConfiguration(
  client: ApiClient,
  type: WebhookConfigurationType,
  name: string,
  webhooks: readonly unknown[],
  signal?: AbortSignal,
): Promise<void> {
  await client.request({
    method: "PATCH",
    path: webhookConfigurationPath(type, name),
    body: { webhooks },
    contentType: "application/merge-patch+json",
    signal,
  });
}
