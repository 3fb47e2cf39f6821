/**
 * Timers: a function called periodically for each object, for as long as the object exists and
 * matches the filters. `interval` is the period; `idle` delays the calls until the object has not
 * changed for that many seconds (and pauses them again whenever it changes).
 *
 * @module
 */

import * as kopf from "@kopf/kopf";

// Every 2 seconds, from the moment the object is seen.
kopf.timer("kopfexamples", { interval: 2 }, function everyFewSeconds({ spec, logger }) {
  logger.info(`Ping from a timer: field=${JSON.stringify(spec.field)}`);
});

// Every 2 seconds too, but only once the object has been left alone for 5 seconds: useful for
// checks that make no sense while a user is still editing the object.
kopf.timer("kopfexamples", { idle: 5, interval: 2 }, function whenIdle({ spec, logger }) {
  logger.info(`Ping from an idle timer: field=${JSON.stringify(spec.field)}`);
});
