"""Payload encryption for Temporal (AES-256-GCM), each payload bound to its run.

An encrypted payload carries `encoding: binary/encrypted` and the key id in its metadata;
its data is nonce + ciphertext of the whole serialized original payload. Two envelopes:

- v2 (written since issue 41): the metadata also says `agentrt-envelope: 2` and
  `agentrt-run: <workflow id>`, the run the payload belongs to, from the SDK's
  serialization context (start input, signals, updates, queries and results of that
  workflow; its activities' inputs and results), and the AES-GCM associated data is that
  id. Changing the run named breaks the tag: a payload cannot be passed off as another
  run's. The sign-in codec (api/operator/codec.py) reads the run from here to decide
  whether the person asking may read it. A payload made where no workflow is known (none
  of ours today) is bound to "" (no run).
- v1 (before): no envelope field, no associated data. Still decoded, so runs in flight
  and histories written before keep working; never written any more.

Where the decoder knows the workflow (a worker's activation, a client's call on a run), a
v2 payload bound to another run is refused: ciphertext copied from one run's history into
a signal to another is not accepted. One exception: a workflow a Temporal Schedule starts
has the schedule action's id followed by `-<time>`, and its input was bound to that id
when the schedule was made.

A payload without the encryption marker is refused: anyone with Temporal access (the stock
CLI, Temporal Web without the codec server) could otherwise send a plaintext signal the
workers would accept. The client and the codec server raise (PlaintextPayloadError); a
worker's codec (`refusing`) puts a payload no converter reads in its place (so too for
a payload bound to another run), so the signal
or update carrying it is dropped (logged) instead of failing the workflow task on every
retry, and tells its `on_plaintext` hook which workflow it was (workers/plaintext.py ends
one whose very start was plaintext). An unknown key id fails loudly."""

import base64
import copy
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Self

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from google.protobuf.message import DecodeError
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    ActivitySerializationContext,
    PayloadCodec,
    SerializationContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)

ENCODING = b"binary/encrypted"
KEY_ID = "encryption-key-id"
ENVELOPE = "agentrt-envelope"
RUN = "agentrt-run"
V2 = b"2"
_AAD = b"agentrt payload v2\x00"
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


def associated_data(run: str) -> bytes:
    return _AAD + run.encode()


def bound_run(p: Payload) -> str | None:
    """The run a v2 payload says it belongs to ("" for none); None for a v1 payload or one
    not encrypted. Only a successful decrypt proves the claim."""
    if p.metadata.get("encoding") != ENCODING or p.metadata.get(ENVELOPE) != V2:
        return None
    return p.metadata.get(RUN, b"").decode(errors="replace")


def context_run(context: SerializationContext) -> str | None:
    """The workflow id the SDK's serialization context names, if any."""
    if isinstance(context, WorkflowSerializationContext | ActivitySerializationContext):
        return context.workflow_id or None
    return None


def same_run(bound: str, expected: str | None) -> bool:
    """Whether a payload bound to `bound` may be read where `expected` is the workflow."""
    if expected is None or not bound or bound == expected:
        return True
    return expected.startswith(bound + "-")  # a scheduled workflow: action id + "-<time>"


class EncryptionCodec(PayloadCodec, WithSerializationContext):
    def __init__(self, keys: Mapping[str, bytes], active: str, *, substitute: bool = False) -> None:
        """`substitute`: replace a plaintext payload by one nothing decodes (a worker),
        instead of raising PlaintextPayloadError (a client, the codec server)."""
        self._keys = dict(keys)
        self._aead = {kid: AESGCM(key) for kid, key in keys.items()}
        self._active = active
        self._substitute = substitute
        self._run: str | None = None  # the workflow of the context, when the SDK gives one
        self.on_plaintext: Callable[[str], None] | None = None

    def refusing(self, on_plaintext: Callable[[str], None] | None = None) -> "EncryptionCodec":
        """The same keys, as a worker decodes: a plaintext payload becomes unreadable, and
        `on_plaintext` hears of the workflow it came to."""
        codec = EncryptionCodec(self._keys, self._active, substitute=True)
        codec.on_plaintext = on_plaintext
        return codec

    @classmethod
    def from_spec(cls, spec: str) -> "EncryptionCodec":
        return cls(*parse_keys(spec))

    @property
    def active_key(self) -> str:
        """The id of the key new payloads are encrypted with."""
        return self._active

    def with_context(self, context: SerializationContext) -> Self:
        """The codec for one workflow's payloads: what it encodes is bound to that run."""
        bound = copy.copy(self)
        bound._run = context_run(context)
        return bound

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        run = self._run or ""
        aad = associated_data(run)
        out = []
        for p in payloads:
            nonce = os.urandom(12)
            sealed = self._aead[self._active].encrypt(nonce, p.SerializeToString(), aad)
            metadata = {
                "encoding": ENCODING,
                KEY_ID: self._active.encode(),
                ENVELOPE: V2,
                RUN: run.encode(),
            }
            out.append(Payload(metadata=metadata, data=nonce + sealed))
        return out

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [await self._decode_one(p) for p in payloads]

    async def _decode_one(self, p: Payload) -> Payload:
        if p.metadata.get("encoding") != ENCODING:
            return self._refuse(
                PlaintextPayloadError(
                    "a payload is not encrypted, and payload keys are configured: refused "
                    "(send it through a client or codec server with the keys)"
                )
            )
        kid = p.metadata.get(KEY_ID, b"").decode(errors="replace")
        aead = self._aead.get(kid)
        if aead is None:
            raise ValueError(f"payload encrypted with unknown key id {kid!r}")
        bound = bound_run(p)
        if bound is not None and not same_run(bound, self._run):
            return self._refuse(
                ValueError(f"a payload bound to run {bound!r} was sent to {self._run!r}: refused")
            )
        aad = None if bound is None else associated_data(bound)
        try:
            return Payload.FromString(aead.decrypt(p.data[:12], p.data[12:], aad))
        except (InvalidTag, DecodeError):
            # Tampered, truncated, relabelled to another run, or sealed under another key
            # with the same id.
            raise ValueError(
                f"an encrypted payload (key id {kid!r}) does not open: "
                "it was altered, truncated or moved from another run"
            ) from None

    def _refuse(self, error: ValueError) -> Payload:
        """A client raises `error`; a worker hands on a payload no converter reads, so the
        signal or update carrying it is dropped, and tells `on_plaintext` the workflow."""
        if not self._substitute:
            raise error
        logger.warning("refused a payload: %s", error)
        if self.on_plaintext is not None and self._run is not None:
            self.on_plaintext(self._run)
        return Payload(metadata={"encoding": REFUSED})
