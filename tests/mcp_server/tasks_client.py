"""A real MCP client that uses tasks (protocol 2025-11-25) against
`baton mcp serve --http`: the official Python SDK's last 1.x release, whose
`experimental` API has them (the venv of .ci/deps.d/35-mcp-tasks.sh).

Run by tests/mcp_tasks.rs. Every check is an assert: a failure exits
non-zero with the message, which the Rust test shows. Usage:

    tasks_client.py URL WORKDIR SCENARIO [TASK_ID]

URL is `http://…/mcp`, or `stdio:BATON:SETTINGS` to start `baton mcp serve`
on stdio in WORKDIR. Scenarios print `ok` last, plus `key=value` lines the
Rust test checks.
"""

import os
import sys
import time
import warnings

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

warnings.simplefilter("ignore", DeprecationWarning)

URL, WORK, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3]
TASK_ID = sys.argv[4] if len(sys.argv) > 4 else None


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


class Session:
    """One MCP session over its own HTTP connection(s)."""

    async def __aenter__(self):
        if URL.startswith("stdio:"):
            _, baton, settings = URL.split(":", 2)
            params = StdioServerParameters(
                command=baton,
                args=["mcp", "serve", "--cwd", WORK, "--settings", settings,
                      "--state-dir", os.path.join(WORK, ".state")],
            )
            self._http = stdio_client(params)
            read, write = await self._http.__aenter__()
        else:
            self._http = streamablehttp_client(URL, timeout=60, sse_read_timeout=120)
            read, write, _ = await self._http.__aenter__()
        self._session = ClientSession(read, write)
        session = await self._session.__aenter__()
        self.init = await session.initialize()
        return session

    async def __aexit__(self, *exc):
        await self._session.__aexit__(*exc)
        await self._http.__aexit__(*exc)


async def wait_status(session, task_id, want, seen=None, limit=60):
    deadline = time.monotonic() + limit
    while True:
        task = await session.experimental.get_task(task_id)
        if seen is not None and task.statusMessage:
            seen.append(task.statusMessage)
        if task.status in want:
            return task
        assert time.monotonic() < deadline, f"task {task_id} stayed {task.status}"
        await anyio.sleep(max((task.pollInterval or 200) / 1000, 0.05))


async def run_and_follow():
    """A call as a task: working with status while it runs, then its
    result from tasks/result; tasks/list knows it."""
    s = Session()
    session = await s.__aenter__()
    try:
        tasks = s.init.capabilities.tasks
        assert tasks is not None, f"no tasks capability: {s.init.capabilities}"
        assert tasks.requests and tasks.requests.tools and tasks.requests.tools.call is not None
        assert tasks.list is not None and tasks.cancel is not None
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["Bash"].execution is not None, tools["Bash"]
        assert tools["Bash"].execution.taskSupport == "optional", tools["Bash"].execution
        count = os.path.join(WORK, "count-follow")
        command = (
            f"echo run >> {count}; for i in 1 2 3 4 5 6; do echo line $i; sleep 0.4; done; echo finished"
        )
        created = await session.experimental.call_tool_as_task("Bash", {"command": command})
        task_id = created.task.taskId
        assert created.task.status == "working", created
        seen = []
        running = await wait_status(session, task_id, {"working"}, seen)
        assert running.status == "working"
        await wait_status(session, task_id, {"completed", "failed", "cancelled"}, seen)
        done = await session.experimental.get_task(task_id)
        assert done.status == "completed", done
        result = await session.experimental.get_task_result(task_id, types.CallToolResult)
        said = text_of(result)
        assert not result.isError, said
        assert "line 6" in said and "finished" in said, said
        related = (result.meta or {}).get("io.modelcontextprotocol/related-task", {})
        assert related.get("taskId") == task_id, result.meta
        listed = await session.experimental.list_tasks()
        assert task_id in [t.taskId for t in listed.tasks], listed
        print("status=" + "|".join(seen))
        print(f"task={task_id}")
    finally:
        await s.__aexit__(None, None, None)
    print("ok")


async def survive_reconnect():
    """A task started on one connection, its result read on a new one."""
    count = os.path.join(WORK, "count-reconnect")
    command = f"echo run >> {count}; sleep 2; echo survived"
    async with Session() as session:
        created = await session.experimental.call_tool_as_task("Bash", {"command": command})
        task_id = created.task.taskId
    # The first session and its connection are gone; the call runs on.
    async with Session() as session:
        task = await session.experimental.get_task(task_id)
        assert task.status in ("working", "completed"), task
        result = await session.experimental.get_task_result(task_id, types.CallToolResult)
        assert "survived" in text_of(result), text_of(result)
        listed = await session.experimental.list_tasks()
        assert task_id in [t.taskId for t in listed.tasks], listed
    print(f"task={task_id}")
    print("ok")


async def cancel():
    """tasks/cancel stops the command and its process."""
    pid_file = os.path.join(WORK, "pid-cancel")
    command = f"echo $$ > {pid_file}; exec sleep 300"
    async with Session() as session:
        created = await session.experimental.call_tool_as_task("Bash", {"command": command})
        task_id = created.task.taskId
        deadline = time.monotonic() + 60
        while not (os.path.exists(pid_file) and open(pid_file).read().strip()):
            assert time.monotonic() < deadline, "the command never started"
            await anyio.sleep(0.05)
        pid = int(open(pid_file).read())
        cancelled = await session.experimental.cancel_task(task_id)
        assert cancelled.status == "cancelled", cancelled
        task = await session.experimental.get_task(task_id)
        assert task.status == "cancelled", task
        try:
            await session.experimental.cancel_task(task_id)
            raise AssertionError("a second tasks/cancel was accepted")
        except Exception as e:
            assert "Invalid" in str(e) or "ended" in str(e) or "cancel" in str(e), e
        try:
            await session.experimental.get_task("no-such-task")
            raise AssertionError("an unknown task was answered")
        except Exception as e:
            assert "no-such-task" in str(e) or "not found" in str(e).lower(), e
    print(f"pid={pid}")
    print(f"task={task_id}")
    print("ok")


async def start():
    """Starts a task and prints its id (for a test that restarts the
    server before reading it)."""
    command = os.environ["TASK_COMMAND"]
    async with Session() as session:
        created = await session.experimental.call_tool_as_task("Bash", {"command": command})
    print(f"task={created.task.taskId}")
    print("ok")


async def show():
    """Prints the state of task TASK_ID and, once it ended, its result."""
    async with Session() as session:
        task = await session.experimental.get_task(TASK_ID)
        print(f"status={task.status}")
        print(f"message={task.statusMessage}")
        if task.status in ("completed", "failed", "cancelled"):
            result = await session.experimental.get_task_result(TASK_ID, types.CallToolResult)
            print("result=" + text_of(result).replace("\n", " "))
    print("ok")


anyio.run(
    {
        "follow": run_and_follow,
        "reconnect": survive_reconnect,
        "cancel": cancel,
        "start": start,
        "show": show,
    }[SCENARIO]
)
