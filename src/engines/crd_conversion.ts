/**
 * Managed conversion webhooks (`settings.admission.managed` with `kopf.on.conversion`): the
 * `spec.conversion` of each CRD with converters points at the operator's webhook server -- its
 * URL or service with `/conversion/<crd name>` appended, and its CA -- rewritten when the endpoint
 * changes (a new self-signed certificate at each start, a tunnel's new URL) and left in place at
 * exit: a CRD without its webhook could not serve its other versions at all.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { patchCrdConversion, readCrdConversion } from "../api/crd_conversions.ts";
import { ApiNotFoundError } from "../api/errors.ts";
import type { WebhookClientConfig } from "../model/admission.ts";
import { CONVERSION_REVIEW_VERSIONS } from "../model/conversion_review.ts";
import { deepEqual } from "../model/diff.ts";
import type { ConversionTarget } from "./conversion.ts";

const logger = getLogger(["kopf", "conversion"]);

/** The path segment under the server's URL where conversion reviews go: `<url>/conversion/<crd name>`. */
export const CONVERSION_PATH = "conversion";

/** The client config of a CRD's conversion webhook: the server's, with `/conversion/<crd name>` appended. */
export function conversionClientConfig(config: WebhookClientConfig, crdName: string): WebhookClientConfig {
  const suffix = `/${CONVERSION_PATH}/${encodeURIComponent(crdName)}`;
  const result: WebhookClientConfig = {};
  if (config.url !== undefined) result.url = config.url.replace(/\/+$/, "") + suffix;
  if (config.service !== undefined) {
    // The API server fills in the default port: the same here, so that an unchanged config compares equal.
    const path = (config.service.path ?? "").replace(/\/+$/, "") + suffix;
    result.service = { ...config.service, path, port: config.service.port ?? 443 };
  }
  if (config.caBundle !== undefined) result.caBundle = config.caBundle;
  return result;
}

/** A CRD's `spec.conversion` for the operator's webhook server. */
export function desiredConversion(config: WebhookClientConfig, crdName: string): Record<string, unknown> {
  return {
    strategy: "Webhook",
    webhook: {
      clientConfig: conversionClientConfig(config, crdName),
      conversionReviewVersions: [...CONVERSION_REVIEW_VERSIONS],
    },
  };
}

/**
 * Keeps the `spec.conversion` of the CRDs with converters pointing at the webhook server: each is
 * read, and replaced only when it differs (so a restart with the same endpoint writes nothing).
 */
export class CrdConversionManager {
  readonly #client: ApiClient;

  /** @param client the API client (it needs `get` and `patch` of the CRDs). */
  constructor(client: ApiClient) {
    this.#client = client;
  }

  /**
   * Points each target's CRD at this endpoint. A missing CRD is warned about; other errors (e.g.
   * 403 for lack of RBAC permissions) are thrown.
   */
  async configure(
    clientConfig: WebhookClientConfig,
    targets: readonly ConversionTarget[],
    signal?: AbortSignal,
  ): Promise<void> {
    for (const target of targets) {
      const desired = desiredConversion(clientConfig, target.name);
      let current: unknown;
      try {
        current = await readCrdConversion(this.#client, target.name, signal);
      } catch (error) {
        if (!(error instanceof ApiNotFoundError)) throw error;
        logger.warn("There is no CRD {name} to point at the conversion webhook: is it a built-in resource?", {
          name: target.name,
        });
        continue;
      }
      if (deepEqual(current, desired)) continue;
      logger.info("Pointing the conversion webhook of the CRD {name} at {where}.", {
        name: target.name,
        where: clientConfig.url ?? `the service ${clientConfig.service?.namespace}/${clientConfig.service?.name}`,
      });
      await patchCrdConversion(this.#client, target.name, desired, signal);
    }
  }
}
