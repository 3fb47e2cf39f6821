import assert from "node:assert/strict";
import {
  acquiredLeaseSpec,
  formatMicroTime,
  leaseVerdict,
  parseMicroTime,
  releasedLeaseSpec,
  renewalAge,
  renewedLeaseSpec,
  sameLeaseRecord,
} from "./lease.ts";

Deno.test("MicroTime: six fractional digits in UTC, and back", () => {
  const date = new Date("2024-05-01T12:00:00.123Z");
  assert.equal(formatMicroTime(date), "2024-05-01T12:00:00.123000Z");
  assert.equal(formatMicroTime(new Date("2024-05-01T12:00:00Z")), "2024-05-01T12:00:00.000000Z");
  assert.equal(parseMicroTime(formatMicroTime(date))?.getTime(), date.getTime());
  assert.equal(parseMicroTime("2024-05-01T12:00:00.123456Z")?.toISOString(), "2024-05-01T12:00:00.123Z");
  assert.equal(parseMicroTime("2024-05-01T12:00:00Z")?.toISOString(), "2024-05-01T12:00:00.000Z");
  assert.equal(parseMicroTime("2024-05-01T14:00:00.5+02:00")?.toISOString(), "2024-05-01T12:00:00.500Z");
  assert.equal(parseMicroTime("yesterday"), null);
  assert.equal(parseMicroTime(""), null);
  assert.equal(parseMicroTime(null), null);
  assert.equal(parseMicroTime(undefined), null);
});

Deno.test("verdict: a missing Lease is created, a released one is taken", () => {
  assert.deepEqual(leaseVerdict(null, "me", 0, 0, 15), { take: true, reason: "missing" });
  assert.deepEqual(leaseVerdict({ holderIdentity: "" }, "me", 0, 0, 15), { take: true, reason: "released" });
  assert.deepEqual(leaseVerdict({}, "me", 0, 0, 15), { take: true, reason: "released" });
  assert.deepEqual(leaseVerdict({ holderIdentity: null }, "me", 0, 0, 15), { take: true, reason: "released" });
});

Deno.test("renewalAge: how long ago renewTime was, never negative, at most the trust", () => {
  const now = Date.parse("2026-01-01T00:00:10.000Z");
  // Renewed 0.2 s before it was seen: the observation is back-dated by that.
  assert.equal(renewalAge({ renewTime: "2026-01-01T00:00:09.800000Z" }, now, 2_500), 200);
  // A renewTime far in the past (a clock behind) moves it by the trust only.
  assert.equal(renewalAge({ renewTime: "2025-12-31T23:00:00.000000Z" }, now, 2_500), 2_500);
  // A renewTime after the observation (a clock ahead) never delays it; none, or unreadable: 0.
  assert.equal(renewalAge({ renewTime: "2026-01-01T00:05:00.000000Z" }, now, 2_500), 0);
  assert.equal(renewalAge({}, now, 2_500), 0);
  assert.equal(renewalAge({ renewTime: "soon" }, now, 2_500), 0);
  assert.equal(renewalAge(null, now, 2_500), 0);
});

Deno.test("verdict: another holder's Lease expires by the observer's clock, not by renewTime", () => {
  // renewTime far in the past says nothing: only the local observation counts.
  const spec = { holderIdentity: "other", leaseDurationSeconds: 15, renewTime: "2000-01-01T00:00:00.000000Z" };
  assert.deepEqual(leaseVerdict(spec, "me", 1_000, 1_000, 10), { take: false, holder: "other", expiresAt: 16_000 });
  assert.deepEqual(leaseVerdict(spec, "me", 1_000, 15_999, 10), { take: false, holder: "other", expiresAt: 16_000 });
  assert.deepEqual(leaseVerdict(spec, "me", 1_000, 16_000, 10), { take: true, reason: "expired" });
  // Without a duration in the record, the observer's own setting applies.
  assert.deepEqual(leaseVerdict({ holderIdentity: "other" }, "me", 0, 9_000, 10), {
    take: false,
    holder: "other",
    expiresAt: 10_000,
  });
  assert.deepEqual(leaseVerdict({ holderIdentity: "other" }, "me", 0, 10_000, 10), { take: true, reason: "expired" });
});

Deno.test("verdict: one's own Lease may be taken back at once", () => {
  const spec = { holderIdentity: "me", leaseDurationSeconds: 15 };
  assert.deepEqual(leaseVerdict(spec, "me", 1_000, 1_000, 15), { take: true, reason: "own" });
});

Deno.test("acquiring: a new Lease starts with 0 transitions; taking over counts one more", () => {
  const now = new Date("2024-05-01T12:00:00.000Z");
  const time = "2024-05-01T12:00:00.000000Z";
  assert.deepEqual(acquiredLeaseSpec(null, "me", 15, now), {
    holderIdentity: "me",
    leaseDurationSeconds: 15,
    acquireTime: time,
    renewTime: time,
    leaseTransitions: 0,
  });
  const theirs = {
    holderIdentity: "other",
    leaseDurationSeconds: 10,
    acquireTime: "2024-01-01T00:00:00.000000Z",
    renewTime: "2024-01-01T00:00:05.000000Z",
    leaseTransitions: 4,
  };
  assert.deepEqual(acquiredLeaseSpec(theirs, "me", 2.5, now), {
    holderIdentity: "me",
    leaseDurationSeconds: 3,
    acquireTime: time,
    renewTime: time,
    leaseTransitions: 5,
  });
  // After a release: a transition too.
  assert.equal(acquiredLeaseSpec({ holderIdentity: "", leaseTransitions: 5 }, "me", 15, now).leaseTransitions, 6);
  // Taking back one's own: acquireTime and transitions stay.
  const mine = { ...theirs, holderIdentity: "me" };
  const again = acquiredLeaseSpec(mine, "me", 15, now);
  assert.equal(again.acquireTime, "2024-01-01T00:00:00.000000Z");
  assert.equal(again.leaseTransitions, 4);
  assert.equal(again.renewTime, time);
});

Deno.test("renewing changes only renewTime and the duration; releasing clears the holder", () => {
  const now = new Date("2024-05-01T12:00:01.000Z");
  const held = {
    holderIdentity: "me",
    leaseDurationSeconds: 15,
    acquireTime: "2024-05-01T12:00:00.000000Z",
    renewTime: "2024-05-01T12:00:00.000000Z",
    leaseTransitions: 2,
  };
  assert.deepEqual(renewedLeaseSpec(held, 15, now), { ...held, renewTime: "2024-05-01T12:00:01.000000Z" });
  assert.deepEqual(releasedLeaseSpec(held, now), {
    holderIdentity: "",
    leaseDurationSeconds: 1,
    acquireTime: "2024-05-01T12:00:01.000000Z",
    renewTime: "2024-05-01T12:00:01.000000Z",
    leaseTransitions: 2,
  });
  assert.ok(sameLeaseRecord(held, { ...held }));
  assert.ok(!sameLeaseRecord(held, renewedLeaseSpec(held, 15, now)));
  assert.ok(!sameLeaseRecord(held, null));
  assert.ok(sameLeaseRecord(null, undefined));
  assert.ok(sameLeaseRecord({ holderIdentity: "" }, {}));
});
