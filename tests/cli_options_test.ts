/**
 * The options of `kopf run`, `kopf freeze` and `kopf resume` as parsed, without a cluster: the
 * command line, `KOPF_<COMMAND>_<OPTION>` defaults (the command line wins), and usage errors.
 */

import assert from "node:assert/strict";
import { resolveSpecifier } from "../cli/loading.ts";
import { type Environment, envName } from "../cli/options.ts";
import { FREEZE_OPTIONS, parseFreezeOptions, parseResumeOptions, RESUME_OPTIONS } from "../cli/peering_options.ts";
import { parseRunOptions, RUN_OPTIONS } from "../cli/run_options.ts";
import { FREEZE_HELP, RESUME_HELP, RUN_HELP, UsageError } from "../cli/usage.ts";

const NO_ENV: Environment = () => undefined;
const env = (values: Record<string, string>): Environment => (name) => values[name];

function usageError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof UsageError, String(error));
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes("\n"), "one line");
    return true;
  });
}

Deno.test("environment variables are named KOPF_<COMMAND>_<OPTION>", () => {
  assert.equal(envName("run", "log-format"), "KOPF_RUN_LOG_FORMAT");
  assert.equal(envName("freeze", "lifetime"), "KOPF_FREEZE_LIFETIME");
  assert.equal(envName("resume", "all-namespaces"), "KOPF_RESUME_ALL_NAMESPACES");
});

Deno.test("kopf run takes several files and -m specifiers, in order", () => {
  const options = parseRunOptions(["-A", "a.ts", "b.ts", "-m", "npm:x", "--module", "./c.ts"], NO_ENV);
  assert.deepEqual(options.files, ["a.ts", "b.ts"]);
  assert.deepEqual(options.modules, ["npm:x", "./c.ts"]);
});

Deno.test("a -m path is resolved against the working directory; URLs and bare names stay", () => {
  assert.equal(resolveSpecifier("./x/c.ts"), new URL("x/c.ts", `file://${Deno.cwd()}/`).href);
  assert.equal(resolveSpecifier("../c.ts"), new URL("../c.ts", `file://${Deno.cwd()}/`).href);
  assert.equal(resolveSpecifier("/abs/c.ts"), "file:///abs/c.ts");
  for (const kept of ["file:///abs/c.ts", "npm:left-pad", "jsr:@std/x", "@kopf/kopf", "https://x/y.ts"]) {
    assert.equal(resolveSpecifier(kept), kept);
  }
});

Deno.test("-n with -A is a usage error", () => {
  usageError(() => parseRunOptions(["-n", "a", "-A", "x.ts"], NO_ENV), /--namespace or --all-namespaces/);
});

Deno.test("priority is an integer; --dev is 666; -P gives the peering name", () => {
  assert.equal(parseRunOptions(["-p", "10", "x.ts"], NO_ENV).priority, 10);
  assert.equal(parseRunOptions(["--priority=-5", "x.ts"], NO_ENV).priority, -5);
  assert.equal(parseRunOptions(["--dev", "x.ts"], NO_ENV).priority, 666);
  assert.equal(parseRunOptions(["-P", "custom", "x.ts"], NO_ENV).peering, "custom");
  assert.equal(parseRunOptions(["x.ts"], NO_ENV).priority, undefined);
  usageError(() => parseRunOptions(["-p", "high", "x.ts"], NO_ENV), /--priority must be an integer, not "high"/);
  usageError(() => parseRunOptions(["-p", "1.5", "x.ts"], NO_ENV), /integer/);
  usageError(() => parseRunOptions(["-p", "1", "--dev", "x.ts"], NO_ENV), /--priority or --dev/);
  usageError(() => parseRunOptions(["-P", "Not_Valid", "x.ts"], NO_ENV), /--peering must be the name/);
});

