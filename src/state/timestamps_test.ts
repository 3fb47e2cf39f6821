// Timestamps as Kopf writes and rewrites them.
//
// The expected strings were produced with Kopf 1.44.6 (kopf._core.actions.progression):
//   format_iso8601(datetime(2024, 1, 2, 3, 4, 5, 123000, tzinfo=timezone.utc)) → '2024-01-02T03:04:05.123000+00:00'
//   format_iso8601(parse_iso8601(TEXT)) for each TEXT of NORMALIZED (iso8601 2.1.0, default_timezone=None);
//   parse_iso8601() raises ParseError for each of the bad texts.

import assert from "node:assert/strict";
import { formatTimestamp, normalizeTimestamp, parseTimestamp } from "./timestamps.ts";

const NORMALIZED: [string, string][] = [
  ["2020-02-14T16:58:25.396364", "2020-02-14T16:58:25.396364"],
  ["2020-02-14T16:58:25.396364+00:00", "2020-02-14T16:58:25.396364+00:00"],
  ["2020-02-14T16:58:25Z", "2020-02-14T16:58:25.000000+00:00"],
  ["2020-02-14T16:58:25.1Z", "2020-02-14T16:58:25.100000+00:00"],
  ["2020-02-14T16:58:25.1234567+02:00", "2020-02-14T16:58:25.123456+02:00"],
  ["2020-02-14 16:58:25.396364-05:30", "2020-02-14T16:58:25.396364-05:30"],
  ["2020-02-14T16:58Z", "2020-02-14T16:58:00.000000+00:00"],
  ["2020-02-14", "2020-02-14T00:00:00.000000"],
  ["20200214T165825Z", "2020-02-14T16:58:25.000000+00:00"],
  ["2020-02-14T16:58:25,5Z", "2020-02-14T16:58:25.500000+00:00"],
  ["2020-02-14T16:58:25+00:99", "2020-02-14T16:58:25.000000+01:39"],
  ["2020", "2020-01-01T00:00:00.000000"],
  ["2020-2-3T01", "2020-02-03T01:00:00.000000"],
  ["0050-01-01T00:00:00Z", "0050-01-01T00:00:00.000000+00:00"],
];

Deno.test("timestamps: formatted with microseconds and +00:00", () => {
  assert.equal(formatTimestamp(new Date("2024-01-02T03:04:05.123Z")), "2024-01-02T03:04:05.123000+00:00");
  assert.equal(formatTimestamp(new Date("0001-01-01T00:00:00Z")), "0001-01-01T00:00:00.000000+00:00");
  assert.equal(formatTimestamp(new Date(Date.UTC(10000, 0, 1, 2, 3, 4, 5))), "10000-01-01T02:03:04.005000+00:00");
  assert.throws(() => formatTimestamp(new Date(Number.NaN)), RangeError);
});

Deno.test("timestamps: stored text is rewritten as Kopf rewrites it", () => {
  for (const [text, expected] of NORMALIZED) assert.equal(normalizeTimestamp(text), expected, text);
  for (const bad of ["", "yesterday", "2020-13-01", "2021-02-29", "2020-02-14T24:00:00", "2020-02-14T16:58:25+24:00"]) {
    assert.throws(() => normalizeTimestamp(bad), RangeError, bad);
  }
});

Deno.test("timestamps: parsed to dates, offsets applied, naive ones taken as UTC", () => {
  assert.equal(parseTimestamp("2020-02-14T16:58:25.396364+00:00").toISOString(), "2020-02-14T16:58:25.396Z");
  assert.equal(parseTimestamp("2020-02-14T16:58:25.396364").toISOString(), "2020-02-14T16:58:25.396Z");
  assert.equal(parseTimestamp("2020-02-14 16:58:25-05:30").toISOString(), "2020-02-14T22:28:25.000Z");
  assert.equal(parseTimestamp("0050-01-01T00:00:00Z").getUTCFullYear(), 50);
  const now = new Date();
  assert.equal(parseTimestamp(formatTimestamp(now)).getTime(), now.getTime());
});

Deno.test("formatTimestamp: every moment of the years 1-9999 as the ISO form has it, the first and last included", () => {
  const first = Date.parse("0001-01-01T00:00:00.000Z");
  const last = Date.parse("9999-12-31T23:59:59.999Z");
  const moments = [first, last, 0, -1, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, -62_104_060_800_001];
  // A pseudo-random walk over the whole range, leap days and the ends of months included.
  let seed = 7;
  for (let i = 0; i < 20_000; i++) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    moments.push(first + Math.floor((seed / 2_147_483_648) * (last - first)));
  }
  for (let day = Date.parse("2000-02-27T00:00:00Z"); day < Date.parse("2000-03-02T00:00:00Z"); day += 3_600_000) {
    moments.push(day, day - 1);
  }
  // Runs within one second, across its ends and back (the second's text is worked out once per run).
  const run = Date.parse("2026-12-06T05:13:14.000Z");
  moments.push(run, run + 1, run + 500, run + 999, run + 1000, run + 999, run - 1, run, first, first + 1);
  for (const moment of moments) {
    const date = new Date(moment);
    assert.equal(formatTimestamp(date), `${date.toISOString().slice(0, 23)}000+00:00`, String(moment));
  }
});
