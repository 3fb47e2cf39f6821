/**
 * The credentials vault: every request takes its credentials from it. Login results go in,
 * keyed by the login handler's id; what the API server rejects (HTTP 401) or what expires goes
 * out; when nothing valid is left, the requests wait while the login handlers run again.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { Credentials } from "./credentials.ts";
import { LoginError } from "./login_error.ts";

const logger = getLogger(["kopf", "api", "vault"]);

/**
 * How many rejected credentials are remembered per login handler: a handler that returns one of
 * them again is ignored, so that a stale token cannot make the operator log in forever.
 */
export const REMEMBERED_INVALIDATIONS = 3;

/** The message when the login handlers give nothing valid any more: what happened and what to do. */
export const RAN_OUT_MESSAGE = "Ran out of valid credentials. The API server has rejected (HTTP 401) all the " +
  "credentials, and the login handlers have given no new ones. Check the kubeconfig or the service account, " +
  "or add a login handler (kopf.on.login) that returns valid credentials.";

/** Credentials to put into the vault, as one login handler gave them. */
export interface VaultEntry {
  /** The credentials. */
  readonly credentials: Credentials;
  /** Of the valid entries, the highest priority is used (a random one among equals). */
  readonly priority: number;
  /** When the entry stops being valid, if it does. */
  readonly expiration?: Date;
  /** A text that identifies the same credentials when a login handler returns them again. */
  readonly fingerprint: string;
}

/** An entry in the vault, as requests get it. */
export interface VaultItem extends VaultEntry {
  /** The login handler's id it came from. */
  readonly key: string;
  /**
   * Fixed credentials (given to the operator directly) are never dropped: a 401 only refreshes
   * them (`credentials.invalidate()`), and nobody logs in again.
   */
  readonly fixed: boolean;
}

/** Options of a {@linkcode Vault}. */
export interface VaultOptions {
  /**
   * Logs in again (runs the login handlers and populates the vault) when nothing valid is left.
   * Without it, an empty vault fails the requests at once.
   */
  reauthenticate?: () => Promise<void>;
  /** The wall clock in milliseconds, for expirations (for tests); `Date.now` by default. */
  now?: () => number;
  /** A random number in [0, 1), to pick among equals (for tests); `Math.random` by default. */
  random?: () => number;
}

/**
 * Holds the credentials of an operator and hands out the best valid ones.
 *
 * @example A request loop
 * ```ts ignore
 * const item = await vault.acquire(signal);
 * const response = await send(item.credentials);
 * if (response.status === 401) vault.invalidate(item); // and retry: the next acquire gets others
 * ```
 */
export class Vault {
  readonly #items = new Map<string, VaultItem>();
  readonly #rejected = new Map<string, string[]>();
  readonly #dropListeners = new Set<(credentials: Credentials) => void>();
  readonly #reauthenticate: (() => Promise<void>) | undefined;
  readonly #now: () => number;
  readonly #random: () => number;
  #relogin: Promise<void> | undefined;

  /** Makes an empty vault; see {@linkcode VaultOptions}. */
  constructor(options: VaultOptions = {}) {
    this.#reauthenticate = options.reauthenticate;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
  }

