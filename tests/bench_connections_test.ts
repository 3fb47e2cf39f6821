/** bench/process_stats.ts's count of a process's connections to a port (bench/namespaces.ts's "connections" row). */

import assert from "node:assert/strict";
import { connectionsTo } from "../bench/process_stats.ts";

Deno.test("the connections a process has open to a port are counted, the accepted ends and other ports not", async () => {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  using other = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  assert.equal(await connectionsTo(Deno.pid, port), 0);
  const clients = [
    await Deno.connect({ hostname: "127.0.0.1", port }),
    await Deno.connect({ hostname: "127.0.0.1", port }),
    await Deno.connect({ hostname: "127.0.0.1", port: other.addr.port }),
  ];
  const accepted = [await listener.accept(), await listener.accept(), await other.accept()];
  // Ours to the port: two; the accepted ends are this process's too, but their remote port is the clients'.
  assert.equal(await connectionsTo(Deno.pid, port), 2);
  for (const connection of [...clients, ...accepted]) connection.close();
  assert.equal(await connectionsTo(Deno.pid, port), 0);
});
