/**
 * The live body of an object for daemons and timers: they run for a long time, so what they see
 * of the object must follow its latest state rather than the state they were started with.
 *
 * @module
 */

import type { KubernetesObject, ObjectMeta, Stored, StoredMetadata } from "../model/body.ts";

/** The views of an object that daemons' and timers' contexts carry. */
export interface LiveViews {
  readonly body: Readonly<Stored<KubernetesObject>>;
  readonly spec: Readonly<Record<string, unknown>>;
  readonly meta: Readonly<ObjectMeta & StoredMetadata>;
  readonly status: Readonly<Record<string, unknown>>;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/**
 * Holds the latest state of one object and gives read-only views that always show it. The states
 * are the API server's (listed or watched), so they have a name, a uid and the rest of {@linkcode StoredMetadata}.
 */
export class LiveBody {
  #current: Stored<KubernetesObject>;
  #views?: LiveViews;

  /** Starts with the object as first seen. */
  constructor(body: KubernetesObject) {
    this.#current = body as Stored<KubernetesObject>;
  }

  /** The latest state. */
  get current(): Stored<KubernetesObject> {
    return this.#current;
  }

  /** Takes a newer state of the object; every view shows it from now on. */
  replace(body: KubernetesObject): void {
    this.#current = body as Stored<KubernetesObject>;
  }

  /**
   * The views for contexts, made once: being live, the same views serve every call of every
   * daemon and timer of the object (a timer ticking every second allocates none).
   */
  get views(): LiveViews {
    return this.#views ??= {
      body: this.view(),
      spec: this.view((body) => body.spec as Record<string, unknown> | undefined),
      meta: this.view((body) => body.metadata),
      status: this.view((body) => body.status as Record<string, unknown> | undefined),
      labels: this.view((body) => body.metadata.labels),
      annotations: this.view((body) => body.metadata.annotations),
    };
  }

  /**
   * A read-only view of a part of the latest state (the whole body by default): reading a key
   * of the view reads it from the newest state, so a view kept (or destructured from a context)
   * since long ago still shows fresh values; writing to it throws.
   */
  view<T extends object>(
    part: (body: Stored<KubernetesObject>) => T | undefined = (body) => body as unknown as T,
  ): Readonly<T> {
    const source = (): object => part(this.#current) ?? {};
    return new Proxy({} as T, {
      get: (_, key) => Reflect.get(source(), key),
      has: (_, key) => Reflect.has(source(), key),
      ownKeys: () => Reflect.ownKeys(source()),
      getOwnPropertyDescriptor: (_, key) => {
        const descriptor = Reflect.getOwnPropertyDescriptor(source(), key);
        // A proxy may only report configurable properties that its empty target lacks.
        return descriptor ? { ...descriptor, configurable: true, writable: false } : undefined;
      },
      set: () => false,
      deleteProperty: () => false,
      defineProperty: () => false,
    });
  }
}
