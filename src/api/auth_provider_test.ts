/** Tests of auth-provider tokens stored in kubeconfigs, on a fake clock. */

import assert from "node:assert/strict";
import { StoredProviderToken } from "./auth_provider.ts";
import { CredentialsError } from "./credentials.ts";
import { Fields } from "./kubeconfig_fields.ts";

const user = new Fields({}, "/k/config", 'user "u"');
const provider = (body: Record<string, unknown>) => new Fields(body, user.file, user.owner, "auth-provider.");

Deno.test("StoredProviderToken: usable until config.expiry, refused from then on", () => {
  let now = Date.parse("2030-01-01T00:00:00Z");
  const token = new StoredProviderToken(
    user,
    provider({ name: "azure", config: { "access-token": "a", expiry: "2030-01-01T01:00:00Z" } }),
    () => now,
  );
  assert.equal(token.header(), "Bearer a");
  now = Date.parse("2030-01-01T01:00:00Z");
  assert.throws(
    () => token.header(),
    (error: unknown) =>
      error instanceof CredentialsError &&
      error.message.startsWith('kubeconfig /k/config: the azure token of user "u" expired at 2030-01-01T01:00:00.000Z'),
  );
});

Deno.test("StoredProviderToken: oidc prefers the id-token; an opaque token without expiry never expires here", () => {
  const oidc = new StoredProviderToken(
    user,
    provider({ name: "oidc", config: { "id-token": "i", "access-token": "a" } }),
  );
  assert.equal(oidc.header(), "Bearer i");
  const opaque = new StoredProviderToken(user, provider({ name: "gcp", config: { "access-token": "not.a-jwt.x" } }));
  assert.equal(opaque.expiresAt, undefined);
});
