"""The one data converter and the client factory used by every process."""

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter


def data_converter() -> DataConverter:
    """Every client, worker, test and replayer uses this: a payload codec goes in here."""
    return pydantic_data_converter


async def connect(address: str, namespace: str = "default") -> Client:
    return await Client.connect(address, namespace=namespace, data_converter=data_converter())
