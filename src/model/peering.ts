/**
 * Peering records as plain data: who a peer is (its identity), what it announces on the peering
 * object (`status.<identity>` = `{priority, lifetime, lastseen}`, the format Python Kopf reads and
 * writes), and when a record expires. Nothing here talks to the API; see
 * `src/engines/peering_records.ts` for reading and writing the records.
 *
 * @module
 */

/** The lifetime (seconds) assumed for a record that does not say (as Kopf assumes). */
export const DEFAULT_LIFETIME = 60;

/** The priority of `--dev` operators and freezes: higher than any ordinary operator. */
export const DEV_PRIORITY = 666;

/** The priority of `kopf freeze` unless told otherwise: above operators of the default priority 0. */
export const FREEZE_PRIORITY = 100;

/** What one peer announces in `status.<identity>` of a peering object, as written. */
export interface PeerRecord {
  /** The peer's priority: a live peer with a higher one pauses the others. */
  priority: number;
  /** Seconds after `lastseen` that the record stays valid. */
  lifetime: number;
  /** When the peer last wrote its record: ISO 8601 in UTC, e.g. `2024-05-01T12:00:00.000000+00:00`. */
  lastseen: string;
}

/** A record as read from a peering object, with its identity and its moments as dates. */
export interface Peer {
  /** The key of the record in `status`. */
  identity: string;
  /** The peer's priority (0 when the record does not say). */
  priority: number;
  /** Seconds the record stays valid after `lastseen` ({@linkcode DEFAULT_LIFETIME} when absent). */
  lifetime: number;
  /** When the peer last wrote its record. */
  lastseen: Date;
  /** `lastseen + lifetime`: from then on the peer is dead, and its record may be removed. */
  deadline: Date;
}

/** Where the random characters of an operator's identity come from. */
const RANDOM_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** The parts of an identity that come from the machine; given explicitly in tests. */
export interface IdentitySource {
  /** The environment variable `POD_ID`: when set (even in a pod's own freeze), it is the identity. */
  podId?: string;
  /** The user name. */
  user?: string;
  /** The host name. */
  host?: string;
  /** The current moment (for operators' identities). */
  now?: Date;
  /** A random generator in [0, 1) (for operators' identities). */
  random?: () => number;
}

/**
 * The identity of a running operator: `POD_ID` when set, else `<user>@<host>/<YYYYmmddHHMMSS>/<3
 * random chars>` (UTC), so that two operators started by one user on one host differ.
 *
 * @example
 * ```ts
 * import { operatorIdentity } from "./peering.ts";
 * operatorIdentity({ podId: "", user: "ann", host: "box", now: new Date("2024-05-01T12:00:00Z"), random: () => 0 });
 * // "ann@box/20240501120000/aaa"
 * ```
 *
 * @param source Overrides of what is otherwise read from the environment and the clock.
 */
export function operatorIdentity(source: IdentitySource = {}): string {
  const podId = source.podId ?? readEnv("POD_ID");
  if (podId) return podId;
  const now = source.now ?? new Date();
  const random = source.random ?? Math.random;
  const stamp = now.toISOString().slice(0, 19).replace(/[-T:]/g, "");
  let suffix = "";
  for (let i = 0; i < 3; i++) suffix += RANDOM_ALPHABET[Math.floor(random() * RANDOM_ALPHABET.length)];
  return `${userAndHost(source)}/${stamp}/${suffix}`;
}

/**
 * The identity of `kopf freeze` and `kopf resume` without `--id`: `POD_ID` when set, else
 * `<user>@<host>`, so that a resume from the same place removes the freeze it made.
 *
 * @param source Overrides of what is otherwise read from the environment.
 */
export function commandIdentity(source: IdentitySource = {}): string {
  const podId = source.podId ?? readEnv("POD_ID");
  if (podId) return podId;
  return userAndHost(source);
}

function userAndHost(source: IdentitySource): string {
  return `${source.user ?? currentUser()}@${source.host ?? currentHost()}`;
}

