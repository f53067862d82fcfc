"""The payload converter every agentrt process uses: the SDK's pydantic converter, its
parts built once per process instead of once per workflow activation.

The SDK's worker builds a DataConverter for every workflow activation it decodes and every
completion it encodes (temporalio 1.35.0: two or three per activation), and each builds
its payload converter by calling the payload converter's class with no arguments.
`PydanticPayloadConverter()` makes its five encoding converters anew each time (a pydantic
SchemaSerializer and an LRU cache of TypeAdapters among them): about 100 of each
DataConverter's 125 µs of CPU, some 3 % of a k = 3 agent run's worker CPU in a burst
(py-spy, docs/benchmarks/history.md set 22).

`PydanticConverter` is a composite over one set of those converters, built at import: the
same encodings in the same order, so the same payloads both ways (and a client with the
SDK's `pydantic_data_converter` reads them). The converters hold no per-call state (the
TypeAdapter cache is thread-safe, and now kept across activations instead of started
afresh). Public API only: `CompositePayloadConverter(*converters)` and the `converters`
mapping of the SDK's own class.
"""

import dataclasses

from temporalio.contrib.pydantic import PydanticPayloadConverter, pydantic_data_converter
from temporalio.converter import CompositePayloadConverter, DataConverter

_PARTS = tuple(PydanticPayloadConverter().converters.values())


class PydanticConverter(CompositePayloadConverter):
    """PydanticPayloadConverter's encodings, over converters built once per process."""

    def __init__(self) -> None:
        super().__init__(*_PARTS)


# The SDK's pydantic data converter with the payload converter above (no codec: core/temporal.py
# adds the payload keys' one).
PYDANTIC = dataclasses.replace(pydantic_data_converter, payload_converter_class=PydanticConverter)

# The payload converter classes whose payloads agentrt reads: its own, and the SDK's it
# stands for (a client made with `pydantic_data_converter`).
READABLE = frozenset({PydanticConverter, PydanticPayloadConverter})


def reads_agentrt_payloads(converter: DataConverter) -> bool:
    """Whether a client's converter converts payloads as agentrt's does."""
    return converter.payload_converter_class in READABLE
