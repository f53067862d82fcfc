"""core/converter.py: the pydantic payload converter with its parts built once. It must write
the same payloads as the SDK's pydantic converter and read theirs, and building one (as the
SDK does for every workflow activation) must not build its parts again."""

import dataclasses
from datetime import UTC, datetime

from temporalio.common import RawValue
from temporalio.contrib.pydantic import PydanticPayloadConverter, pydantic_data_converter
from temporalio.converter import DataConverter

from agentrt.contracts.enums import RunStatus, TerminationReason
from agentrt.contracts.run import RunResult
from agentrt.core.converter import PYDANTIC, PydanticConverter, reads_agentrt_payloads
from agentrt.core.temporal import data_converter

VALUES: list[object] = [
    None,
    b"\x00bytes",
    {"a": [1, 2.5, "x"], "when": datetime(2026, 12, 7, tzinfo=UTC)},
    RunResult(
        run_id="r-1",
        status=RunStatus.COMPLETED,
        termination_reason=TerminationReason.ANSWERED,
        outcome="COMPLETED",
        iterations=2,
    ),
]


def test_the_same_payloads_as_the_sdks_pydantic_converter_both_ways() -> None:
    ours, stock = PydanticConverter(), PydanticPayloadConverter()
    assert list(ours.converters) == list(stock.converters)  # encodings, in order
    written = ours.to_payloads(VALUES)
    assert written == stock.to_payloads(VALUES)
    hints = [type(None), bytes, dict, RunResult]
    assert ours.from_payloads(written, hints) == stock.from_payloads(written, hints)
    assert ours.from_payloads(stock.to_payloads(VALUES), hints)[3] == VALUES[3]
    assert isinstance(ours.from_payloads(written, [RawValue])[0], RawValue)


def test_building_one_builds_no_parts() -> None:
    # The SDK builds a DataConverter (so a payload converter) per activation: with ours,
    # every one shares the same converters (and their TypeAdapter cache).
    first, second = dataclasses.replace(PYDANTIC), dataclasses.replace(PYDANTIC)
    assert first.payload_converter is not second.payload_converter
    assert first.payload_converter_class is PydanticConverter
    a, b = PydanticConverter(), PydanticConverter()
    assert all(a.converters[k] is b.converters[k] for k in a.converters)
    stock_a, stock_b = PydanticPayloadConverter(), PydanticPayloadConverter()
    assert stock_a.converters[b"json/plain"] is not stock_b.converters[b"json/plain"]


def test_every_agentrt_converter_is_ours_and_the_sdks_reads_the_same() -> None:
    assert data_converter() is PYDANTIC
    assert data_converter("k1:" + "a" * 43 + "=").payload_converter_class is PydanticConverter
    assert reads_agentrt_payloads(PYDANTIC)
    assert reads_agentrt_payloads(pydantic_data_converter)
    plain = dataclasses.replace(
        pydantic_data_converter, payload_converter_class=PydanticPayloadConverter
    )
    assert reads_agentrt_payloads(plain)
    assert not reads_agentrt_payloads(DataConverter.default)
