/**
 * Authentication of an operator: the login handlers (`on.login`) run after the startup handlers
 * and before any API request, and whenever the vault has nothing valid left; their results fill
 * the vault. Without login handlers, the ready-made logins run instead: the pod's service
 * account (when in a pod) and the kubeconfig.
 *
 * @module
 */

import type { Indices } from "../model/index_store.ts";
import { getLogger } from "@logtape/logtape";
import { ConnectionInfo, credentialsOf, fingerprintOf } from "../api/connection_info.ts";
import type { Credentials } from "../api/credentials.ts";
import { loginWithKubeconfig, loginWithServiceAccount } from "../api/login.ts";
import { LoginError } from "../api/login_error.ts";
import { Vault, type VaultEntry } from "../api/vault.ts";
import type { Settings } from "../settings/settings.ts";
import { type ActivityContext, ActivityError, runActivity } from "./activities.ts";
import type { Memo } from "./context.ts";
import type { Registry } from "./registry.ts";

const logger = getLogger(["kopf", "activities", "authentication"]);

/**
 * A login handler: returns where the API server is and how to authenticate, or `null`/`undefined`
 * for nothing (other login handlers may give something).
 */
export type LoginFn = (
  context: ActivityContext,
) => ConnectionInfo | null | undefined | Promise<ConnectionInfo | null | undefined>;

/** What authentication needs. */
export interface Authentication {
  /** Where the login handlers are. */
  registry: Registry;
  /** The operator's settings, for the handlers. */
  settings: Settings;
  /** The operator's memo, for the handlers. */
  memo: Memo;
  /** The operator's indexes, for the handlers. */
  indices?: Indices;
  /** Stops the login handlers (the operator is stopping). */
  signal?: AbortSignal;
  /** Without login handlers: the kubeconfig file to use (the kubeconfig only, then). */
  kubeconfig?: string;
  /** Without login handlers: the kubeconfig context to use (the kubeconfig only, then). */
  context?: string;
}

/** The ids under which the ready-made logins put their credentials into the vault. */
const SERVICE_ACCOUNT_KEY = "login_with_service_account";
const KUBECONFIG_KEY = "login_with_kubeconfig";

/**
 * Makes the operator's vault and authenticates initially: fixed `credentials` if given (then
 * nothing logs in), else the login handlers or, without them, the ready-made logins. Later,
 * whenever the vault runs dry, it logs in again; if that fails, `onFailure` gets the error (the
 * operator stops with it) and the waiting requests fail with a {@linkcode LoginError}.
 *
 * @param run What authentication needs.
 * @param credentials Fixed credentials given to the operator, if any.
 * @param onFailure Called when logging in again has failed, unless the operator is stopping.
 * @returns The vault, with valid credentials in it; rejects with a {@linkcode LoginError} if the
 *   initial authentication has failed.
 */
export async function openVault(
  run: Authentication,
  credentials: Credentials | undefined,
  onFailure: (error: unknown) => void,
): Promise<Vault> {
  if (credentials) {
    if (run.registry.activities("login").length) {
      logger.warn("The login handlers are not run: the operator has been given credentials.");
    }
    return Vault.fixed(credentials);
  }
  const vault: Vault = new Vault({
    reauthenticate: async () => {
      try {
        await authenticate(run, vault, "Re-authentication");
      } catch (error) {
        if (!run.signal?.aborted) onFailure(error);
        throw error;
      }
    },
  });
  await authenticate(run, vault, "Initial authentication");
  return vault;
}

/**
 * Runs the login handlers (all of them, retried by their options) -- or the ready-made logins if
 * there are none -- and puts their results into the vault.
 *
 * @param run What authentication needs.
 * @param vault Where the results go.
 * @param title `Initial authentication` or `Re-authentication`, for the log and errors.
 * @returns Once the vault has valid credentials; rejects with a {@linkcode LoginError} otherwise.
 */