function currentUser(): string {
  for (const name of ["USER", "LOGNAME", "USERNAME"]) {
    const value = readEnv(name);
    if (value) return value;
  }
  return "unknown";
}

function currentHost(): string {
  try {
    return Deno.hostname() || "localhost";
  } catch {
    return "localhost";
  }
}

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // No --allow-env: as if unset.
  }
}

/**
 * Formats a moment as Kopf writes `lastseen`: ISO 8601 in UTC with microseconds and `+00:00`,
 * which Python's `datetime.fromisoformat` (every version) and `iso8601` both read.
 *
 * @param moment The moment to format.
 */
export function formatLastseen(moment: Date): string {
  return moment.toISOString().replace(/\.(\d{3})Z$/, ".$1000+00:00");
}

/**
 * Parses a `lastseen` value: ISO 8601 with or without fractional seconds, with `Z`, an offset,
 * or none (then UTC, as Kopf writes naive UTC times). Returns `undefined` for anything else.
 *
 * @param value The value from the record.
 */
export function parseLastseen(value: unknown): Date | undefined {
  if (typeof value !== "string") return undefined;
  const match = value.trim().match(
    /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i,
  );
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second = "0", fraction = "", zone = "Z"] = match;
  const millis = Number((fraction + "000").slice(0, 3));
  let time = Date.UTC(+year, +month - 1, +day, +hour, +minute, +second, millis);
  if (Number.isNaN(time)) return undefined;
  if (zone.toUpperCase() !== "Z") {
    const sign = zone[0] === "-" ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const offset = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || "0");
    time -= sign * offset * 60_000;
  }
  return new Date(time);
}

/**
 * Builds the record that a peer writes about itself now.
 *
 * @param options The priority, the lifetime in seconds, and the moment (now by default).
 */
export function buildPeerRecord(options: { priority: number; lifetime: number; now?: Date }): PeerRecord {
  return {
    priority: options.priority,
    lifetime: options.lifetime,
    lastseen: formatLastseen(options.now ?? new Date()),
  };
}

/**
 * Reads one record of a peering object's `status`. Missing fields take Kopf's defaults (priority
 * 0, lifetime 60 s, lastseen now); values that are not a record at all give `undefined`.
 *
 * @param identity The key of the record.
 * @param value The value under that key.
 * @param now The moment used for a missing or unreadable `lastseen`.
 */
export function parsePeer(identity: string, value: unknown, now: Date = new Date()): Peer | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const priority = toInteger(record.priority) ?? 0;
  const lifetime = toInteger(record.lifetime) ?? DEFAULT_LIFETIME;
  const lastseen = parseLastseen(record.lastseen) ?? now;
  return { identity, priority, lifetime, lastseen, deadline: new Date(lastseen.getTime() + lifetime * 1000) };
}

/**
 * Reads all records of a peering object's `status` (the object itself or its `status`); entries
 * that are not records are left out.
 *
 * @param status The `status` of a peering object, or `undefined` when it has none.
 * @param now The moment used for a missing `lastseen`.
 */
export function parsePeers(status: unknown, now: Date = new Date()): Peer[] {
  if (status === null || typeof status !== "object" || Array.isArray(status)) return [];
  const peers: Peer[] = [];
  for (const [identity, value] of Object.entries(status as Record<string, unknown>)) {
    const peer = parsePeer(identity, value, now);
    if (peer) peers.push(peer);
  }
  return peers;
}

/**
 * Whether a peer's record has expired (`lastseen + lifetime` has passed): it is dead, and its
 * record may be removed.
 *
 * @param peer The peer.
 * @param now The moment to compare with; now by default.
 */
export function isExpired(peer: Peer, now: Date = new Date()): boolean {
  return peer.deadline.getTime() <= now.getTime();
}

function toInteger(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === "string" && /^\s*[+-]?\d+\s*$/.test(value)) return Number(value);
  return undefined;
}
