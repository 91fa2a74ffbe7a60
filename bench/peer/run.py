"""The peer harness: the same workloads through `baton agent`, `codex exec`
and Claude Code (`claude -p`), each against a local mock of its own wire:
mock_responses.py (OpenAI Responses: baton, codex) and mock_messages.py
(Anthropic Messages: claude, and `baton agent --provider anthropic` as
baton-a, so Baton is measured on both wires).

Each run starts the agent with a prompt; the mock answers turn 1 with the
workload's shell calls and measures the turn gap: from the moment the last
byte of turn 1 was flushed to the moment the turn-2 request (every output)
was read. It also checks that the outputs come back in call order, and for
the interrupt workload sends SIGINT (as a terminal's Ctrl-C does, to the
agent's process group) one second after turn 1 and measures the time to
exit and the `sleep` processes left behind.

`baton-codex` is `baton agent` on the Responses wire with `--tool-set
codex`: codex's own tool names and schemas (the mock calls whichever shell
tool the request offers), so codex and Baton are measured on the same
tools as well as the same workloads.

`baton-alt` is `baton agent` like `baton`, with the program named by
$BATON_ALT (another build, or a wrapper that sets an environment variable):
two builds interleaved in one run.

    python3 bench/peer/run.py [--runs 5] [--agents baton,codex,claude,baton-a,baton-codex]
                              [--workloads a,b] [--hog N] [--hog-kind spin|fork]

`--hog N` runs N busy processes (normal priority) for the whole run: the
contention mode, for the turn gap on a machine that is busy with other
work (CI, eval fleets, a laptop building).

Needs a release `baton` (BATON, default target/release/baton or
$CARGO_TARGET_DIR/release/baton), codex from ./install-codex.sh and Claude
Code from ./install-claude.sh.
Prints one JSON line per run and a summary table (medians) at the end.
"""

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mock_messages  # noqa: E402
import mock_responses  # noqa: E402

AGENTS = ["baton", "codex", "claude", "baton-a", "baton-codex", "baton-alt"]
# Agents that speak Anthropic's Messages wire (the others speak Responses).
ANTHROPIC = {"claude", "baton-a"}

MARK = "30.0417"  # the interrupt workload's sleeps, found again by this

WORKLOADS = {
    "true64": ["true"] * 64,
    "sleep16": ["sleep 0.5"] * 16,
    "cat100": ["cat small.txt"] * 100,
    # R,R,W,R,R: each takes 0.3 s; the reads after the write must see it.
    "rrwrr": ["sleep 0.3; cat marks.txt"] * 2
    + ["sleep 0.3; echo WROTE-MARK >> marks.txt"]
    + ["sleep 0.3; cat marks.txt"] * 2,
    # Not a leading `sleep`: Claude Code refuses a command that starts with
    # one (it says to use Monitor or run_in_background instead).
    "interrupt": ["true && sleep " + MARK] * 4,
}


def baton_bin():
    if os.environ.get("BATON"):
        return os.environ["BATON"]
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(HERE, "..", "..", "target")
    return os.path.join(target, "release", "baton")


def codex_bin():
    return os.path.join(HERE, "node", "node_modules", ".bin", "codex")


def claude_bin():
    return os.path.join(HERE, "node", "node_modules", ".bin", "claude")


def command(agent, url, workdir, home):
    prompt = "Run the commands you are given."
    if agent == "claude":
        return [claude_bin(), "-p", prompt, "--dangerously-skip-permissions", "--model",
                "claude-sonnet-4-5", "--max-turns", "3", "--output-format", "json"]
    if agent == "baton-a":
        return [baton_bin(), "agent", "--provider", "anthropic", "--base-url", url,
                "--model", "claude-sonnet-4-5", "--cwd", workdir, "--permission-mode",
                "bypassPermissions", "--max-turns", "3", "--state-dir",
                os.path.join(home, "state"), prompt]
    if agent in ("baton", "baton-codex", "baton-alt"):
        tool_set = ["--tool-set", "codex"] if agent == "baton-codex" else []
        # baton-alt: another build (or a wrapper script) as BATON_ALT, run
        # interleaved with the first, to compare before and after in one run.
        program = os.environ.get("BATON_ALT", baton_bin()) if agent == "baton-alt" else baton_bin()
        return [program, "agent", "--provider", "openai-responses", "--base-url", url,
                "--model", "gpt-5-codex", "--cwd", workdir, "--permission-mode",
                "bypassPermissions", "--max-turns", "3", "--state-dir",
                os.path.join(home, "state")] + tool_set + [prompt]
    provider = ('{name="mock",base_url="%s",env_key="MOCK_API_KEY",wire_api="responses",'
                'request_max_retries=0,stream_max_retries=0}' % url)
    return [codex_bin(), "exec", "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox", "-C", workdir,
            "-c", "model_provider=mock", "-c", "model_providers.mock=" + provider,
            "-m", "gpt-5-codex", prompt]


