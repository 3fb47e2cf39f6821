/**
 * Usage errors and help texts of the `kopf` command.
 *
 * @module
 */

/** A command line the CLI cannot accept; it exits with code 2 after printing the reason and the usage. */
export class UsageError extends Error {
  /** @param message the one-line reason. @param usage the usage line of the command concerned. */
  constructor(message: string, readonly usage: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The usage line of `kopf`. */
export const MAIN_USAGE = "Usage: kopf [--version] [--help] COMMAND [ARGS]...";

/** The help of `kopf`. */
export const MAIN_HELP = `${MAIN_USAGE}

A Kubernetes operator framework: runs handlers written with @kopf/kopf.

Commands:
  run     Run an operator from handler files or modules.

Options:
  --version   Print the version and exit.
  -h, --help  Show this message and exit.
`;

/** The usage line of `kopf run`. */
export const RUN_USAGE = "Usage: kopf run [OPTIONS] [FILES]...";

/** The help of `kopf run`. */
export const RUN_HELP = `${RUN_USAGE}

Import the handler files (and -m modules), then run the operator until SIGINT or SIGTERM.
The first signal stops it gracefully (cleanup handlers included; exit code 0); a second one
while stopping exits at once (code 130 or 143).

Options:
  -m, --module SPECIFIER   Import a module by specifier (repeatable), e.g. a jsr: or npm: module.
  -n, --namespace NS       Serve this namespace (repeatable).
  -A, --all-namespaces     Serve all namespaces (cluster-wide).
      --standalone         Run without peering.
      --context NAME       Use this kubeconfig context instead of the current one.
  -L, --liveness URL       Serve the liveness endpoint at this http:// URL, e.g.
                           http://0.0.0.0:8080/healthz: the probe handlers' results as JSON;
                           HTTP 500 when a probe fails or a watch stream keeps failing.
  -v, --verbose            Log debug messages.
  -d, --debug              Log debug messages (the same as --verbose).
  -q, --quiet              Log only warnings and errors.
      --log-format FORMAT  plain, full (the default) or json.
      --log-prefix / --no-log-prefix
                           Prefix object-related messages with [namespace/name] (default:
                           on, off for json).
  -h, --help               Show this message and exit.
`;
