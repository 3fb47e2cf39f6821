/**
 * Timestamps of progress records as Kopf writes them: ISO 8601 with microseconds and an explicit
 * offset (`2024-01-02T03:04:05.123456+00:00`), and the ISO 8601 forms it reads (its `iso8601`
 * parser's grammar). JavaScript dates keep milliseconds only, so stored timestamps that are carried
 * over unchanged should be kept as text and passed through {@linkcode normalizeTimestamp}, which
 * rewrites them exactly as Kopf would (microseconds and offsets preserved).
 *
 * @module
 */

/** A timestamp split into its parts, as read from text. */
interface TimestampParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  microsecond: number;
  /** Minutes east of UTC, or `null` for a timestamp without an offset (a "naive" one). */
  offset: number | null;
}

// year, then optionally month and day (dashed or compact), then optionally [ T]hh[:mm[:ss[.,frac]]] and a zone.
const GRAMMAR = new RegExp(
  "^(\\d{4})" +
    "(?:(?:-(\\d{1,2})|(\\d{2})(?!$))" +
    "(?:(?:-(\\d{1,2})|(\\d{2}))" +
    "(?:[ T](\\d{2})(?::?(\\d{2}))?(?::?(\\d{1,2})(?:[.,](\\d+))?)?" +
    "(Z|([-+])(\\d{2}):?(\\d{2})?)?)?)?)?\\n?$",
);

function parseParts(text: string): TimestampParts {
  const match = GRAMMAR.exec(text);
  if (!match) throw new RangeError(`Unable to parse the timestamp ${JSON.stringify(text)}.`);
  const [, year, monthDash, month, dayDash, day, hour, minute, second, fraction, zone, sign, zoneHour, zoneMinute] =
    match;
  const number = (value: string | undefined, fallback: number): number => value === undefined ? fallback : +value;
  const parts: TimestampParts = {
    year: +year,
    month: number(month ?? monthDash, 1),
    day: number(day ?? dayDash, 1),
    hour: number(hour, 0),
    minute: number(minute, 0),
    second: number(second, 0),
    microsecond: fraction === undefined ? 0 : Number(fraction.slice(0, 6).padEnd(6, "0")),
    offset: zone === undefined
      ? null
      : zone === "Z"
      ? 0
      : (sign === "-" ? -1 : 1) * (+zoneHour * 60 + +(zoneMinute ?? 0)),
  };
  const date = new Date(Date.UTC(2000, parts.month - 1, parts.day));
  const valid = parts.month >= 1 && parts.month <= 12 && date.getUTCDate() === parts.day && parts.hour < 24 &&
    parts.minute < 60 && parts.second < 60 && (parts.offset === null || Math.abs(parts.offset) < 24 * 60);
  if (!valid || parts.year < 1) throw new RangeError(`The timestamp ${JSON.stringify(text)} is out of range.`);
  if (parts.month === 2 && parts.day === 29 && !isLeapYear(parts.year)) {
    throw new RangeError(`The timestamp ${JSON.stringify(text)} is out of range.`);
  }
  return parts;
}

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}

function formatParts(parts: TimestampParts): string {
  const date = `${pad(parts.year, 4)}-${pad(parts.month, 2)}-${pad(parts.day, 2)}`;
  const time = `${pad(parts.hour, 2)}:${pad(parts.minute, 2)}:${pad(parts.second, 2)}.${pad(parts.microsecond, 6)}`;
  if (parts.offset === null) return `${date}T${time}`;
  const sign = parts.offset < 0 ? "-" : "+";
  const offset = Math.abs(parts.offset);
  return `${date}T${time}${sign}${pad(Math.floor(offset / 60), 2)}:${pad(offset % 60, 2)}`;
}

/**
 * A moment as Kopf writes it: UTC, microseconds, `+00:00`.
 *
 * @example
 * ```ts
 * formatTimestamp(new Date("2024-01-02T03:04:05.123Z")); // "2024-01-02T03:04:05.123000+00:00"
 * ```
 */
