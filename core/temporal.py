"""The one data converter and the client factory used by every process."""

import dataclasses
import re

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter

from agentrt.contracts.errors import TemporalUnavailableError
from agentrt.core.codec import EncryptionCodec
from agentrt.core.settings import Settings

# The innermost reason in the Rust bridge's error text, e.g. "Connection refused".
_REASON = re.compile(r'(?:message|error): "([^"]+)"')


def data_converter(payload_keys: str | None = None) -> DataConverter:
    """Every client, worker, test and replayer uses this. With payload keys, every payload
    (inputs, results, signals, updates, queries, memo) is encrypted before it leaves."""
    if not payload_keys:
        return pydantic_data_converter
    return dataclasses.replace(
        pydantic_data_converter, payload_codec=EncryptionCodec.from_spec(payload_keys)
    )


async def connect(
    address: str, namespace: str = "default", payload_keys: str | None = None
) -> Client:
    return await Client.connect(
        address, namespace=namespace, data_converter=data_converter(payload_keys)
    )


async def connect_from_settings(settings: Settings) -> Client:
    """The client of an entry point: address, namespace and payload keys from settings; an
    unreachable frontend is a TemporalUnavailableError that names the setting to change."""
    try:
        return await connect(
            settings.temporal_address, settings.temporal_namespace, settings.payload_keys_spec()
        )
    except RuntimeError as exc:
        found = _REASON.findall(str(exc))
        reason = found[-1] if found else str(exc).splitlines()[0][:200]
        raise TemporalUnavailableError(
            f"cannot reach Temporal at {settings.temporal_address} ({reason}): "
            "set AGENTRT_TEMPORAL_ADDRESS to a running Temporal frontend"
        ) from None
