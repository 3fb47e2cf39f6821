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

  /** The command concerned (`run`, `freeze`, `resume`), or `undefined` for `kopf` itself. */
  get command(): string | undefined {
    return this.usage.match(/^Usage: kopf ([a-z]+)\b/)?.[1];
  }
}

/** The usage line of `kopf`. */
export const MAIN_USAGE = "Usage: kopf [--version] [--help] COMMAND [ARGS]...";

/** The help of `kopf`. */
export const MAIN_HELP = `${MAIN_USAGE}

A Kubernetes operator framework: runs handlers written with @kopf/kopf.

Commands:
  run       Run an operator from handler files or modules.
  freeze    Pause the operators of a peering (a peer record of a higher priority).
  resume    Resume the operators paused by freeze (remove that record).
  init      Make a new operator project (deno.json, handlers, a test, deploy/).
  build     Bundle the CLI and handler files into one JavaScript file.
  generate  Print manifests computed from the handlers (rbac, deployment), types from CRDs
            (types), or a CRD from types (crd).

Options:
  -V, --version  Print the version and exit.
  -h, --help     Show this message and exit.

Every option of run, freeze and resume also has an environment variable KOPF_<COMMAND>_<OPTION>,
e.g. KOPF_RUN_LOG_FORMAT=json; the command line wins. See 'kopf COMMAND --help'.
`;

const LOGGING_HELP = `  -v, --verbose            Log debug messages.
  -d, --debug              Log debug messages (the same as --verbose).
  -q, --quiet              Log only warnings and errors.
      --log-format FORMAT  plain, full (the default) or json (to stdout; the others to stderr).
      --log-prefix / --no-log-prefix
                           Prefix object-related messages with [namespace/name] (default:
                           on, off for json).`;

/** How environment variables work, for the help of a command: every variable, then the rules. */
function environmentHelp(command: string, options: string[]): string {
  const prefix = `KOPF_${command.toUpperCase()}_`;
  const names = options.map((option) => prefix + option.toUpperCase().replaceAll("-", "_"));
  const lines: string[] = [];
  let line = " ";
  for (const name of names) {
    if (line.length + name.length + 1 > 94) {
      lines.push(line);
      line = " ";
    }
    line += ` ${name}`;
  }
  lines.push(line);
  return `Environment (defaults of the options; the command line wins):
${lines.join("\n")}
  ${prefix}<OPTION> is the long option in upper case with dashes as underscores. Flags take
  true/false (also 1/0, yes/no, on/off); repeatable options take values separated by spaces.
  ${prefix}LOG_PREFIX=true|false stands for --log-prefix/--no-log-prefix.
  ${prefix}NAMESPACE adds to the namespaces of -n (as in Kopf); ${prefix}ALL_NAMESPACES=true
  is -A. -A on the command line ignores ${prefix}NAMESPACE; -n ignores ${prefix}ALL_NAMESPACES.`;
}

const LOGGING_ENV = ["verbose", "debug", "quiet", "log-format", "log-prefix"];

/** The usage line of `kopf run`. */
export const RUN_USAGE = "Usage: kopf run [OPTIONS] [FILES]...";

