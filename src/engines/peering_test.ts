import assert from "node:assert/strict";
import { FakeApi, json } from "../../tests/support/fake_api.ts";
import { eventually } from "../../tests/support/eventually.ts";
import { configureLogging } from "../logging/configure.ts";
import type { KubernetesObject } from "../model/body.ts";
import { formatLastseen } from "../model/peering.ts";
import { PeeringSettings } from "../settings/peering.ts";
import { WatchingSettings } from "../settings/watching.ts";
import { Peering } from "./peering.ts";
import { keepAliveInterval } from "./peering_target.ts";

/** A fake API server with the peering CRDs (or not) and one ClusterKopfPeering (or none), scriptable. */
class PeeringFake implements AsyncDisposable {
  crd = true;
  object: KubernetesObject | undefined;
  /** The bodies of the PATCH requests applied, in order. */
  readonly patches: { status: Record<string, unknown> }[] = [];
  /** While set, keep-alives (PATCHes with a record of "me") wait for it before they are applied. */
  hold: Promise<void> | undefined;
  /** How many keep-alives have arrived, applied or held. */
  keepAlivesReceived = 0;
  readonly api: FakeApi;
  readonly #streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  #version = 1;

  constructor(object?: Record<string, unknown>) {
    if (object) this.object = this.#make(object);
    this.api = new FakeApi(async (request, url) => {
      const path = url.pathname;
      if (path === "/apis") {
        const groups = this.crd
          ? [{
            name: "kopf.dev",
            versions: [{ groupVersion: "kopf.dev/v1", version: "v1" }],
            preferredVersion: { groupVersion: "kopf.dev/v1", version: "v1" },
          }]
          : [];
        return json({ kind: "APIGroupList", apiVersion: "v1", groups });
      }
      if (path === "/apis/kopf.dev/v1" && this.crd) {
        return json({
          kind: "APIResourceList",
          groupVersion: "kopf.dev/v1",
          resources: [
            {
              name: "clusterkopfpeerings",
              singularName: "clusterkopfpeering",
              namespaced: false,
              kind: "ClusterKopfPeering",
              verbs: ["get", "list", "watch", "patch"],
            },
            {
              name: "kopfpeerings",
              singularName: "kopfpeering",
              namespaced: true,
              kind: "KopfPeering",
              verbs: ["get", "list", "watch", "patch"],
            },
          ],
        });
      }
      if (path === "/apis/kopf.dev/v1/clusterkopfpeerings" && this.crd) {
        if (url.searchParams.get("watch") === "true") return this.#watch();
        return json({
          kind: "ClusterKopfPeeringList",
          apiVersion: "kopf.dev/v1",
          metadata: { resourceVersion: String(this.#version) },
          items: this.object ? [this.object] : [],
        });
      }
      if (path === "/apis/kopf.dev/v1/clusterkopfpeerings/default" && request.method === "PATCH" && this.crd) {
        const body = await request.json();
        if (body.status?.me) {
          this.keepAlivesReceived++;
          await this.hold;
        }
        this.patches.push(body);
        if (!this.object) {
          return json({ kind: "Status", code: 404, reason: "NotFound", details: { name: "default" } }, 404);
        }
        return json(this.object);
      }
      return json({ kind: "Status", code: 404, reason: "NotFound", details: {} }, 404);
    });
  }

  /** Replaces the object and tells the watchers. */
  update(object: Record<string, unknown> | undefined): void {
    const type = object === undefined ? "DELETED" : this.object ? "MODIFIED" : "ADDED";
    const previous = this.object;
    this.object = object === undefined ? undefined : this.#make(object);
    const line = JSON.stringify({ type, object: this.object ?? previous }) + "\n";
    for (const stream of this.#streams) stream.enqueue(new TextEncoder().encode(line));
  }

  #make(fields: Record<string, unknown>): KubernetesObject {
    return {
      apiVersion: "kopf.dev/v1",
      kind: "ClusterKopfPeering",
      ...fields,
      metadata: { name: "default", uid: "uid-1", resourceVersion: String(++this.#version) },
    } as KubernetesObject;
  }

  #watch(): Response {
    const streams = this.#streams;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
        streams.add(c);
      },
      cancel() {
        streams.delete(controller);
      },
    });
    return new Response(body, { headers: { "Content-Type": "application/json" } });
  }

  /** Whether a watch stream is open (so that update() reaches it). */
  get watched(): boolean {
    return this.#streams.size > 0;
  }

  get peeringRequests(): URL[] {
    return this.api.requests.filter((url) => url.pathname.includes("peerings"));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const stream of this.#streams) {
      try {
        stream.close();
      } catch {
        // Already closed.
      }
    }
    await this.api[Symbol.asyncDispose]();
  }
}