def marked_processes():
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open("/proc/%s/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if MARK in cmd and state != "Z" and comm == "sleep":
            found.append(int(pid))
    return found


def text_of(output):
    """The text of a function_call_output's output or a tool_result's content."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "".join(b.get("text", "") for b in output if isinstance(b, dict))
    return None


def one_run(servers, agent, workload):
    commands = WORKLOADS[workload]
    run = mock_responses.Run(commands)
    server = servers["messages" if agent in ANTHROPIC else "responses"]
    server.current = run
    url = "http://127.0.0.1:%d" % server.server_address[1]
    if agent not in ANTHROPIC:
        url += "/v1"
    with tempfile.TemporaryDirectory(prefix="peer-") as home:
        workdir = os.path.join(home, "work")
        os.makedirs(workdir)
        with open(os.path.join(workdir, "small.txt"), "w") as f:
            f.write("a small file\n" * 4)
        open(os.path.join(workdir, "marks.txt"), "w").close()
        env = dict(os.environ, MOCK_API_KEY="mock", CODEX_HOME=os.path.join(home, "codex"),
                   HOME=home, NO_COLOR="1")
        if agent in ANTHROPIC:
            # Claude Code: the mock, no update checks or telemetry, and its
            # permission bypass allowed as root (IS_SANDBOX).
            env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="mock", IS_SANDBOX="1",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
        os.makedirs(env["CODEX_HOME"])
        env.pop("OPENAI_API_KEY", None)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        proc = subprocess.Popen(command(agent, url, workdir, home), cwd=workdir, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        result = {"agent": agent, "workload": workload}
        if workload == "interrupt":
            if not run.turn1_flushed.wait(120):
                proc.kill()
                result["error"] = "turn 1 never streamed"
                return result
            # Wait until the sleeps run (a slow agent may take seconds to
            # start them), then give them a moment more.
            deadline = time.monotonic() + 60
            while (len(marked_processes()) < len(commands)
                   and time.monotonic() < deadline):
                time.sleep(0.05)
            time.sleep(0.5)
            running = len(marked_processes())
            sent = time.monotonic()
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                result["exit_timeout"] = True
            result["sleeps_running_at_sigint"] = running
            result["exit_ms"] = round((time.monotonic() - sent) * 1000, 1)
            result["left_at_exit"] = len(marked_processes())
            time.sleep(2.0)
            left = marked_processes()
            result["left_after_2s"] = len(left)
            for pid in left:  # started by this run: clean up, by pid
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            result["exit_code"] = proc.returncode
            return result
        try:
            out, err = proc.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            result["error"] = "timeout"
        result["exit_code"] = proc.returncode
        result["wall_ms"] = round((time.monotonic() - started) * 1000, 1)
        result.update(cpu_of(usage))
        posts = [r for r in run.requests if r[0] == "POST"]
        result["requests"] = len(posts)
        if run.errors:
            result["error"] = "; ".join(run.errors)
        if run.turn1_end is None or run.turn2_at is None:
            result.setdefault("error", "no turn 2 (stderr: %s)" % err.decode()[-400:])
            return result
        result["tool"] = run.tool
        result["gap_ms"] = round((run.turn2_at - run.turn1_end) * 1000, 1)
        ids = [cid for cid, _ in run.outputs]
        result["outputs_ok"] = all(text_of(o) is not None for _, o in run.outputs)
        result["outputs"] = len(ids)
        result["in_order"] = ids == run.call_ids
        if workload == "rrwrr":
            texts = [str(text_of(o)) for _, o in run.outputs]
            reads = [texts[i] for i in (0, 1, 3, 4)] if len(texts) == 5 else []
            # Reads before the write do not see it; reads after it do.
            seen = ["WROTE-MARK" in t for t in reads]
            result["reads_saw_write"] = "".join("y" if x else "n" for x in seen)
            result["write_ordered"] = seen == [False, False, True, True]
        return result


def cpu_of(before):
    """CPU time and context switches of the agent and everything it started
    and reaped (its shells), since `before`: RUSAGE_CHILDREN of this process
    counts a child once it is waited for, with its own waited-for children.
    The hog is never waited for during the runs, so it is not counted."""
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "cpu_ms": round((after.ru_utime + after.ru_stime
                         - before.ru_utime - before.ru_stime) * 1000, 1),
        "vcsw": after.ru_nvcsw - before.ru_nvcsw,
        "ivcsw": after.ru_nivcsw - before.ru_nivcsw,
    }


# What each hog process runs: `spin` only burns CPU; `fork` starts short
# programs without pause, as a build does (new tasks, exits, page faults).
HOGS = {
    "spin": [sys.executable, "-c", "while True: pass"],
    "fork": ["bash", "-c", "while :; do /bin/true; done"],
}


def start_hog(n, kind="spin"):
    """N processes that keep a CPU busy at normal priority until killed."""
    return [subprocess.Popen(HOGS[kind], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
            for _ in range(n)]


def stop_hog(hog):
    for proc in hog:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--agents", default="baton,codex",
                   help="comma-separated, of %s" % ",".join(AGENTS))
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--hog", type=int, default=0,
                   help="busy processes running beside the agents (contention mode)")
    p.add_argument("--hog-kind", default="spin", choices=sorted(HOGS),
                   help="spin: pure CPU; fork: short programs without pause, like a build")
    a = p.parse_args()
    agents = a.agents.split(",")
    for agent in agents:
        if agent not in AGENTS:
            p.error("unknown agent %r (known: %s)" % (agent, ", ".join(AGENTS)))
    servers = {"responses": mock_responses.serve(), "messages": mock_messages.serve()}
    hog = start_hog(a.hog, a.hog_kind)
    try:
        results = run_all(servers, agents, a)
    finally:
        stop_hog(hog)
    print("\nmedians of %d runs%s (load average at the end: %s)" % (
        a.runs, " beside %d busy processes (%s)" % (a.hog, a.hog_kind) if a.hog else "",
        " ".join("%.2f" % x for x in os.getloadavg())))
    summarise(results, agents, a)


def run_all(servers, agents, a):
    results = []
    for workload in a.workloads.split(","):
        for i in range(a.runs):
            # Alternate, so load drifts hit every agent alike, and rotate
            # who goes first: the first run of a round (right after the
            # previous round's last agent, often codex with its 1.5 s of
            # CPU) was measured slower, whichever build held that place.
            k = i % len(agents)
            for agent in agents[k:] + agents[:k]:
                r = one_run(servers, agent, workload)
                print(json.dumps(r), flush=True)
                results.append(r)
    return results


def summarise(results, agents, a):
    for workload in a.workloads.split(","):
        row = [workload]
        for agent in agents:
            rs = [r for r in results if r["agent"] == agent and r["workload"] == workload]
            key = "exit_ms" if workload == "interrupt" else "gap_ms"
            vals = [r[key] for r in rs if key in r]
            med = statistics.median(vals) if vals else None
            extra = ""
            if workload == "interrupt":
                extra = " left=%s" % [r.get("left_after_2s") for r in rs]
            else:
                extra = " ordered=%d/%d" % (sum(1 for r in rs if r.get("in_order")), len(rs))
                cpus = [r["cpu_ms"] for r in rs if "cpu_ms" in r]
                if cpus:
                    extra += " cpu_ms=%s ivcsw=%s" % (
                        statistics.median(cpus),
                        statistics.median(r["ivcsw"] for r in rs if "ivcsw" in r))
            row.append("%s %s=%s%s" % (agent, key, med, extra))
        print("  ".join(row))
        # How many times longer codex's median is than each Baton agent's.
        meds = {}
        for agent in agents:
            key = "exit_ms" if workload == "interrupt" else "gap_ms"
            vals = [r[key] for r in results
                    if r["agent"] == agent and r["workload"] == workload and key in r]
            meds[agent] = statistics.median(vals) if vals else None
        if meds.get("codex"):
            ratios = ["codex/%s=%.1fx" % (agent, meds["codex"] / med)
                      for agent, med in meds.items()
                      if agent.startswith("baton") and med]
            if ratios:
                print("    " + "  ".join(ratios))


if __name__ == "__main__":
    main()
