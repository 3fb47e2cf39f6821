/**
 * `TCP_NODELAY` on this process's sockets, as kube-apiserver (Go) sets it on its own. `Deno.serve`
 * leaves Nagle's algorithm on and has no option for it: a watch event or a response written while an
 * earlier one is not yet acknowledged waited for the client's delayed acknowledgement (up to 40 ms),
 * which made bench/scripted_api.ts answer Deno's clients later than kube-apiserver does (~25 ms from
 * an object's event to its write at 800 objects per second, 1.5 ms with this). Set through libc's
 * `setsockopt` (`Deno.dlopen`), on every socket now and every 100 ms after (new connections); a socket
 * that is not TCP refuses, and is left alone.
 *
 * @module
 */

const IPPROTO_TCP = 6;
const TCP_NODELAY = 1;
const SYMBOLS = { setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" } } as const;

/**
 * Starts setting `TCP_NODELAY` on the process's sockets (Linux with glibc; elsewhere it says so once
 * and does nothing). Disposing stops it.
 */
export function noDelayOnSockets(): Disposable {
  let libc: Deno.DynamicLibrary<typeof SYMBOLS>;
  try {
    libc = Deno.dlopen("libc.so.6", SYMBOLS);
  } catch (error) {
    console.error(`Nagle's algorithm stays on for this process's sockets: ${error}`);
    return { [Symbol.dispose]: () => {} };
  }
  const on = new Int32Array([1]);
  const seen = new Set<string>();
  const sweep = () => {
    for (const entry of Deno.readDirSync("/proc/self/fd")) {
      let target: string;
      try {
        target = Deno.readLinkSync(`/proc/self/fd/${entry.name}`);
      } catch {
        continue; // closed meanwhile
      }
      if (!target.startsWith("socket:") || seen.has(target)) continue;
      seen.add(target);
      libc.symbols.setsockopt(Number(entry.name), IPPROTO_TCP, TCP_NODELAY, on, on.byteLength);
    }
  };
  sweep();
  const timer = setInterval(sweep, 100);
  Deno.unrefTimer(timer);
  return {
    [Symbol.dispose]: () => {
      clearInterval(timer);
      libc.close();
    },
  };
}
