"""Payload encryption for Temporal (AES-256-GCM), and the codec server Temporal Web calls
to show encrypted payloads to operators.

An encrypted payload carries `encoding: binary/encrypted` and the key id in its metadata;
its data is nonce + ciphertext of the whole serialized original payload. A payload without
that marker is refused: anyone with Temporal access (the stock CLI, Temporal Web without
the codec server) could otherwise send a plaintext signal the workers would accept. The
client and the codec server raise (PlaintextPayloadError); a worker's codec (`refusing`)
puts a payload no converter reads in its place, so the signal or update carrying it is
dropped (logged) instead of failing the workflow task on every retry. An unknown key id
fails loudly.
"""

import base64
import logging
import os
from collections.abc import Mapping, Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from google.protobuf.message import DecodeError
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

ENCODING = b"binary/encrypted"
KEY_ID = "encryption-key-id"
# What a worker's codec hands on for a plaintext payload: no payload converter knows this
# encoding, so the handler that receives it fails to convert it (and refuses it).
REFUSED = b"binary/plaintext-refused"

logger = logging.getLogger(__name__)


class PlaintextPayloadError(ValueError):
    """A payload that should be encrypted is not (payload keys are configured)."""


def parse_keys(spec: str) -> tuple[dict[str, bytes], str]:
    """`kid:base64key[,kid:base64key...]`; the first key is the active one."""
    keys: dict[str, bytes] = {}
    active = ""
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        kid, sep, b64 = part.partition(":")
        if not sep or not kid:
            raise ValueError("payload keys are 'kid:base64key' pairs")
        key = base64.b64decode(b64)
        if len(key) != 32:
            raise ValueError(f"payload key {kid!r} must be 32 bytes (AES-256)")
        keys[kid] = key
        active = active or kid
    if not keys:
        raise ValueError("no payload key given")
    return keys, active


class EncryptionCodec(PayloadCodec):
    def __init__(self, keys: Mapping[str, bytes], active: str, *, substitute: bool = False) -> None:
        """`substitute`: replace a plaintext payload by one nothing decodes (a worker),
        instead of raising PlaintextPayloadError (a client, the codec server)."""
        self._keys = dict(keys)
        self._aead = {kid: AESGCM(key) for kid, key in keys.items()}
        self._active = active
        self._substitute = substitute

    def refusing(self) -> "EncryptionCodec":
        """The same keys, as a worker decodes: a plaintext payload becomes unreadable."""
        return EncryptionCodec(self._keys, self._active, substitute=True)

    @classmethod
    def from_spec(cls, spec: str) -> "EncryptionCodec":
        return cls(*parse_keys(spec))

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        out = []
        for p in payloads:
            nonce = os.urandom(12)
            sealed = self._aead[self._active].encrypt(nonce, p.SerializeToString(), None)
            out.append(
                Payload(
                    metadata={"encoding": ENCODING, KEY_ID: self._active.encode()},
                    data=nonce + sealed,
                )
            )
        return out

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        out = []
        for p in payloads:
            if p.metadata.get("encoding") != ENCODING:
                if not self._substitute:
                    raise PlaintextPayloadError(
                        "a payload is not encrypted, and payload keys are configured: "
                        "refused (send it through a client or codec server with the keys)"
                    )
                logger.warning("refused a plaintext payload: payload keys are configured")
                out.append(Payload(metadata={"encoding": REFUSED}))
                continue
            kid = p.metadata.get(KEY_ID, b"").decode()
            aead = self._aead.get(kid)
            if aead is None:
                raise ValueError(f"payload encrypted with unknown key id {kid!r}")
            try:
                out.append(Payload.FromString(aead.decrypt(p.data[:12], p.data[12:], None)))
            except (InvalidTag, DecodeError):
                # Tampered, truncated, or sealed under another key with the same id.
                raise ValueError(
                    f"an encrypted payload (key id {kid!r}) does not open: "
                    "it was altered or truncated"
                ) from None
        return out
