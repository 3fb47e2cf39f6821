import assert from "node:assert/strict";
import { freePorts } from "./ports.ts";

Deno.test("freePorts gives distinct bindable ports below the kernel's ephemeral range", () => {
  const ports = freePorts(20);
  assert.equal(new Set(ports).size, 20);
  const start = Number(Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").trim().split(/\s+/)[0]);
  for (const port of ports) {
    assert.ok(port >= 10000 && port < start, `${port} lies outside the ephemeral range from ${start}`);
    Deno.listen({ hostname: "127.0.0.1", port }).close();
  }
});
