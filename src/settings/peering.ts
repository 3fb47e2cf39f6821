/**
 * Settings of peering: the keep-alive records that operators write on `KopfPeering` and
 * `ClusterKopfPeering` objects, and the priorities by which they pause for each other.
 *
 * @module
 */

/**
 * How this operator takes part in peering. `kopf run --standalone`, `--peering NAME`,
 * `--priority N` and `--dev` set these before the startup handlers run, which may change them.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.startup(function configure({ settings }) {
 *   settings.peering.name = "my-operator";
 *   settings.peering.priority = 10;
 *   settings.peering.mandatory = true;
 * });
 * ```
 */
export class PeeringSettings {
  /** The name of the peering object(s) to write keep-alives to. Kopf's default: `"default"`. */
  name = "default";
  /**
   * The priority announced in keep-alives: operators pause while a live peer has a higher one,
   * and all operators of the same priority pause together. Kopf's default: 0 (`--dev`: 666).
   */
  priority = 0;
  /**
   * Seconds a keep-alive stays valid; keep-alives are written every `lifetime - 5...10` s (at least
   * every second). Kopf's default: 60.
   */
  lifetime = 60;
  /**
   * Whether the operator stays paused while the peering CRD or the peering object is missing.
   * Otherwise, without them, it runs as if standalone. Kopf's default: `false` (`--peering NAME`
   * makes it `true`).
   */
  mandatory = false;
  /** No peering at all: no keep-alives, never paused by peers. Kopf's default: `false`. */
  standalone = false;
  /** Keep-alives are not logged (a missing peering object still is). Kopf's default: `false`. */
  stealth = false;
  /**
   * Whether the keep-alives go to the `ClusterKopfPeering` (true) or to a `KopfPeering` in each
   * served namespace (false). Set from the operator's mode at start (`-A`: true); a startup
   * handler may change it, e.g. to let a namespaced operator peer cluster-wide.
   */
  clusterwide = false;

  /** The inverse of {@linkcode PeeringSettings.clusterwide}, as Kopf offers it. */
  get namespaced(): boolean {
    return !this.clusterwide;
  }
  set namespaced(value: boolean) {
    this.clusterwide = !value;
  }
}