/** The fake's watches are plain (no initial events), so its streams list by pages. */
const PLAIN_WATCHES = Object.assign(new WatchingSettings(), { streamingLists: false });

/** Starts a peering as "me" on the fake, cluster-wide unless the settings say otherwise. */
function startPeering(
  fake: PeeringFake,
  peering: PeeringSettings,
  onChange: (paused: boolean) => void = () => {},
): Promise<Peering> {
  return Peering.start({
    client: fake.api.client,
    settings: peering,
    watching: PLAIN_WATCHES,
    identity: "me",
    namespaces: [],
    onChange,
  });
}

function settings(fields: Partial<PeeringSettings> = {}): PeeringSettings {
  return Object.assign(new PeeringSettings(), { clusterwide: true }, fields);
}

async function logs(): Promise<string[]> {
  const lines: string[] = [];
  await configureLogging({ format: "plain", level: "debug", write: (line) => lines.push(line) });
  return lines;
}

function recent(seconds = 0): string {
  return formatLastseen(new Date(Date.now() - seconds * 1000));
}

Deno.test("keepAliveInterval: lifetime minus 5…10 s, never below 1 s", () => {
  for (const random of [0, 0.1, 0.5, 0.9, 0.9999]) {
    const interval = keepAliveInterval(60, () => random);
    assert.ok(interval >= 50 && interval <= 55, `${interval}`);
    assert.ok(Number.isInteger(interval));
    const short = keepAliveInterval(7, () => random);
    assert.ok(short >= 1 && short <= 2, `${short}`);
    assert.equal(keepAliveInterval(3, () => random), 1);
    assert.equal(keepAliveInterval(0, () => random), 1);
  }
  assert.equal(keepAliveInterval(60, () => 0), 55);
  assert.equal(keepAliveInterval(60, () => 0.9999), 50);
});

Deno.test("peering: without the CRD and not mandatory → inactive, not paused, no peering requests", async () => {
  const lines = await logs();
  await using fake = new PeeringFake();
  fake.crd = false;
  const changes: boolean[] = [];
  const peering = await startPeering(fake, settings(), (paused) => changes.push(paused));
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(peering.paused, false);
  assert.equal(peering.active, false);
  await peering.close();
  assert.deepEqual(fake.peeringRequests, []);
  assert.deepEqual(changes, []);
  assert.ok(lines.some((line) => line.includes("does not exist: peering is off")), lines.join("\n"));
});

Deno.test("peering: without the CRD and mandatory → paused with a hint; resumes once crdChanged() finds it", async () => {
  const lines = await logs();
  await using fake = new PeeringFake({ status: {} });
  fake.crd = false;
  const changes: boolean[] = [];
  const peering = await startPeering(fake, settings({ mandatory: true }), (paused) => changes.push(paused));
  assert.equal(peering.paused, true);
  assert.equal(peering.active, true);
  assert.ok(lines.some((line) => line.includes("kubectl apply -f peering.yaml")), lines.join("\n"));
  fake.crd = true;
  peering.crdChanged();
  await eventually("the resumption", () => changes.length > 0);
  assert.deepEqual(changes, [false]);
  assert.equal(peering.paused, false);
  await eventually("a keep-alive", () => fake.patches.length > 0);
  await peering.close();
  // The last patch removes own record.
  assert.deepEqual(fake.patches.at(-1), { status: { me: null } });
});

Deno.test("peering: a live higher-priority peer pauses at start; its removal resumes", async () => {
  const lines = await logs();
  await using fake = new PeeringFake({
    status: { boss: { priority: 10, lifetime: 60, lastseen: recent() } },
  });
  const changes: boolean[] = [];
  const peering = await startPeering(fake, settings(), (paused) => changes.push(paused));
  assert.equal(peering.paused, true);
  assert.ok(lines.includes("Pausing operations in favour of [boss]."), lines.join("\n"));
  await eventually("a watch stream", () => fake.watched);
  fake.update({ status: { me: { priority: 0, lifetime: 60, lastseen: recent() } } });
  await eventually("the resumption", () => changes.length > 0);
  assert.deepEqual(changes, [false]);
  assert.ok(lines.some((line) => line.startsWith("Resuming operations after the pause.")), lines.join("\n"));
  await peering.close();
});

