/**
 * The logger given to activity handlers (startup, cleanup, probes): records under the category
 * `kopf.activities.<activity>`, about no object, so never posted as Kubernetes Events.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { LogTapeHandlerLogger } from "./handler_logger.ts";

/** A logger for one activity (`startup`, `cleanup`, `probe`); its records carry no object. */
export class ActivityLogger extends LogTapeHandlerLogger {
  /** @param activity the activity, the last part of the log category. */
  constructor(activity: string) {
    super(getLogger(["kopf", "activities", activity]));
  }
}
