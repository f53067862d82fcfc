"""The one data converter and the client factory used by every process."""

import dataclasses

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter

from agentrt.core.codec import EncryptionCodec


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
