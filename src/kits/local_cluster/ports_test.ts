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

Deno.test("freePorts never hands out a port that fetch refuses (10080)", () => {
  const start = Number(Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").trim().split(/\s+/)[0]);
  const below = start > 11000 ? start : 32768;
  // The first pick lands on 10080, the next ones elsewhere.
  const picks = [80.5 / (below - 10000), 0.5, 0.25, 0.75];
  const random = Math.random;
  Math.random = () => picks.shift() ?? random();
  try {
    const [port] = freePorts(1);
    assert.notEqual(port, 10080);
    assert.equal(picks.length, 2, "the blocked pick was skipped and the next one taken");
  } finally {
    Math.random = random;
  }
});
