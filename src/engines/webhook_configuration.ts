/**
 * Managed webhook configurations (`settings.admission.managed`): one `ValidatingWebhookConfiguration`
 * and one `MutatingWebhookConfiguration` of that name, with one webhook per admission handler --
 * its rules from the served resources, its object selector from the handler's label filters,
 * its client config from the webhook server -- rewritten whenever the endpoint or the served
 * resources change, and stripped of non-persistent webhooks when the operator exits.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import {
  createWebhookConfiguration,
  patchWebhookConfiguration,
  type WebhookConfigurationType,
} from "../api/webhook_configurations.ts";
import type { AdmissionHandler } from "../handling/admission_handler.ts";
import { ABSENT, PRESENT } from "../handling/filters.ts";
import { type WebhookClientConfig, webhookName } from "../model/admission.ts";
import type { Resource } from "../model/resource.ts";

const logger = getLogger(["kopf", "admission"]);

/** Seconds the API server waits for a webhook's answer. */
export const WEBHOOK_TIMEOUT = 30;

/** One label requirement of an object selector. */
export interface LabelRequirement {
  key: string;
  operator: "In" | "Exists" | "DoesNotExist";
  values?: string[];
}

/**
 * The object selector for a handler's label filters: exact values become `In [value]`,
 * `kopf.PRESENT` `Exists`, `kopf.ABSENT` `DoesNotExist`; callbacks are left to the handler's own
 * filtering. `undefined` when nothing can be selected on the server.
 *
 * @example
 * ```ts
 * objectSelector({ a: kopf.PRESENT, b: "x" });
 * // { matchExpressions: [{ key: "a", operator: "Exists" }, { key: "b", operator: "In", values: ["x"] }] }
 * ```
 */
export function objectSelector(
  labels: AdmissionHandler["options"]["labels"],
): { matchExpressions: LabelRequirement[] } | undefined {
  const expressions: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(labels ?? {})) {
    if (value === PRESENT) expressions.push({ key, operator: "Exists" });
    else if (value === ABSENT) expressions.push({ key, operator: "DoesNotExist" });
    else if (typeof value === "string") expressions.push({ key, operator: "In", values: [value] });
  }
  return expressions.length ? { matchExpressions: expressions } : undefined;
}

/** The client config of one handler's webhook: the server's, with `/<id>` appended to the URL or service path. */
export function handlerClientConfig(config: WebhookClientConfig, id: string): WebhookClientConfig {
  const suffix = `/${encodeURIComponent(id)}`;
  const result: WebhookClientConfig = {};
  if (config.url !== undefined) result.url = config.url.replace(/\/+$/, "") + suffix;
  if (config.service !== undefined) {
    result.service = { ...config.service, path: (config.service.path ?? "").replace(/\/+$/, "") + suffix };
  }
  if (config.caBundle !== undefined) result.caBundle = config.caBundle;
  return result;
}

/** The rules of a handler's webhook: one per served resource. */
export function webhookRules(handler: AdmissionHandler, resources: readonly Resource[]): unknown[] {
  const subresource = handler.options.subresource;
  return resources.map((resource) => ({
    apiGroups: [resource.group],
    apiVersions: [resource.version],
    resources: [subresource === undefined ? resource.plural : `${resource.plural}/${subresource}`],
    operations: handler.operations ? [...handler.operations] : ["*"],
    scope: "*",
  }));
}

/**
 * The webhooks of one configuration: one per handler of that type that serves some resource
 * (optionally only the persistent ones), as the API expects them.
 */
export function buildWebhooks(
  handlers: readonly AdmissionHandler[],
  options: {
    type: WebhookConfigurationType;
    managed: string;
    clientConfig: WebhookClientConfig;
    resources: ReadonlyMap<string, readonly Resource[]>;
    persistentOnly?: boolean;
  },
): Record<string, unknown>[] {
  const kind = options.type === "validating" ? "validate" : "mutate";
  const webhooks: Record<string, unknown>[] = [];
  for (const handler of handlers) {
    if (handler.type !== kind) continue;
    if (options.persistentOnly && !handler.options.persistent) continue;
    const resources = options.resources.get(handler.id) ?? [];
    if (resources.length === 0) continue;
    const webhook: Record<string, unknown> = {
      name: webhookName(handler.id, options.managed),
      sideEffects: handler.options.sideEffects ? "NoneOnDryRun" : "None",
      failurePolicy: handler.options.ignoreFailures ? "Ignore" : "Fail",
      matchPolicy: "Equivalent",
      rules: webhookRules(handler, resources),
      clientConfig: handlerClientConfig(options.clientConfig, handler.id),
      timeoutSeconds: WEBHOOK_TIMEOUT,
      admissionReviewVersions: ["v1", "v1beta1"],
    };
    const selector = objectSelector(handler.options.labels);
    if (selector) webhook.objectSelector = selector;
    if (options.type === "mutating") webhook.reinvocationPolicy = "Never";
    webhooks.push(webhook);
  }
  return webhooks;
}

/** Keeps the two configurations of one name in line with the handlers, the endpoint and the resources. */
export class WebhookConfigurationManager {
  readonly #client: ApiClient;
  readonly #managed: string;
  readonly #handlers: readonly AdmissionHandler[];
  #created = false;
  #last: { clientConfig: WebhookClientConfig; resources: ReadonlyMap<string, readonly Resource[]> } | undefined;

  /**
   * @param client the API client.
   * @param options `managed`: the configurations' name; `handlers`: the admission handlers.
   */
  constructor(client: ApiClient, options: { managed: string; handlers: readonly AdmissionHandler[] }) {
    this.#client = client;
    this.#managed = options.managed;
    this.#handlers = options.handlers;
  }

  /**
   * Creates both configurations if absent (once), then replaces their webhooks for this endpoint
   * and these resources. Errors (e.g. 403 for lack of RBAC permissions) are thrown.
   */
  async configure(
    clientConfig: WebhookClientConfig,
    resources: ReadonlyMap<string, readonly Resource[]>,
    signal?: AbortSignal,
  ): Promise<void> {
    this.#last = { clientConfig, resources };
    if (!this.#created) {
      for (const type of ["validating", "mutating"] as const) {
        await createWebhookConfiguration(this.#client, type, this.#managed, signal);
      }
      this.#created = true;
    }
    for (const type of ["validating", "mutating"] as const) {
      logger.info("Reconfiguring the {type} webhook {name}.", { type, name: this.#managed });
      const webhooks = buildWebhooks(this.#handlers, { type, managed: this.#managed, clientConfig, resources });
      await patchWebhookConfiguration(this.#client, type, this.#managed, webhooks, signal);
    }
  }

  /**
   * Leaves only the persistent handlers' webhooks in both configurations (if they were ever
   * configured). Failures are logged, not thrown: the operator is exiting anyway.
   */
  async cleanup(signal?: AbortSignal): Promise<void> {
    const last = this.#last;
    if (!last || !this.#created) return;
    for (const type of ["validating", "mutating"] as const) {
      logger.info("Cleaning up the admission webhook {name} ({type}).", { type, name: this.#managed });
      const webhooks = buildWebhooks(this.#handlers, {
        type,
        managed: this.#managed,
        clientConfig: last.clientConfig,
        resources: last.resources,
        persistentOnly: true,
      });
      try {
        await patchWebhookConfiguration(this.#client, type, this.#managed, webhooks, signal);
      } catch (error) {
        logger.error("Cannot clean up the {type} webhook configuration {name}: {error}", {
          type,
          name: this.#managed,
          error,
        });
      }
    }
  }
}
