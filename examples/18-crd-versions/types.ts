/**
 * The two versions of KopfWidget (kopfwidgets.kopf.dev), the source of crd.yaml:
 *
 *     deno task kopf generate crd examples/18-crd-versions/types.ts --kind KopfWidget --group kopf.dev \
 *       --version v1 --version v2 --short-name kwd -o examples/18-crd-versions/crd.yaml
 *
 * v1 says a size as text (`10Gi`); v2, the stored version, as a number and a unit, and adds a tier.
 *
 * @module
 */

/** A widget as v1 describes it. */
export interface KopfWidgetV1Spec {
  /**
   * Its size, as a number and a unit: `10Gi`.
   * @minLength 1
   */
  size: string;
}

/** A size as v2 describes it. */
export interface Size {
  /**
   * How many units.
   * @minimum 0
   */
  value: number;
  /** The unit. */
  unit: "Mi" | "Gi" | "Ti";
}

/** A widget as v2 describes it. */
export interface KopfWidgetV2Spec {
  /** Its size. */
  size: Size;
  /** Its tier; v1 has no such field (the converters carry it in an annotation). */
  tier?: "standard" | "gold";
}

/**
 * What the operator says about a widget: its handlers' results.
 * @preserveUnknownFields
 */
export interface KopfWidgetStatus {
  [key: string]: unknown;
}
