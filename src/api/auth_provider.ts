/**
 * Tokens that a kubeconfig user's `auth-provider` (OIDC, and the GCP and Azure providers that
 * kubectl has removed) stored in the kubeconfig: used as bearer tokens while they last. Refreshing
 * them needs each provider's own flow (OIDC's refresh token, cloud SDKs), which is not done here:
 * an expired token is refused with a hint to refresh it with kubectl or to switch to an exec plugin.
 *
 * @module
 */

import type { Fields } from "./kubeconfig_fields.ts";
import { isRecord } from "./kubeconfig_fields.ts";

/**
 * The token an auth-provider stored: `config.id-token` for `oidc` (what kubectl's OIDC provider
 * sends), else `config.access-token`, each falling back to the other. It expires at
 * `config.expiry` if set, else at the `exp` claim when the token is a JWT.
 *
 * @example
 * ```ts
 * import { Fields } from "./kubeconfig_fields.ts";
 * import { StoredProviderToken } from "./auth_provider.ts";
 * const user = new Fields({}, "/home/u/.kube/config", 'user "u"');
 * const provider = new Fields({ name: "gcp", config: { "access-token": "ya29.x" } }, user.file, user.owner, "auth-provider.");
 * console.assert(new StoredProviderToken(user, provider).header() === "Bearer ya29.x");
 * ```
 */
export class StoredProviderToken {
  /** When the token expires, in milliseconds since the epoch; `undefined`: not known. */
  readonly expiresAt: number | undefined;
  readonly #user: Fields;
  readonly #provider: string;
  readonly #header: string;
  readonly #now: () => number;

  /**
   * Reads the stored token; throws a {@linkcode CredentialsError} if there is none or it has expired.
   *
   * @param user The user, for messages.
   * @param provider The user's `auth-provider` mapping.
   * @param now The wall clock in milliseconds (for tests); `Date.now` by default.
   */
  constructor(user: Fields, provider: Fields, now: () => number = Date.now) {
    this.#user = user;
    this.#provider = provider.string("name") ?? "auth-provider";
    this.#now = now;
    const config = provider.fields("config");
    const preferred = this.#provider === "oidc" ? "id-token" : "access-token";
    const token = config?.string(preferred) ?? config?.string("id-token") ?? config?.string("access-token");
    if (!token) {
      user.fail(
        `the ${this.#provider} auth-provider of ${user.owner} has no token stored (config.id-token or ` +
          "config.access-token), and refreshing it is not supported here; run a kubectl command with this " +
          "context so that it stores one, or use an exec plugin",
      );
    }
    this.#header = `Bearer ${token}`;
    this.expiresAt = statedExpiry(config?.string("expiry")) ?? jwtExpiry(token);
    this.header();
  }

  /** The Authorization header; throws a {@linkcode CredentialsError} once the token has expired. */
  header(): string {
    if (this.expiresAt !== undefined && this.#now() >= this.expiresAt) {
      this.#user.fail(
        `the ${this.#provider} token of ${this.#user.owner} expired at ${new Date(this.expiresAt).toISOString()}, ` +
          "and refreshing it is not supported here; refresh it by running a kubectl command with this context, " +
          "or use an exec plugin",
      );
    }
    return this.#header;
  }
}

function statedExpiry(expiry: string | undefined): number | undefined {
  const time = expiry === undefined ? NaN : Date.parse(expiry);
  return Number.isNaN(time) ? undefined : time;
}

function jwtExpiry(token: string): number | undefined {
  const payload = token.split(".")[1];
  if (!payload) return undefined;
  try {
    const claims: unknown = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/")));
    return isRecord(claims) && typeof claims.exp === "number" ? claims.exp * 1000 : undefined;
  } catch {
    return undefined; // Not a JWT: the token is opaque, and only the API server knows when it ends.
  }
}
