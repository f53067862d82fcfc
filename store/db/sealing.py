"""AEAD sealing of stored content (AES-256-GCM).

A sealed value is `s1.<key id>.<base64 nonce+ciphertext>`. The associated data binds it to
its table, column and row, so a value copied to another row or column fails to open.
"""

import base64
import hashlib
import hmac
import os
from collections.abc import Mapping

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

PREFIX = "s1"


class SealError(Exception):
    """A value could not be opened: wrong key, unknown key id, or moved/tampered data."""


class Sealer:
    def __init__(self, keys: Mapping[str, bytes], active: str) -> None:
        if active not in keys:
            raise ValueError(f"active key id {active!r} is not among the keys")
        for kid, key in keys.items():
            if len(key) != 32:
                raise ValueError(f"key {kid!r} must be 32 bytes (AES-256)")
            if "." in kid:
                raise ValueError("a key id may not contain '.'")
        self._keys = {kid: AESGCM(key) for kid, key in keys.items()}
        self.active = active
        # A MAC key derived from the active key, never the AES key itself.
        self._mac = hmac.new(keys[active], b"agentrt-mac-v1", hashlib.sha256).digest()

    @classmethod
    def from_b64(cls, spec: str) -> "Sealer":
        """Parse `kid:base64key[,kid:base64key...]`; the first entry is the active key."""
        keys: dict[str, bytes] = {}
        active = ""
        for part in (p.strip() for p in spec.split(",") if p.strip()):
            kid, sep, b64 = part.partition(":")
            if not sep:
                raise ValueError("seal keys are 'kid:base64key' pairs")
            keys[kid] = base64.b64decode(b64)
            active = active or kid
        if not keys:
            raise ValueError("no seal key given")
        return cls(keys, active)

    @staticmethod
    def new_key_b64() -> str:
        return base64.b64encode(AESGCM.generate_key(bit_length=256)).decode()

    @staticmethod
    def _aad(table: str, column: str, row: str) -> bytes:
        return f"{table}\x1f{column}\x1f{row}".encode()

    def seal(self, plaintext: str, *, table: str, column: str, row: str) -> str:
        nonce = os.urandom(12)
        ct = self._keys[self.active].encrypt(
            nonce, plaintext.encode(), self._aad(table, column, row)
        )
        return f"{PREFIX}.{self.active}.{base64.b64encode(nonce + ct).decode()}"

    def open(self, sealed: str, *, table: str, column: str, row: str) -> str:
        try:
            prefix, kid, b64 = sealed.split(".", 2)
        except ValueError as exc:
            raise SealError("not a sealed value") from exc
        if prefix != PREFIX:
            raise SealError("not a sealed value")
        aead = self._keys.get(kid)
        if aead is None:
            raise SealError(f"unknown key id {kid!r}")
        raw = base64.b64decode(b64)
        try:
            return aead.decrypt(raw[:12], raw[12:], self._aad(table, column, row)).decode()
        except InvalidTag as exc:
            raise SealError("value does not open here (wrong key, or moved/tampered)") from exc

    def mac(self, text: str) -> str:
        """A keyed, deterministic digest of `text` (HMAC-SHA256, hex): the same each time,
        and only a holder of the key can compute it."""
        return hmac.new(self._mac, text.encode(), hashlib.sha256).hexdigest()

    def key_id(self, sealed: str) -> str:
        return sealed.split(".", 2)[1]
