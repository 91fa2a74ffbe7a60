"""A real MCP client (the official Python SDK) driving `baton mcp serve`.

Run by tests/mcp_server.rs. Every check is an assert: a failure exits non-zero
with the message, which the Rust test shows. Usage:

    client.py stdio BATON WORKDIR SETTINGS
    client.py http URL TOKEN WORKDIR
"""

import json
import os
import sys
import time

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
import mcp_types as types


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def allow_everything(_context, params):
    return types.ElicitResult(action="accept", content={"allow": True})


def connect(target, elicit=False, mode="auto"):
    kind = target["kind"]
    callback = allow_everything if elicit else None
    if kind == "stdio":
        params = StdioServerParameters(
            command=target["baton"],
            args=["mcp", "serve", "--cwd", target["workdir"], "--settings", target["settings"],
                  "--state-dir", os.path.join(target["workdir"], ".state")],
        )
        return Client(params, elicitation_callback=callback, mode=mode, read_timeout_seconds=60)
    headers = {"Authorization": f"Bearer {target['token']}"}
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    transport = streamable_http_client(target["url"], http_client=http)
    return Client(transport, elicitation_callback=callback, mode=mode, read_timeout_seconds=60)


async def scenario(target, mode):
    workdir = target["workdir"]
    async with connect(target, mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ["Bash", "Read", "Write", "Edit", "Glob", "Grep"]:
            assert name in tools, f"{name} not listed: {sorted(tools)}"
        assert tools["Read"].annotations.read_only_hint is True
        assert tools["Bash"].annotations.read_only_hint is False
        assert tools["Bash"].annotations.destructive_hint is True
        assert tools["Bash"].input_schema["properties"]["command"]["type"] == "string"

        r = await client.call_tool("Bash", {"command": "echo hello from baton"})
        assert not r.is_error, text_of(r)
        assert "hello from baton" in text_of(r), text_of(r)

        # Context carries from one call to the next.
        os.makedirs(os.path.join(workdir, "sub"), exist_ok=True)
        r = await client.call_tool("Bash", {"command": "cd sub"})
        assert not r.is_error, text_of(r)
        r = await client.call_tool("Bash", {"command": "pwd"})
        assert text_of(r).strip().endswith("/sub"), text_of(r)
        await client.call_tool("Bash", {"command": f"cd {workdir}"})

        # An ask without elicitation support is a denial that says why.
        target_file = os.path.join(workdir, f"note-{mode}.txt")
        r = await client.call_tool("Write", {"file_path": target_file, "content": "one\n"})
        assert r.is_error, text_of(r)
        assert "needs approval" in text_of(r), text_of(r)
        assert not os.path.exists(target_file)

        # Schema errors come back as error results, not protocol errors.
        r = await client.call_tool("Read", {"file_path": 42})
        assert r.is_error and "file_path" in text_of(r), text_of(r)

        # Progress of a long command reaches the client.
        seen = []

        async def on_progress(progress, total, message):
            seen.append(message)

        r = await client.call_tool(
            "Bash", {"command": "for i in 1 2 3 4; do echo tick $i; sleep 1; done"},
            progress_callback=on_progress)
        assert "tick 4" in text_of(r), text_of(r)
        assert seen, "no progress notification arrived"

        # Cancelling a running call stops it and its processes; the
        # connection stays usable.
        pidfile = os.path.join(workdir, f"pid-{mode}")
        with anyio.move_on_after(2):
            await client.call_tool(
                "Bash", {"command": f"sleep 300 & echo $! > {pidfile}; wait"})
        deadline = time.time() + 10
        pid = None
        while time.time() < deadline:
            try:
                pid = int(open(pidfile).read().strip())
                os.kill(pid, 0)
            except (FileNotFoundError, ValueError):
                pass
            except ProcessLookupError:
                break
            await anyio.sleep(0.1)
        else:
            state = os.popen(f"ps -o pid,ppid,pgid,stat,cmd -p {pid} | tail -1").read()
            raise AssertionError(f"the cancelled call's process {pid} still runs: {state}")
        r = await client.call_tool("Bash", {"command": "echo still usable"})
        assert "still usable" in text_of(r), text_of(r)

        # Safe calls from concurrent requests run together.
        start = time.monotonic()
        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(client.call_tool, "Sleep", {"duration_ms": 1000})
        took = time.monotonic() - start
        assert took < 3.5, f"4 parallel 1 s sleeps took {took:.1f} s"

    # A client that can be asked gets the question, and its yes counts: as a
    # server-to-client elicitation (legacy) or, with 2026-07-28 (auto), in an
    # input_required answer the client retries with.
    async with connect(target, elicit=True, mode=mode) as client:
        expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
        assert client.protocol_version == expected, client.protocol_version
        r = await client.call_tool("Write", {"file_path": target_file, "content": "two\n"})
        assert not r.is_error, text_of(r)
        assert open(target_file).read() == "two\n"
        r = await client.call_tool(
            "Edit", {"file_path": target_file, "old_string": "two", "new_string": "three"})
        # Edit requires a prior Read in the same session.
        if r.is_error:
            await client.call_tool("Read", {"file_path": target_file})
            r = await client.call_tool(
                "Edit", {"file_path": target_file, "old_string": "two", "new_string": "three"})
        assert not r.is_error, text_of(r)
        assert open(target_file).read() == "three\n"


async def main():
    kind = sys.argv[1]
    if kind == "stdio":
        target = {"kind": kind, "baton": sys.argv[2], "workdir": sys.argv[3], "settings": sys.argv[4]}
    else:
        target = {"kind": kind, "url": sys.argv[2], "token": sys.argv[3], "workdir": sys.argv[4]}
    for mode in ["legacy", "auto"]:
        await scenario(target, mode)
        print(f"{kind} {mode}: ok", flush=True)


anyio.run(main)
