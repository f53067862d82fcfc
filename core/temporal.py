"""The one data converter and the one client factory used by every process."""

import dataclasses
import re
from collections.abc import Callable, Sequence

from temporalio.client import Client
from temporalio.client import Plugin as ClientPlugin
from temporalio.common import HeaderCodecBehavior
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, DefaultFailureConverterWithEncodedAttributes
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.errors import AgentRuntimeError, ConfigError, TemporalUnavailableError
from agentrt.core.codec import EncryptionCodec
from agentrt.core.settings import Settings
from agentrt.core.temporal_diagnose import diagnose, reason_text
from agentrt.core.temporal_tls import temporal_access
from agentrt.core.tracing import tracing_enabled, tracing_interceptor

# The innermost reason in the Rust bridge's error text, e.g. "Connection refused".
_REASON = re.compile(r'(?:message|error): "([^"]+)"')

# How a call fails when the connection, not the request, is the trouble (a dropped
# connection reads UNKNOWN "transport error").
_CONNECTION_LOST = frozenset(
    {
        RPCStatusCode.UNAVAILABLE,
        RPCStatusCode.UNKNOWN,
        RPCStatusCode.DEADLINE_EXCEEDED,
        RPCStatusCode.CANCELLED,
    }
)


def data_converter(payload_keys: str | None = None) -> DataConverter:
    """Every client, worker, test and replayer uses this. With payload keys, every payload
    (inputs, results, signals, updates, queries, memo) is encrypted before it leaves, a
    plaintext one is refused on arrival (core/codec.py), and a failure's message and stack
    trace travel as an encoded attribute, encrypted too (history shows "Encoded failure")."""
    if not payload_keys:
        return pydantic_data_converter
    return dataclasses.replace(
        pydantic_data_converter,
        payload_codec=EncryptionCodec.from_spec(payload_keys),
        failure_converter_class=DefaultFailureConverterWithEncodedAttributes,
    )


def worker_client(client: Client, on_plaintext: Callable[[str], None] | None = None) -> Client:
    """The client a worker polls with: with payload keys, its codec replaces a plaintext
    payload by one no handler can read (the signal or update carrying it is dropped and
    logged) rather than raising, which would fail the workflow task on every retry and
    leave a forged signal able to stall the run; `on_plaintext` hears which workflow it
    came to (workers/plaintext.py). Without payload keys, `client` itself."""
    converter = client.data_converter
    codec = converter.payload_codec
    if not isinstance(codec, EncryptionCodec):
        return client
    config = client.config()
    refusing = codec.refusing(on_plaintext)
    config["data_converter"] = dataclasses.replace(converter, payload_codec=refusing)
    return Client(**config)


def settings_converter(settings: Settings) -> DataConverter:
    """The data converter the settings' payload keys make (a ConfigError naming them)."""
    try:
        return data_converter(settings.payload_keys_spec())
    except ValueError as exc:
        raise ConfigError(f"AGENTRT_PAYLOAD_KEYS: {exc}") from None


async def connect(settings: Settings, *, plugins: Sequence[ClientPlugin] = ()) -> Client:
    """A Temporal client made from the settings, as every agentrt process makes its own
    (`agentrt.connect`, public): the address and namespace, TLS, mTLS and the API key
    (AGENTRT_TEMPORAL_*, checked before connecting: a bad one is a ConfigError naming it),
    the data converter every agentrt process and payload share (pydantic), and with
    AGENTRT_PAYLOAD_KEYS the codec that encrypts every payload, binds it to its run and
    refuses plaintext, headers (the trace context) included. It takes the whole settings
    object, not an address, so no caller can leave the payload keys behind.

    Give it to your own workers (`Worker(client, ..., plugins=[AgentrtPlugin(settings)])`,
    or `build_worker(client, settings)`; `plugins` are the client's, e.g. that plugin, which
    also brings the SDK's metrics runtime) and clients (`AgentRuntime(client, ...)`,
    `client.get_workflow_handle(run_id)`). With tracing configured, its tracing interceptor
    also reaches every worker built on it. A frontend it cannot reach is a
    TemporalUnavailableError naming the cause and the setting to change
    (core/temporal_diagnose.py)."""
    converter = settings_converter(settings)
    access = temporal_access(settings.temporal)
    try:
        return await Client.connect(
            settings.temporal.address,
            namespace=settings.temporal.namespace,
            tls=access.tls,
            api_key=access.api_key,
            data_converter=converter,
            # Only with a tracer provider (core/tracing.py: tracing_enabled).
            interceptors=[tracing_interceptor()] if tracing_enabled() else [],
            # Headers (the trace context) are payloads too: encrypted like the rest.
            header_codec_behavior=HeaderCodecBehavior.CODEC,
            plugins=plugins,
        )
    except RuntimeError as exc:
        found = _REASON.findall(str(exc))
        reason = reason_text(found[-1] if found else str(exc).splitlines()[0][:200])
        address = settings.temporal.address
        hint = await diagnose(address, access, str(exc))
        raise TemporalUnavailableError(
            f"cannot reach Temporal at {address} ({reason}): "
            f"{hint or 'set AGENTRT_TEMPORAL_ADDRESS to a running Temporal frontend'}"
        ) from None


def connection_lost(err: RPCError) -> bool:
    """Whether a call failed on its connection to Temporal rather than on its request."""
    return err.status in _CONNECTION_LOST


def call_error(err: RPCError, address: str) -> AgentRuntimeError:
    """A Temporal call that failed after the client connected, as one typed error: the
    connection lost (TemporalUnavailableError), or the server's refusal."""
    if connection_lost(err):
        return TemporalUnavailableError(
            f"lost the connection to Temporal at {address} ({err.message}); runs go on in "
            "Temporal: check the server and AGENTRT_TEMPORAL_ADDRESS, then ask again"
        )
    return AgentRuntimeError(f"Temporal refused the call ({err.status.name}): {err.message}")
