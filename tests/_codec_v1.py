"""The payload envelope every build before issue 41 wrote (core/codec.py "v1"): AES-256-GCM
of the serialized payload with no associated data, and only the encoding and the key id in
its metadata. Kept here, byte for byte, to prove that runs in flight and histories written
with it still decode and replay."""

import os
from collections.abc import Sequence

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.api.history.v1 import History
from temporalio.converter import PayloadCodec

from agentrt.core.codec import ENCODING, KEY_ID, parse_keys
from tests._cipher import MARKER_BOOKKEEPING, history_payloads


class V1Codec(PayloadCodec):
    """Encodes as the old builds did; never decodes (today's codec does)."""

    def __init__(self, spec: str) -> None:
        keys, self._active = parse_keys(spec)
        self._aead = AESGCM(keys[self._active])

    def seal(self, p: Payload) -> Payload:
        nonce = os.urandom(12)
        return Payload(
            metadata={"encoding": ENCODING, KEY_ID: self._active.encode()},
            data=nonce + self._aead.encrypt(nonce, p.SerializeToString(), None),
        )

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.seal(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        raise NotImplementedError("today's codec decodes v1")


def seal_history(history: History, codec: V1Codec) -> int:
    """Every payload of `history` the codec would have sealed, sealed as v1 in place (not
    the SDK core's own marker bookkeeping, which no codec sees). Returns how many."""
    sealed = 0
    for event in history.events:
        # The bookkeeping is set aside while the rest is sealed, then put back as it was.
        kept: dict[str, Payloads] = {}
        if event.HasField("marker_recorded_event_attributes"):
            marker = event.marker_recorded_event_attributes
            for name, key in MARKER_BOOKKEEPING:
                if marker.marker_name == name and key in marker.details:
                    kept[key] = Payloads()
                    kept[key].CopyFrom(marker.details[key])
                    del marker.details[key]
        for _, payload in history_payloads(event):
            if payload.ByteSize():
                payload.CopyFrom(codec.seal(payload))
                sealed += 1
        for key, payloads in kept.items():
            event.marker_recorded_event_attributes.details[key].CopyFrom(payloads)
    return sealed