export async function authenticate(run: Authentication, vault: Vault, title: string): Promise<void> {
  // The initial line stays quiet by default: a failing start then says exactly one line, its error.
  if (title === "Initial authentication") logger.debug(`${title} has been initiated.`);
  else logger.info(`${title} has been initiated.`);

  const handlers = run.registry.activities("login");
  let results: Map<string, ConnectionInfo>;
  if (handlers.length) {
    let outcome: Record<string, unknown>;
    try {
      outcome = await runActivity(handlers, {
        activity: "login",
        settings: run.settings,
        memo: run.memo,
        indices: run.indices,
        signal: run.signal,
      });
    } catch (error) {
      if (!(error instanceof ActivityError)) throw error;
      throw new LoginError(`${title} has failed: ${error.message}`, { cause: error });
    }
    results = new Map();
    for (const [id, value] of Object.entries(outcome)) {
      if (!(value instanceof ConnectionInfo)) {
        throw new LoginError(
          `${title} has failed: login handler '${id}' has returned ${describe(value)}; ` +
            "return a kopf.ConnectionInfo, or null for nothing",
        );
      }
      results.set(id, value);
    }
  } else {
    results = await readyMadeLogins(run, title);
  }

  const entries = new Map<string, VaultEntry>();
  for (const [id, info] of results) {
    let credentials: Credentials;
    try {
      credentials = await credentialsOf(info, `login handler '${id}'`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new LoginError(`${title} has failed: ${message}`, { cause: error });
    }
    entries.set(id, {
      credentials,
      priority: info.priority,
      expiration: info.expiration,
      fingerprint: fingerprintOf(info),
    });
  }
  vault.populate(entries);
  if (!vault.size) {
    const why = entries.size
      ? "the login handlers have returned only credentials that the API server has rejected before or that have " +
        "expired; make them return fresh credentials"
      : "no credentials were retrieved from the login handlers";
    throw new LoginError(`${title} has failed: ${why}.`);
  }
  logger.info(`${title} has finished.`);
}

/**
 * The logins used without login handlers: the service account (in a pod) and the kubeconfig,
 * or only the kubeconfig when a file or context is given. One failing while the other works is a
 * warning; nothing at all is an error that says where it looked.
 */
async function readyMadeLogins(run: Authentication, title: string): Promise<Map<string, ConnectionInfo>> {
  const results = new Map<string, ConnectionInfo>();
  const failures: unknown[] = [];
  const kubeconfigOnly = Boolean(run.kubeconfig) || run.context !== undefined;
  const logins: [string, () => Promise<ConnectionInfo | null>][] = [
    ...(kubeconfigOnly ? [] : [[SERVICE_ACCOUNT_KEY, () => loginWithServiceAccount()] as [
      string,
      () => Promise<ConnectionInfo | null>,
    ]]),
    [KUBECONFIG_KEY, () => loginWithKubeconfig({ path: run.kubeconfig, context: run.context })],
  ];
  for (const [key, login] of logins) {
    try {
      const info = await login();
      if (info) results.set(key, info);
    } catch (error) {
      failures.push(error);
    }
  }
  if (!results.size) {
    const first = failures[0];
    if (first !== undefined) {
      const message = first instanceof Error ? first.message : String(first);
      throw new LoginError(`${title} has failed: ${message}`, { cause: first });
    }
    throw new LoginError(
      `${title} has failed: no Kubernetes credentials found: KUBECONFIG is not set, ~/.kube/config does not ` +
        "exist, and this is not a pod with a service account; create a kubeconfig, set KUBECONFIG, " +
        "or add a login handler (kopf.on.login)",
    );
  }
  for (const failure of failures) {
    logger.warn("A ready-made login has failed, the others are used: {message}", {
      message: failure instanceof Error ? failure.message : String(failure),
    });
  }
  return results;
}

function describe(value: unknown): string {
  if (value === null || typeof value !== "object") return `${typeof value} ${JSON.stringify(value)}`;
  return `an object of ${value.constructor?.name ?? "no class"}`;
}
