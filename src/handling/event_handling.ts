/**
 * Running `on.event` handlers: every matching handler for every event, errors logged and ignored,
 * nothing stored on the object but what handlers put into the patch themselves.
 *
 * @module
 */

import type { KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import type { ObjectLogger } from "../logging/object_logger.ts";
import { type Memo, resourceContext } from "./context.ts";
import type { EventHandler } from "./handlers.ts";

/** One watch event as event handlers see it. */
export interface RawEvent {
  /** `ADDED`, `MODIFIED`, `DELETED`, or `null` for listed objects. */
  type: string | null;
  /** The object. */
  object: KubernetesObject;
}

/** Calls each event handler once for the event, one after another. */
export async function runEventHandlers(
  handlers: readonly EventHandler[],
  event: RawEvent,
  extra: { patch: Patch; logger: ObjectLogger; memo: Memo; resource: Resource },
): Promise<void> {
  for (const handler of handlers) {
    const context = {
      ...resourceContext(event.object, { ...extra, param: handler.options.param }),
      event,
      type: event.type,
    };
    try {
      await handler.fn(context);
    } catch (error) {
      extra.logger.exception(`Handler '${handler.id}' failed with an exception. Will ignore.`, error);
    }
  }
}