export function formatTimestamp(date: Date): string {
  const time = date.getTime();
  if (Number.isNaN(time)) throw new RangeError("Cannot format an invalid date as a timestamp.");
  // Every handled object gets one or two: worked out in arithmetic, where `toISOString()` and the
  // `getUTC*()` getters are native calls (with a C-library `snprintf` inside).
  if (time >= FIRST_OF_YEAR_1 && time < FIRST_OF_YEAR_10000) return formatTime(time);
  const year = date.getUTCFullYear();
  return formatParts({
    year,
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
    microsecond: date.getUTCMilliseconds() * 1000,
    offset: 0,
  });
}

/** 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z in milliseconds since the epoch: the years of four digits. */
const FIRST_OF_YEAR_1 = -62_135_596_800_000;
const FIRST_OF_YEAR_10000 = 253_402_300_800_000;

const DAY_MS = 86_400_000;

/** A moment of the years 1-9999 as Kopf writes it, from its milliseconds. */
function formatTime(time: number): string {
  // Records are written in runs within the same second: its date and time are worked out once.
  const second = Math.floor(time / 1000);
  if (second !== lastSecond.second) {
    lastSecond.second = second;
    lastSecond.text = formatSecond(second * 1000);
  }
  return `${lastSecond.text}.${pad(time - second * 1000, 3)}000+00:00`;
}

/** The last second formatted (`2024-01-02T03:04:05`), and which it was (seconds since the epoch). */
const lastSecond = { second: NaN, text: "" };

/**
 * A whole second of the years 1-9999 as `YYYY-MM-DDTHH:MM:SS`, from its milliseconds: the civil date
 * of its day counted in 400-year eras of the proleptic Gregorian calendar, each era's years starting
 * in March (so that the leap day is the last of a year).
 */
function formatSecond(time: number): string {
  const days = Math.floor(time / DAY_MS);
  let rest = time - days * DAY_MS;
  const hour = Math.floor(rest / 3_600_000);
  rest -= hour * 3_600_000;
  const minute = Math.floor(rest / 60_000);
  rest -= minute * 60_000;
  const second = Math.floor(rest / 1000);
  // Days since 0000-03-01, the start of an era.
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${pad(year, 4)}-${two(month)}-${two(day)}T${two(hour)}:${two(minute)}:${two(second)}`;
}

function two(value: number): string {
  return value < 10 ? `0${value}` : `${value}`;
}

/**
 * Reads an ISO 8601 timestamp as Kopf does (`2024-01-02T03:04:05.123456+00:00`, `...Z`, `2024-01-02`,
 * `20240102T030405Z`, ...); timestamps without an offset (written by old Kopf versions) are taken as
 * UTC. Microseconds beyond the milliseconds of a `Date` are dropped. Throws a `RangeError` for text
 * that is not such a timestamp.
 */
export function parseTimestamp(text: string): Date {
  const parts = parseParts(text);
  const local = new Date(0); // setters, not Date.UTC(): years below 100 must not become 19xx
  local.setUTCFullYear(parts.year, parts.month - 1, parts.day);
  local.setUTCHours(parts.hour, parts.minute, parts.second, Math.floor(parts.microsecond / 1000));
  return new Date(local.getTime() - (parts.offset ?? 0) * 60_000);
}

/**
 * Rewrites a stored timestamp as Kopf does when it stores a record again: microseconds always, the
 * offset kept as it was (`Z` becomes `+00:00`), no offset kept absent.
 *
 * @example
 * ```ts
 * normalizeTimestamp("2020-02-14T16:58:25Z"); // "2020-02-14T16:58:25.000000+00:00"
 * normalizeTimestamp("2020-02-14T16:58:25.396364"); // "2020-02-14T16:58:25.396364"
 * ```
 */
export function normalizeTimestamp(text: string): string {
  return formatParts(parseParts(text));
}
