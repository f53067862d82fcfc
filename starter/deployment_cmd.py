"""The `agentrt` commands that set up a deployment rather than drive runs: `migrate` (the
schema and the seal key a worker owns), `schedules apply` (retention) and `codec-server`
(Temporal Web's decryption). Each returns an exit code; typed errors propagate to the CLI."""

import uvicorn
from rich.console import Console
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from agentrt.contracts.errors import ConfigError, StoreUnavailableError
from agentrt.contracts.ids import SCHEDULE_RETENTION
from agentrt.core.codec import EncryptionCodec
from agentrt.core.codec_server import create_codec_app
from agentrt.core.private import private_dir
from agentrt.core.settings import Settings
from agentrt.core.temporal import connect
from agentrt.starter import schedules
from agentrt.starter.commands import EXIT_OK
from agentrt.store.db.open import WHICH_SETTING, open_store
from agentrt.store.db.sealing import Sealer


async def apply_schedules(settings: Settings, out: Console) -> int:
    """`agentrt schedules apply`: bad retention settings fail before any connection."""
    policy = schedules.retention_policy(settings)
    client = await connect(settings)
    done = await schedules.apply(client, settings)
    out.print(
        f"schedule {SCHEDULE_RETENTION} {done}: purge settled runs after "
        f"{policy.finished_days:g} days, cancel and purge runs waiting over "
        f"{policy.waiting_days:g} days, every {settings.retention.every_hours:g} h "
        f"on {settings.retention.task_queue}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return EXIT_OK


def migrate(settings: Settings, out: Console) -> int:
    """Prepare the data a worker owns: the schema at head and, when AGENTRT_SEAL_KEYS is not
    set, the seal key under the data directory. After it, clients run from there."""
    if not settings.database.url:
        private_dir(settings.database.data_dir)  # SQLite makes no directories
    try:
        sealer = Sealer.from_b64(settings.create_seal_key_if_missing())
    except ValueError as exc:
        raise ConfigError(f"AGENTRT_SEAL_KEYS: {exc}") from None
    url = settings.database.resolved_url()
    try:
        engine, _ = open_store(url, sealer)
    except SQLAlchemyError as exc:
        first = str(exc).splitlines()[0]
        shown = make_url(url).render_as_string(hide_password=True)
        raise StoreUnavailableError(
            f"cannot migrate the database at {shown}: {first}; {WHICH_SETTING}"
        ) from None
    shown = engine.url.render_as_string(hide_password=True)
    engine.dispose()
    out.print(f"database {shown}: schema at head", markup=False, highlight=False, soft_wrap=True)
    if settings.privacy.seal_keys is None:
        where = settings.seal_key_file().resolve()
        out.print(f"seal key: {where}", markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


async def codec_server(
    settings: Settings, port: int, out: Console, *, dev_no_token: bool = False
) -> int:
    """Serve the payload codec on 127.0.0.1 for Temporal Web until interrupted. It needs
    AGENTRT_CODEC_TOKEN unless told it is a loopback-only dev server (--dev-no-token)."""
    keys = settings.payload_keys_spec()
    if not keys:
        raise ConfigError("AGENTRT_PAYLOAD_KEYS is not set: there is nothing to decode")
    token = None if settings.codec.token is None else settings.codec.token.get_secret_value()
    if dev_no_token:
        # The flag says what is wanted: an inherited AGENTRT_CODEC_TOKEN must not turn a
        # loopback dev codec back into one that asks the dev UI for a token it cannot send.
        token = None
    if token is not None and not token.strip():
        raise ConfigError("AGENTRT_CODEC_TOKEN is empty")
    if token is None and not dev_no_token:
        raise ConfigError(
            "AGENTRT_CODEC_TOKEN is not set: the codec server decrypts every payload for "
            "whoever asks; set a token, or pass --dev-no-token for loopback-only development"
        )
    origins = settings.codec.origins()
    try:
        codec = EncryptionCodec.from_spec(keys)
    except ValueError as exc:
        raise ConfigError(f"AGENTRT_PAYLOAD_KEYS: {exc}") from None
    encode = settings.codec.encode_token
    if encode is not None and not encode.get_secret_value().strip():
        raise ConfigError("AGENTRT_CODEC_ENCODE_TOKEN is empty")
    app = create_codec_app(
        codec, origins, token, namespace=settings.temporal.namespace,
        allowed_hosts=settings.codec.hosts(),
        encode_token=None if encode is None else encode.get_secret_value(),
    )  # fmt: skip
    guard = "bearer token required" if token else "NO TOKEN (dev only)"
    guard += "; encodes for workers and clients" if encode else "; encodes for nobody"
    out.print(f"codec server on http://127.0.0.1:{port} for {', '.join(origins)}; {guard}")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    await server.serve()
    return EXIT_OK
