"""The payload converter every agentrt process uses: the SDK's pydantic converter, its
parts built once per process instead of once per workflow activation.

The SDK's worker builds a DataConverter for every workflow activation it decodes and every
completion it encodes (temporalio 1.35.0; 20 per k = 3 agent run, 16 per storeless loop
run), and each calls the payload converter's class with no arguments.
`PydanticPayloadConverter()` makes its five encoding converters anew each time, and each
new one starts an empty cache of pydantic TypeAdapters, so every workflow instance builds
the adapters of its activity results again (5 per agent run). Measured
(docs/benchmarks/history.md set 22): 9.6 -> 4.1 µs of CPU per DataConverter, and the
adapters' 0.37 ms per agent run -> 0; about 0.5 ms of a k = 3 agent run's 55-80 ms of
worker CPU, and as much of a hand-written loop's on the same worker.

`PydanticConverter` is a composite over one set of those converters, built at import: the
same encodings in the same order, so the same payloads both ways (and a client with the
SDK's `pydantic_data_converter` reads them: tests/core/test_converter.py). The converters
hold no per-call state (the TypeAdapter cache is thread-safe, and now kept). Public API
only: `CompositePayloadConverter(*converters)` and the `converters` mapping of the SDK's
own class.
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