Deno.test("peering: same priority → both warnings (lower priorities not named) and paused", async () => {
  const lines = await logs();
  await using fake = new PeeringFake({
    status: {
      twin: { priority: 5, lifetime: 60, lastseen: recent() },
      minion: { priority: 1, lifetime: 60, lastseen: recent() },
    },
  });
  const peering = await startPeering(fake, settings({ priority: 5 }));
  assert.equal(peering.paused, true);
  assert.ok(lines.includes("Possibly conflicting operators with the same priority: [twin]."), lines.join("\n"));
  assert.ok(lines.includes("Pausing all operators, including self: [twin]."), lines.join("\n"));
  await peering.close();
});

Deno.test("peering: dead peers are removed in one patch, and do not pause", async () => {
  await logs();
  await using fake = new PeeringFake({
    status: {
      gone1: { priority: 100, lifetime: 10, lastseen: recent(60) },
      gone2: { priority: 0, lifetime: 10, lastseen: recent(60) },
    },
  });
  const peering = await startPeering(fake, settings());
  assert.equal(peering.paused, false);
  await eventually("the removal", () => fake.patches.some((patch) => "gone1" in patch.status));
  const removal = fake.patches.find((patch) => "gone1" in patch.status);
  assert.deepEqual(removal, { status: { gone1: null, gone2: null } });
  await peering.close();
});

Deno.test("peering: a blocking peer that expires is re-evaluated at its deadline without an event", async () => {
  await logs();
  await using fake = new PeeringFake({
    status: { boss: { priority: 10, lifetime: 2, lastseen: recent() } },
  });
  const changes: boolean[] = [];
  const peering = await startPeering(fake, settings(), (paused) => changes.push(paused));
  assert.equal(peering.paused, true);
  await eventually("the resumption", () => changes.length > 0);
  assert.deepEqual(changes, [false]);
  await eventually("the removal", () => fake.patches.some((patch) => patch.status.boss === null));
  await peering.close();
});

Deno.test("peering: keep-alives are logged unless stealthy; 'not found' is logged even then", async () => {
  const lines = await logs();
  {
    await using fake = new PeeringFake({ status: {} });
    const peering = await startPeering(fake, settings({ lifetime: 7 }));
    await eventually("two keep-alives", () => fake.patches.filter((patch) => patch.status.me).length >= 2);
    await peering.close();
    assert.ok(lines.includes("Keep-alive in 'default' cluster-wide: ok."), lines.join("\n"));
    const record = fake.patches[0].status.me as Record<string, unknown>;
    assert.equal(record.priority, 0);
    assert.equal(record.lifetime, 7);
    assert.equal(typeof record.lastseen, "string");
  }
  lines.length = 0;
  {
    await using fake = new PeeringFake({ status: {} });
    const peering = await startPeering(fake, settings({ lifetime: 7, stealth: true }));
    await eventually("two keep-alives", () => fake.patches.filter((patch) => patch.status.me).length >= 2);
    await peering.close();
    assert.ok(!lines.some((line) => line.includes("Keep-alive in")), lines.join("\n"));
  }
  lines.length = 0;
  {
    await using fake = new PeeringFake();
    const peering = await startPeering(fake, settings({ lifetime: 7, stealth: true }));
    assert.equal(peering.paused, false);
    await eventually("a keep-alive", () => fake.patches.length > 0);
    await eventually("its log line", () => lines.includes("Keep-alive in 'default' cluster-wide: not found."));
    await peering.close();
  }
  await configureLogging({ level: "warning", write: () => {} });
});

Deno.test("peering: a stop with a keep-alive in flight waits for it, then removes the record: the removal is the last write", async () => {
  await using fake = new PeeringFake({ status: {} });
  let release!: () => void;
  fake.hold = new Promise((resolve) => release = resolve);
  // The operator's stop aborts this signal before it closes the peering.
  const stop = new AbortController();
  const peering = await Peering.start({
    client: fake.api.client,
    settings: settings(),
    watching: PLAIN_WATCHES,
    identity: "me",
    namespaces: [],
    onChange: () => {},
    signal: stop.signal,
  });
  await eventually("the first keep-alive to arrive", () => fake.keepAlivesReceived === 1);
  stop.abort();
  const closing = peering.close();
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(fake.patches.length, 0, "nothing is written while the keep-alive is in flight");
  release();
  await closing;
  assert.deepEqual(
    fake.patches.map((patch) => patch.status.me === null ? "removal" : "keep-alive"),
    ["keep-alive", "removal"],
  );
});

Deno.test("peering: standalone → no requests at all, never paused", async () => {
  await using fake = new PeeringFake({ status: { boss: { priority: 10, lifetime: 60, lastseen: recent() } } });
  const peering = await startPeering(fake, settings({ standalone: true, mandatory: true }));
  assert.equal(peering.paused, false);
  assert.equal(peering.active, false);
  await peering.close();
  assert.deepEqual(fake.api.requests, []);
});
