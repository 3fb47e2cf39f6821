/**
 * The error of authentication: login handlers gave nothing usable, or the API server rejected
 * every set of credentials they gave.
 *
 * @module
 */

/**
 * Authentication has failed: no login handler returned credentials, what one returned cannot be
 * used (e.g. a CA given both as a path and as data), or the API server rejected (HTTP 401) all
 * the credentials and logging in again gave no new ones. The message says which and what to do.
 * An operator that cannot authenticate at start fails with it (`kopf run` exits with code 1).
 *
 * @example Failing a login handler for good
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.login({ errors: "permanent" }, function fromVault() {
 *   const token = Deno.env.get("MY_TOKEN");
 *   if (!token) throw new kopf.LoginError("MY_TOKEN is not set; export it before starting the operator.");
 *   return new kopf.ConnectionInfo({ server: "https://10.0.0.1:6443", token, insecure: true });
 * });
 * ```
 */
export class LoginError extends Error {
  /**
   * Makes the error.
   *
   * @param message What failed and what to do about it.
   * @param options The underlying error, if any, as `cause`.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "LoginError";
  }
}
