"""What the sign-in codec shows a principal of each payload (issue 41): decoding follows
what that person may read.

Each payload names its run (core/codec.py, envelope v2; the name is associated data, so a
relabelled payload does not open). A payload is decoded only when:
- its run is one the principal may read: their own (its initiator), or any with
  `runs:read-all` (or `admin`), exactly as `GET /runs/{id}` decides;
- and then only as far as the run's privacy level allows: `full` whole; `redacted` with
  every string (and key) of the decoded JSON passed through the same redaction the
  run's events get; `metadata` and `none` not at all.
Anything else comes back in its place as a JSON string saying why it is withheld (Temporal
Web shows it where the value would be): a run the principal may not read or that has no
row yet (one no worker has begun), and a payload bound to no run (written before runs were
bound, or outside any run), which the codec cannot attribute to a run. Temporal's own
marker data passes as it is (core/codec_server.temporal_marker)."""

import asyncio
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

from agentrt.api.operator.auth import Principal
from agentrt.contracts.redaction import redact_text
from agentrt.contracts.schedules import sees
from agentrt.core.codec import ENCODING, PlaintextPayloadError, bound_run
from agentrt.core.codec_server import temporal_marker
from agentrt.store.runs.query import RunQuery

JSON = b"json/plain"
NOT_YOURS = "withheld: not a run you may read"
UNBOUND = "withheld: this payload names no run (written before runs were bound)"


def withheld(reason: str) -> Payload:
    return Payload(metadata={"encoding": JSON}, data=json.dumps(f"[{reason}]").encode())


def _redact(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value, max_chars=None)
    if isinstance(value, dict):
        return {_redact(str(k)): _redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v) for v in value]
    return value


def redacted(p: Payload) -> Payload:
    """A decoded payload at privacy `redacted`: its JSON with every string redacted. One
    that is not JSON (bytes) cannot be redacted, so it is withheld."""
    if p.metadata.get("encoding") != JSON:
        return withheld("withheld: not JSON, cannot be redacted at privacy level redacted")
    try:
        value = json.loads(p.data)
    except ValueError:
        return withheld("withheld: not JSON, cannot be redacted at privacy level redacted")
    return Payload(metadata=dict(p.metadata), data=json.dumps(_redact(value)).encode())


@dataclass
class Shown:
    """The answer to one decode request, and what it did, for the audit log."""

    payloads: list[Payload] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    runs: set[str] = field(default_factory=set)


async def decode_for(
    who: Principal, codec: PayloadCodec, payloads: Sequence[Payload], query: RunQuery
) -> Shown:
    """Each payload as `who` may see it. A payload that is not encrypted, or one shown that
    does not open, raises ValueError (the caller's 400), as the codec server does."""
    runs = sorted({r for p in payloads if (r := bound_run(p))})
    readers = await asyncio.to_thread(query.readers, runs) if runs else {}
    shown = Shown()
    for p in payloads:
        if temporal_marker(p):
            shown.payloads.append(p)
            continue
        if p.metadata.get("encoding") != ENCODING:
            raise PlaintextPayloadError("a payload is not encrypted: refused")
        run = bound_run(p)
        reason = _refusal(who, run, readers)
        if reason is not None:  # not even decrypted
            shown.payloads.append(withheld(reason))
            shown.outcomes["withheld"] += 1
            continue
        assert run is not None
        shown.runs.add(run)
        [opened] = await codec.decode([p])
        level = readers[run][1]
        shown.payloads.append(opened if level == "full" else redacted(opened))
        shown.outcomes["decoded" if level == "full" else "redacted"] += 1
    return shown


def _refusal(who: Principal, run: str | None, readers: dict[str, tuple[str, str]]) -> str | None:
    """Why `who` is not shown a payload of `run` decoded; None when they are."""
    if not run:
        return UNBOUND
    found = readers.get(run)
    if found is None or not sees(who.visible_to, found[0]):
        return NOT_YOURS  # the same for absent and not visible, as GET /runs/{id}'s 404
    if found[1] not in ("full", "redacted"):
        return f"withheld: privacy level {found[1]}"
    return None
