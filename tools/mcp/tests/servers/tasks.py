"""An MCP server that runs tools as tasks (protocol 2025-11-25), written with
the official Python SDK's 1.x `experimental` tasks: it needs the venv that
.ci/deps.d/35-mcp-tasks.sh makes (mcp 1.30.0), not the system's mcp 2.x.

Every execution and every `tasks/cancel` it sees is appended to the file
named by `--log`, so a test can count how often a tool really ran:
`start <label>`, `status <label> <n>`, `done <label>`, `stopped <label>`,
`cancel <taskId>`, `plain <tool>` (called without a task), `task <tool>`.

Serves stdio, or streamable HTTP with `--http PORT` (0: any free port; it
prints `listening on <port>` once the socket listens). `--no-tasks` leaves
the tasks capability out while the tools still say they take tasks.
"""

import sys
import warnings

import anyio
import mcp.types as types
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server
from mcp.shared.experimental.tasks.helpers import cancel_task

warnings.simplefilter("ignore", DeprecationWarning)


def arg(name: str, default: str | None = None) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


LOG = arg("--log")
POLL_MS = int(arg("--poll-ms", "100"))
TASKS = "--no-tasks" not in sys.argv

server = Server("tasks-test")
# One event per running task: set by tasks/cancel so the work stops.
stops: dict[str, anyio.Event] = {}


def log(line: str) -> None:
    if LOG:
        with open(LOG, "a") as f:
            f.write(line + "\n")


def execution(mode: str) -> types.ToolExecution:
    return types.ToolExecution(taskSupport=mode)


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    steps = {
        "type": "object",
        "properties": {
            "label": {"type": "string"},
            "steps": {"type": "integer"},
            "step_ms": {"type": "integer"},
        },
        "required": ["label"],
    }
    return [
        types.Tool(
            name="slow_job",
            description="Works through steps, reporting each as the task's status.",
            inputSchema=steps,
            execution=execution("optional"),
        ),
        types.Tool(
            name="task_only",
            description="Runs only as a task.",
            inputSchema={"type": "object", "properties": {}},
            execution=execution("required"),
        ),
        types.Tool(
            name="failing_job",
            description="Fails after a step.",
            inputSchema={"type": "object", "properties": {}},
            execution=execution("optional"),
        ),
        types.Tool(
            name="plain_tool",
            description="Never a task.",
            inputSchema={"type": "object", "properties": {}},
        ),
    ]


def text(t: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=t)])


async def slow_job(args: dict, task: ServerTaskContext | None) -> types.CallToolResult:
    label = args["label"]
    steps = int(args.get("steps", 3))
    step_ms = int(args.get("step_ms", 300))
    stop = stops.setdefault(task.task_id, anyio.Event()) if task else anyio.Event()
    log(f"start {label}")
    for n in range(1, steps + 1):
        if task:
            await task.update_status(f"step {n} of {steps}")
        log(f"status {label} {n}")
        with anyio.move_on_after(step_ms / 1000):
            await stop.wait()
        if stop.is_set():
            log(f"stopped {label}")
            return text(f"{label} stopped")
    log(f"done {label}")
    return text(f"{label} finished after {steps} steps")


async def failing_job(task: ServerTaskContext | None) -> types.CallToolResult:
    if task:
        await task.update_status("about to fail")
    await anyio.sleep(0.2)
    raise RuntimeError("the disk is full")


@server.call_tool()
async def call_tool(name: str, args: dict):
    ctx = server.request_context
    is_task = ctx.experimental.is_task
    log(f"{'task' if is_task else 'plain'} {name}")
    if name == "plain_tool":
        return text("plain answer")
    if is_task and TASKS:

        async def work(task: ServerTaskContext) -> types.CallToolResult:
            if name == "slow_job":
                return await slow_job(args, task)
            if name == "failing_job":
                return await failing_job(task)
            return text("ran as a task")

        return await ctx.experimental.run_task(work)
    if name == "task_only":
        raise ValueError("task_only must be called as a task")
    if name == "failing_job":
        return await failing_job(None)
    return await slow_job(args, None)


if TASKS:
    support = server.experimental.enable_tasks()
    store = support.store
    create, update = store.create_task, store.update_task

    async def create_with_poll(metadata, task_id=None):
        # The SDK's store suggests 500 ms; a shorter one keeps the tests quick.
        task = await create(metadata, task_id)
        store._tasks[task.taskId].task.pollInterval = POLL_MS
        task.pollInterval = POLL_MS
        return task

    async def update_unless_over(task_id, *args, **kwargs):
        # Work that ends after tasks/cancel tries to complete a task that is
        # already `cancelled`; the SDK then raises from its background task
        # group, which would take the whole server down.
        try:
            return await update(task_id, *args, **kwargs)
        except ValueError:
            return await store.get_task(task_id)

    store.create_task = create_with_poll
    store.update_task = update_unless_over

    @server.experimental.cancel_task()
    async def on_cancel(request: types.CancelTaskRequest) -> types.CancelTaskResult:
        task_id = request.params.taskId
        log(f"cancel {task_id}")
        result = await cancel_task(store, task_id)
        stops.setdefault(task_id, anyio.Event()).set()
        return result


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http(port: int) -> None:
    import contextlib
    import socket

    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Mount

    manager = StreamableHTTPSessionManager(app=server)

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        async with manager.run():
            yield

    app = Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    config = uvicorn.Config(app, log_level="warning")
    print(f"listening on {sock.getsockname()[1]}", flush=True)
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    if "--http" in sys.argv:
        serve_http(int(arg("--http", "0")))
    else:
        anyio.run(serve_stdio)
