/**
 * Running `on.event` handlers: every matching handler for every event, errors logged and ignored;
 * no progress is kept, but results go to `status[id]` and the patch is applied (except after a
 * deletion, when there is nothing left to patch).
 *
 * @module
 */

import type { KubernetesObject } from "../model/body.ts";
import type { Indices } from "../model/index_store.ts";
import type { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import type { ObjectLogger } from "../logging/object_logger.ts";
import { type EventContext, type Memo, resourceContext } from "./context.ts";
import { runWithObject } from "./current_object.ts";
import { storeResult } from "./results.ts";
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
  extra: { patch: Patch; logger: ObjectLogger; memo: Memo; resource: Resource; indices: Indices },
): Promise<void> {
  for (const handler of handlers) {
    const base = resourceContext(event.object, { ...extra, param: handler.options.param });
    const context: EventContext = { ...base, event: { type: event.type, object: base.body }, type: event.type };
    try {
      const result = await runWithObject(event.object, () => handler.fn(context));
      if (result !== undefined && result !== null && event.type !== "DELETED") {
        storeResult(extra.patch, handler.id, result);
      }
    } catch (error) {
      extra.logger.exception(`Handler '${handler.id}' failed with an exception. Will ignore.`, error);
    }
  }
}
