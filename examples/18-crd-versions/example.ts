/**
 * Two versions of one custom resource, and the converters between them: KopfWidget v1 says a size
 * as text (`spec.size: 10Gi`); v2, the stored version, as `{ value: 10, unit: Gi }` and adds a
 * `tier`. The operator serves the converters as the CRD's conversion webhook (HTTPS, self-signed)
 * and points the CRD's `spec.conversion` at itself; kubectl then reads and writes either version.
 *
 * v1 has no `tier`: going down to v1, the converter keeps it in the annotation
 * `kopfwidgets.kopf.dev/v2-fields`, and going up to v2 takes it back from there, so an update made
 * through v1 keeps it.
 *
 *     kubectl apply -f examples/18-crd-versions/crd.yaml
 *     deno task kopf run -A --standalone examples/18-crd-versions/example.ts
 *     kubectl apply -f examples/18-crd-versions/widget-v1.yaml
 *     kubectl get kopfwidgets.v2.kopf.dev kopf-widget-1 -o yaml   # spec.size: { value: 10, unit: Gi }
 *
 * @module
 */

import * as kopf from "@kopf/kopf";
import type { KopfWidgetV1Spec, KopfWidgetV2Spec } from "./types.ts";

/** A KopfWidget at v1, as its converters get and return it. */
type WidgetV1 = kopf.on.ConvertibleObject<KopfWidgetV1Spec>;
/** A KopfWidget at v2, as its converters get and return it. */
type WidgetV2 = kopf.on.ConvertibleObject<KopfWidgetV2Spec>;

/** Where v1 keeps what only v2 has (as JSON). */
const CARRIED = "kopfwidgets.kopf.dev/v2-fields";
const UNITS = ["Mi", "Gi", "Ti"] as const;

kopf.on.startup(function configure({ settings }) {
  settings.admission.server = new kopf.WebhookServer({ addr: "127.0.0.1" });
  settings.admission.managed = "auto.kopf.dev";
});

kopf.on.conversion<WidgetV1, WidgetV2>("kopfwidgets.kopf.dev", { from: "v1", to: "v2" }, function upToV2(body) {
  const [, value, unit] = /^(\d+(?:\.\d+)?)(\w+)$/.exec(body.spec.size) ?? [];
  const known = UNITS.find((known) => known === unit);
  if (value === undefined || known === undefined) {
    throw new Error(
      `spec.size ${JSON.stringify(body.spec.size)} is not a size such as 10Gi (units: ${UNITS.join(", ")}).`,
    );
  }
  const { [CARRIED]: carried, ...annotations } = body.metadata.annotations ?? {};
  const { tier } = carried ? JSON.parse(carried) as Pick<KopfWidgetV2Spec, "tier"> : {};
  const spec: KopfWidgetV2Spec = { ...body.spec, size: { value: Number(value), unit: known } };
  if (tier !== undefined) spec.tier = tier;
  return { ...body, metadata: { ...body.metadata, annotations }, spec };
});

kopf.on.conversion<WidgetV2, WidgetV1>("kopfwidgets.kopf.dev", { from: "v2", to: "v1" }, function downToV1(body) {
  const { size, tier, ...rest } = body.spec;
  const annotations = { ...body.metadata.annotations };
  if (tier !== undefined) annotations[CARRIED] = JSON.stringify({ tier });
  else delete annotations[CARRIED];
  return { ...body, metadata: { ...body.metadata, annotations }, spec: { ...rest, size: `${size.value}${size.unit}` } };
});

// The operator watches the stored (and preferred) version, v2: handlers see v2 objects, whichever version made them.
kopf.on.create<{ spec: KopfWidgetV2Spec }>("kopfwidgets.kopf.dev", function created({ spec }) {
  return { message: `${spec.size.value} ${spec.size.unit}, ${spec.tier ?? "standard"} tier` };
});
