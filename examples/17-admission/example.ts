/**
 * Admission webhooks: validate and default the `spec.numbers` of kopfexamples before they are
 * stored. The operator serves the webhooks over HTTPS with a self-signed certificate and keeps
 * the `auto.kopf.dev` webhook configurations in the cluster up to date (they need RBAC to create
 * and patch `validatingwebhookconfigurations` and `mutatingwebhookconfigurations`).
 *
 * The API server must reach the operator: `127.0.0.1` works for a control plane on this machine;
 * use `kopf.WebhookK3dServer`, `kopf.WebhookMinikubeServer` or a `host` for clusters in VMs.
 *
 *     deno task kopf run -A --standalone examples/17-admission/example.ts
 *     kubectl apply -f examples/obj.yaml   # spec.numbers defaults to [1, 2, 3]
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

kopf.on.startup(function configure({ settings }) {
  settings.admission.server = new kopf.WebhookServer({ addr: "127.0.0.1", cadump: "/tmp/kopf-webhook-ca.pem" });
  settings.admission.managed = "auto.kopf.dev";
});

kopf.on.validate("kopfexamples", function checkNumbers({ spec, warnings }) {
  const numbers = spec.numbers ?? [];
  if (!Array.isArray(numbers)) throw new kopf.AdmissionError("spec.numbers must be a list.", { code: 400 });
  for (const value of numbers) {
    if (typeof value !== "number" && Number.isNaN(Number(value))) {
      throw new kopf.AdmissionError(`${JSON.stringify(value)} is not a number.`, { code: 400 });
    }
    if (typeof value !== "number") warnings.push(`${JSON.stringify(value)} is a string, but a number-like one.`);
  }
});

kopf.on.mutate("kopfexamples", function defaultNumbers({ spec, patch }) {
  if (spec.numbers === undefined) patch.spec.numbers = [1, 2, 3];
});