  /**
   * A vault with one fixed entry, for credentials given directly: it is never dropped, and a
   * 401 only makes the credentials refresh themselves.
   *
   * @param credentials The credentials.
   * @returns The vault.
   */
  static fixed(credentials: Credentials): Vault {
    const vault = new Vault();
    vault.#items.set("credentials", {
      key: "credentials",
      credentials,
      priority: 0,
      fingerprint: "",
      fixed: true,
    });
    return vault;
  }

  /** How many valid (unexpired) entries there are. */
  get size(): number {
    return this.#valid().length;
  }

  /**
   * Puts the login results in, one entry per login handler, replacing that handler's previous
   * entry. Entries that were rejected before (the last {@linkcode REMEMBERED_INVALIDATIONS} per
   * handler) or have expired already are left out, with a warning.
   *
   * @param entries The results by login handler id.
   * @returns How many entries were taken.
   */
  populate(entries: ReadonlyMap<string, VaultEntry>): number {
    let taken = 0;
    for (const [key, entry] of entries) {
      if (this.#rejected.get(key)?.includes(entry.fingerprint)) {
        logger.warn(
          "Login handler '{key}' has returned credentials that the API server has rejected before; they are ignored.",
          { key },
        );
        continue;
      }
      if (entry.expiration && entry.expiration.getTime() <= this.#now()) {
        logger.warn("Login handler '{key}' has returned credentials that expired at {expiration}; they are ignored.", {
          key,
          expiration: entry.expiration.toISOString(),
        });
        continue;
      }
      const previous = this.#items.get(key);
      this.#items.set(key, { ...entry, key, fixed: false });
      if (previous && previous.credentials !== entry.credentials) this.#dropped(previous);
      taken++;
    }
    return taken;
  }

  /**
   * The best valid entry now, without waiting or logging in (the highest priority; among
   * equals, a random one), or `undefined` if there is none.
   */
  peek(): VaultItem | undefined {
    // Asked for by every request: one entry that has not expired (the usual case) is the answer
    // without arrays or the walk over all entries.
    if (this.#items.size === 1) {
      const only: VaultItem = this.#items.values().next().value!;
      if (only.fixed || !only.expiration || only.expiration.getTime() > this.#now()) return only;
    }
    const valid = this.#valid();
    if (valid.length <= 1) return valid[0];
    const top = Math.max(...valid.map((item) => item.priority));
    const best = valid.filter((item) => item.priority === top);
    return best[Math.min(best.length - 1, Math.floor(this.#random() * best.length))];
  }

  /**
   * The best valid entry; when there is none, waits while the login handlers run again (one
   * re-login for all waiting requests).
   *
   * @param signal Stops waiting.
   * @returns The entry; rejects with a {@linkcode LoginError} if logging in again gave nothing valid.
   */
  async acquire(signal?: AbortSignal): Promise<VaultItem> {
    for (;;) {
      signal?.throwIfAborted();
      const item = this.peek();
      if (item) return item;
      if (!this.#reauthenticate) throw new LoginError(RAN_OUT_MESSAGE);
      this.#relogin ??= this.#login().finally(() => this.#relogin = undefined);
      await abortable(this.#relogin, signal);
    }
  }

  /**
   * The API server has rejected these credentials (HTTP 401): drops them and remembers them as
   * rejected for their login handler (a fixed entry is kept and asked to refresh itself).
   * Harmless when they were dropped already (many requests fail with the same credentials).
   *
   * @param item What {@linkcode Vault.acquire} gave for the rejected request.
   */
  invalidate(item: VaultItem): void {
    item.credentials.invalidate();
    if (item.fixed || this.#items.get(item.key) !== item) return;
    this.#items.delete(item.key);
    const rejected = this.#rejected.get(item.key) ?? [];
    rejected.push(item.fingerprint);
    this.#rejected.set(item.key, rejected.slice(-REMEMBERED_INVALIDATIONS));
    logger.warn(
      "The API server has rejected the credentials from '{key}' (HTTP 401); {left} other valid credentials are left.",
      { key: item.key, left: this.size },
    );
    this.#dropped(item);
  }

  /**
   * Calls the listener with credentials that leave the vault (rejected, expired, replaced), so
   * that their connections can be closed.
   *
   * @param listener Called once per credentials that leave.
   * @returns A function that removes the listener.
   */
  onDropped(listener: (credentials: Credentials) => void): () => void {
    this.#dropListeners.add(listener);
    return () => this.#dropListeners.delete(listener);
  }

  /** Whether these credentials are in the vault now (valid or not yet noticed as expired). */
  holds(credentials: Credentials): boolean {
    for (const item of this.#items.values()) if (item.credentials === credentials) return true;
    return false;
  }

  /** The entries that have not expired; expired ones are dropped on the way. */
  #valid(): VaultItem[] {
    const now = this.#now();
    const valid: VaultItem[] = [];
    for (const [key, item] of this.#items) {
      if (!item.fixed && item.expiration && item.expiration.getTime() <= now) {
        logger.info("The credentials from '{key}' have expired.", { key });
        this.#items.delete(key);
        this.#dropped(item);
      } else {
        valid.push(item);
      }
    }
    return valid;
  }

  async #login(): Promise<void> {
    try {
      await this.#reauthenticate!();
    } catch (error) {
      throw new LoginError(RAN_OUT_MESSAGE, { cause: error });
    }
    if (!this.size) throw new LoginError(RAN_OUT_MESSAGE);
  }

  #dropped(item: VaultItem): void {
    if (this.holds(item.credentials)) return;
    for (const listener of this.#dropListeners) listener(item.credentials);
  }
}

/** Waits for a promise unless the signal aborts first (then rejects with its reason). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
