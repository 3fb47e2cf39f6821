/**
 * Runs a program to its end with some text on its stdin, and collects what it printed: for the
 * command-line tools that tests and tools drive (kubectl, promtool).
 *
 * @module
 */

/** How a program ended and what it printed. */
export interface CommandOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `command args…` (`input`, if any, on its stdin; `env` added to the environment) and waits for its end. */
export async function commandOutput(
  command: string,
  args: string[],
  options: { input?: string; env?: Record<string, string> } = {},
): Promise<CommandOutput> {
  const { input, env } = options;
  const child = new Deno.Command(command, {
    args,
    env,
    stdin: input === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (input !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}