Deno.test("--leader-elect and its options: durations in seconds, names checked, nothing without --leader-elect", () => {
  assert.equal(parseRunOptions(["x.ts"], NO_ENV).leaderElection, undefined);
  assert.deepEqual(parseRunOptions(["--leader-elect", "x.ts"], NO_ENV).leaderElection, {
    leaseName: undefined,
    leaseNamespace: undefined,
    leaseDuration: undefined,
    renewDeadline: undefined,
    retryPeriod: undefined,
  });
  const given = parseRunOptions([
    "--leader-elect",
    "--leader-elect-resource-name=mine",
    "--leader-elect-resource-namespace=ops",
    "--leader-elect-lease-duration=4",
    "--leader-elect-renew-deadline=3",
    "--leader-elect-retry-period=0.5",
    "x.ts",
  ], NO_ENV);
  assert.deepEqual(given.leaderElection, {
    leaseName: "mine",
    leaseNamespace: "ops",
    leaseDuration: 4,
    renewDeadline: 3,
    retryPeriod: 0.5,
  });
  const fromEnv = parseRunOptions(
    ["x.ts"],
    env({ KOPF_RUN_LEADER_ELECT: "true", KOPF_RUN_LEADER_ELECT_RESOURCE_NAME: "env" }),
  );
  assert.equal(fromEnv.leaderElection?.leaseName, "env");
  usageError(() => parseRunOptions(["--leader-elect-retry-period=1", "x.ts"], NO_ENV), /needs --leader-elect/);
  usageError(
    () => parseRunOptions(["--leader-elect", "--leader-elect-lease-duration=-1", "x.ts"], NO_ENV),
    /positive number/,
  );
});

Deno.test("--shard-group and its options; not with --leader-elect; nothing without --shard-group", () => {
  assert.equal(parseRunOptions(["x.ts"], NO_ENV).sharding, undefined);
  assert.deepEqual(parseRunOptions(["--shard-group=ops", "x.ts"], NO_ENV).sharding, {
    group: "ops",
    namespace: undefined,
    identity: undefined,
  });
  const full = parseRunOptions(
    ["--shard-group", "ops", "--shard-namespace", "kube-ops", "--shard-id", "Pod_1", "x.ts"],
    NO_ENV,
  );
  assert.deepEqual(full.sharding, { group: "ops", namespace: "kube-ops", identity: "Pod_1" });
  const fromEnv = parseRunOptions(["x.ts"], env({ KOPF_RUN_SHARD_GROUP: "env-group" }));
  assert.equal(fromEnv.sharding?.group, "env-group");
  usageError(() => parseRunOptions(["--shard-id=a", "x.ts"], NO_ENV), /--shard-id needs --shard-group NAME/);
  usageError(() => parseRunOptions(["--shard-group=Bad_Name", "x.ts"], NO_ENV), /--shard-group must be a name/);
  usageError(
    () => parseRunOptions(["--shard-group=ops", "--leader-elect", "x.ts"], NO_ENV),
    /--shard-group and --leader-elect do not go together: choose one/,
  );
});

Deno.test("KOPF_RUN_<OPTION> gives defaults for every option; the command line wins", () => {
  const defaults = env({
    KOPF_RUN_STANDALONE: "true",
    KOPF_RUN_LIVENESS: "http://0.0.0.0:8080/healthz",
    KOPF_RUN_LOG_FORMAT: "json",
    KOPF_RUN_CONTEXT: "staging",
    KOPF_RUN_PRIORITY: "7",
    KOPF_RUN_PEERING: "custom",
    KOPF_RUN_VERBOSE: "yes",
    KOPF_RUN_LOG_PREFIX: "false",
    KOPF_RUN_MODULE: "npm:a npm:b",
  });
  const options = parseRunOptions(["x.ts"], defaults);
  assert.equal(options.standalone, true);
  assert.equal(options.liveness, "http://0.0.0.0:8080/healthz");
  assert.equal(options.format, "json");
  assert.equal(options.context, "staging");
  assert.equal(options.priority, 7);
  assert.equal(options.peering, "custom");
  assert.equal(options.level, "debug");
  assert.equal(options.prefix, false);
  assert.deepEqual(options.modules, ["npm:a", "npm:b"]);

  const given = parseRunOptions(
    ["--log-format", "plain", "--context", "prod", "-p", "1", "-P", "other", "--log-prefix", "-m", "npm:c", "x.ts"],
    defaults,
  );
  assert.equal(given.format, "plain");
  assert.equal(given.context, "prod");
  assert.equal(given.priority, 1);
  assert.equal(given.peering, "other");
  assert.equal(given.prefix, true);
  assert.deepEqual(given.modules, ["npm:c"]);
  assert.equal(parseRunOptions(["--dev", "x.ts"], defaults).priority, 666);
  assert.equal(parseRunOptions(["x.ts"], env({ KOPF_RUN_DEV: "1" })).priority, 666);
});

