/**
 * Settings of admission webhooks: the server that receives the reviews, and the webhook
 * configurations the operator keeps in the cluster.
 *
 * @module
 */

import type { AdmissionServer, AdmissionServerFn } from "../model/admission.ts";

/**
 * Where admission reviews arrive and whether the operator manages the webhook configurations.
 * Set them in a startup handler; admission handlers without a server stop the operator at start.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.startup(function configure({ settings }) {
 *   settings.admission.server = new kopf.WebhookServer({ addr: "0.0.0.0", port: 8443, host: "operator.example.com" });
 *   settings.admission.managed = "auto.kopf.dev";
 * });
 * ```
 */
export class AdmissionSettings {
  /**
   * The webhook server or tunnel (`kopf.WebhookServer`, or anything with `serve(fn, signal)`, or
   * such a function); `null`: none, which is an error if admission handlers exist.
   */
  server: AdmissionServer | AdmissionServerFn | null = null;
  /**
   * The name of the `ValidatingWebhookConfiguration` and `MutatingWebhookConfiguration` that the
   * operator creates and keeps up to date (one webhook per handler), e.g. `auto.kopf.dev`;
   * `null` (the default): the configurations are not managed.
   */
  managed: string | null = null;
}