/** The help of `kopf run`. */
export const RUN_HELP = `${RUN_USAGE}

Import the handler files, then the -m modules (each in the order given), then run the
operator until SIGINT or SIGTERM. The first signal stops it gracefully (cleanup handlers
included; exit code 0); a second one while stopping exits at once (code 130 or 143).

Options:
  -m, --module SPECIFIER   Import a module (repeatable): a path (relative to the working
                           directory), a file:, npm: or jsr: URL, or a bare name of the
                           import map.
  -n, --namespace PATTERN  Serve the namespaces that match (repeatable): a name, or globs
                           such as app-*,!app-test.
  -A, --all-namespaces     Serve all namespaces (cluster-wide).
      --standalone         Run without peering.
  -p, --priority N         The operator's peering priority (an integer; default 0).
  -P, --peering NAME       The peering object to use; peering is mandatory then.
      --dev                Priority 666: a developer's operator pauses the deployed ones.
      --leader-elect       Replicas elect a leader with a Lease: only the leader handles
                           objects, the others stand by with their watch streams running.
      --leader-elect-resource-name NAME
                           The Lease's name (default: kopf). One per operator.
      --leader-elect-resource-namespace NS
                           The Lease's namespace (default: the pod's own, else default).
      --leader-elect-lease-duration SECONDS
                           How long a leader's claim lasts after a renewal (default 15).
      --leader-elect-renew-deadline SECONDS
                           How long a leader tries to renew before it stops leading (default 10).
      --leader-elect-retry-period SECONDS
                           Between renewals and between attempts (default 2).
      --shard-group NAME   Replicas with the same group split the objects between them, each
                           holding a Lease labelled with the group (not with --leader-elect).
      --shard-namespace NS The namespace of the group's Leases (default: the pod's own, else
                           default).
      --shard-id ID        This replica's identity in the group (default: $POD_NAME, else the
                           host name and the process id).
      --context NAME       Use this kubeconfig context instead of the current one.
  -L, --liveness URL       Serve the liveness endpoint at this http:// URL, e.g.
                           http://0.0.0.0:8080/healthz: the probe handlers' results as JSON;
                           HTTP 500 when a probe fails or a watch stream keeps failing.
      --metrics URL        Serve Prometheus metrics at this http:// URL, e.g.
                           http://0.0.0.0:9090/metrics (on the liveness server if the same port).
${LOGGING_HELP}
  -h, --help               Show this message and exit.

${
  environmentHelp("run", [
    "module",
    "namespace",
    "all-namespaces",
    "standalone",
    "priority",
    "peering",
    "dev",
    "leader-elect",
    "leader-elect-resource-name",
    "leader-elect-resource-namespace",
    "leader-elect-lease-duration",
    "leader-elect-renew-deadline",
    "leader-elect-retry-period",
    "shard-group",
    "shard-namespace",
    "shard-id",
    "context",
    "liveness",
    "metrics",
    ...LOGGING_ENV,
  ])
}
`;

/** The usage line of `kopf freeze`. */
export const FREEZE_USAGE = "Usage: kopf freeze [OPTIONS]";

/** The help of `kopf freeze`. */
export const FREEZE_HELP = `${FREEZE_USAGE}

Pause the operators of a peering: write a peer record status.<ID> = {priority, lifetime,
lastseen} on the peering object of the scope (ClusterKopfPeering NAME with -A, KopfPeering
NAME in each namespace with -n), then exit. Operators of a lower priority pause until the
record expires or 'kopf resume' removes it. The peering CRDs (peering.yaml) and the object
must exist.

Options:
  -P, --peering NAME       The peering object (required).
  -t, --lifetime SECONDS   How long the freeze lasts (required).
  -p, --priority N         The priority of the record (default 100).
      --dev                Priority 666.
  -i, --id ID              The identity of the record (default: $POD_ID, else <user>@<host>).
  -m, --message TEXT       A message for the log (not stored, as in Kopf).
  -n, --namespace PATTERN  The KopfPeering in each namespace that matches (repeatable): a
                           name, or globs such as app-*,!app-test (existing namespaces).
  -A, --all-namespaces     The ClusterKopfPeering (also without -n and -A, with a warning).
      --context NAME       Use this kubeconfig context instead of the current one.
${LOGGING_HELP}
  -h, --help               Show this message and exit.

${
  environmentHelp("freeze", [
    "peering",
    "lifetime",
    "priority",
    "dev",
    "id",
    "message",
    "namespace",
    "all-namespaces",
    "context",
    ...LOGGING_ENV,
  ])
}
`;

/** The usage line of `kopf resume`. */
export const RESUME_USAGE = "Usage: kopf resume [OPTIONS]";

/** The help of `kopf resume`. */
export const RESUME_HELP = `${RESUME_USAGE}

Resume the operators paused by 'kopf freeze': remove the peer record status.<ID> from the
peering object of the scope (as freeze wrote it), then exit.

Options:
  -P, --peering NAME       The peering object (required).
  -i, --id ID              The identity of the record (default: $POD_ID, else <user>@<host>).
  -n, --namespace PATTERN  The KopfPeering in each namespace that matches (repeatable): a
                           name, or globs such as app-*,!app-test (existing namespaces).
  -A, --all-namespaces     The ClusterKopfPeering (also without -n and -A, with a warning).
      --context NAME       Use this kubeconfig context instead of the current one.
${LOGGING_HELP}
  -h, --help               Show this message and exit.

${environmentHelp("resume", ["peering", "id", "namespace", "all-namespaces", "context", ...LOGGING_ENV])}
`;