Deno.test("KOPF_RUN_NAMESPACE adds namespaces to -n; -A on the command line ignores it", () => {
  assert.deepEqual(parseRunOptions(["x.ts"], env({ KOPF_RUN_NAMESPACE: "a b" })).namespaces, ["a", "b"]);
  const patterns = parseRunOptions(["x.ts"], env({ KOPF_RUN_NAMESPACE: " app-*,!app-test\tother " })).namespaces;
  assert.deepEqual(patterns, ["app-*,!app-test", "other"]);
  const both = parseRunOptions(["-n", "c", "x.ts"], env({ KOPF_RUN_NAMESPACE: "a" }));
  assert.deepEqual(both.namespaces, ["c", "a"]);
  assert.equal(both.clusterwide, false);
  const all = parseRunOptions(["-A", "x.ts"], env({ KOPF_RUN_NAMESPACE: "a" }));
  assert.deepEqual([all.clusterwide, all.namespaces], [true, []]);
  const allFromEnv = parseRunOptions(["x.ts"], env({ KOPF_RUN_ALL_NAMESPACES: "true" }));
  assert.equal(allFromEnv.clusterwide, true);
  const nWins = parseRunOptions(["-n", "c", "x.ts"], env({ KOPF_RUN_ALL_NAMESPACES: "true" }));
  assert.deepEqual([nWins.clusterwide, nWins.namespaces], [false, ["c"]]);
  usageError(
    () => parseRunOptions(["x.ts"], env({ KOPF_RUN_ALL_NAMESPACES: "true", KOPF_RUN_NAMESPACE: "a" })),
    /KOPF_RUN_NAMESPACE or KOPF_RUN_ALL_NAMESPACES/,
  );
});

Deno.test("bad environment values are usage errors naming the variable", () => {
  usageError(() => parseRunOptions(["x.ts"], env({ KOPF_RUN_STANDALONE: "maybe" })), /^KOPF_RUN_STANDALONE must be/);
  usageError(() => parseRunOptions(["x.ts"], env({ KOPF_RUN_LOG_FORMAT: "xml" })), /^KOPF_RUN_LOG_FORMAT must be/);
  usageError(() => parseRunOptions(["x.ts"], env({ KOPF_RUN_PRIORITY: "hi" })), /^KOPF_RUN_PRIORITY must be/);
  // Empty variables count as unset.
  assert.equal(parseRunOptions(["x.ts"], env({ KOPF_RUN_STANDALONE: "", KOPF_RUN_LOG_FORMAT: "" })).format, "full");
});

Deno.test("--help skips validation and the environment", () => {
  assert.equal(parseRunOptions(["--help"], env({ KOPF_RUN_STANDALONE: "maybe" })).help, true);
  assert.equal(parseFreezeOptions(["-h"], NO_ENV).help, true);
  assert.equal(parseResumeOptions(["--help"], NO_ENV).help, true);
});

Deno.test("kopf freeze: --peering and --lifetime are required; priority 100 by default, --dev 666", () => {
  usageError(() => parseFreezeOptions(["--peering=default"], NO_ENV), /Missing option '-t' \/ '--lifetime'/);
  usageError(() => parseFreezeOptions(["-A", "--lifetime=60"], NO_ENV), /Missing option '-P' \/ '--peering'/);
  usageError(() => parseFreezeOptions(["-A", "-P", "default", "-t", "soon"], NO_ENV), /--lifetime must be an integer/);
  usageError(() => parseFreezeOptions(["-A", "-P", "default", "-t", "0"], NO_ENV), /--lifetime must be at least 1/);
  usageError(() => parseFreezeOptions(["-A", "-n", "a", "-P", "d", "-t", "1"], NO_ENV), /not both/);
  usageError(() => parseFreezeOptions(["-A", "-P", "d", "-t", "1", "extra"], NO_ENV), /unexpected extra argument/);

  const options = parseFreezeOptions(["-A", "--peering=default", "--lifetime=60"], NO_ENV);
  assert.deepEqual(
    [options.peering, options.clusterwide, options.lifetime, options.priority, options.id],
    ["default", true, 60, 100, undefined],
  );
  const full = parseFreezeOptions(
    ["-n", "a", "-n", "b", "-i", "me", "--dev", "-P", "p", "-t", "5", "-m", "maintenance", "-q"],
    NO_ENV,
  );
  assert.deepEqual(
    [full.namespaces, full.id, full.priority, full.message, full.level],
    [["a", "b"], "me", 666, "maintenance", "warning"],
  );
  assert.equal(parseFreezeOptions(["-A", "-P", "p", "-t", "5", "-p", "7"], NO_ENV).priority, 7);
});

Deno.test("kopf freeze and resume take KOPF_FREEZE_*/KOPF_RESUME_* defaults", () => {
  const freeze = parseFreezeOptions(
    ["-A"],
    env({ KOPF_FREEZE_PEERING: "default", KOPF_FREEZE_LIFETIME: "30", KOPF_FREEZE_ID: "ops" }),
  );
  assert.deepEqual([freeze.peering, freeze.lifetime, freeze.id], ["default", 30, "ops"]);
  const resume = parseResumeOptions([], env({ KOPF_RESUME_PEERING: "default", KOPF_RESUME_NAMESPACE: "a" }));
  assert.deepEqual([resume.peering, resume.namespaces, resume.clusterwide], ["default", ["a"], false]);
  const wins = parseResumeOptions(["-P", "other", "-A"], env({ KOPF_RESUME_PEERING: "default" }));
  assert.equal(wins.peering, "other");
  usageError(() => parseFreezeOptions(["-A", "-P", "d"], env({ KOPF_FREEZE_LIFETIME: "x" })), /KOPF_FREEZE_LIFETIME/);
});

Deno.test("kopf resume: --peering is required; without -n and -A it is cluster-wide", () => {
  usageError(() => parseResumeOptions(["-A"], NO_ENV), /Missing option '-P' \/ '--peering'/);
  usageError(() => parseResumeOptions(["-A", "-P", "d", "-t", "5"], NO_ENV), /Unknown option '-t'/);
  const options = parseResumeOptions(["-P", "default"], NO_ENV);
  assert.deepEqual([options.clusterwide, options.scopeDefaulted], [true, true]);
});

Deno.test("each command's --help names every option and its KOPF_<COMMAND>_<OPTION> variable", () => {
  const commands = [["run", RUN_OPTIONS, RUN_HELP], ["freeze", FREEZE_OPTIONS, FREEZE_HELP], [
    "resume",
    RESUME_OPTIONS,
    RESUME_HELP,
  ]] as const;
  for (const [command, specs, help] of commands) {
    for (const spec of specs) {
      assert.ok(help.includes(`--${spec.long}`), `${command}: --${spec.long}`);
      if (spec.short) assert.ok(help.includes(`-${spec.short}, --${spec.long}`), `${command}: -${spec.short}`);
      if (spec.long === "no-log-prefix") continue; // KOPF_<COMMAND>_LOG_PREFIX=false
      assert.ok(help.includes(envName(command, spec.long)), `${command}: ${envName(command, spec.long)}`);
    }
  }
});
