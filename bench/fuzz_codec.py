"""The session codec (Temporal Web's decode on the operator API, issue 41) over HTTP.

Cases: Payloads bodies built from payloads sealed with the deployment's keys (as they are,
altered, truncated, under another key id, with another encoding, many at once), plaintext
payloads, JSON that is not Payloads, raw bytes; sent to `/codec/decode` and
`/codec/{namespace}/decode` with this namespace, another or none (path or `X-Namespace`),
and with a signed-in session that holds `payloads:decode`, one that does not, a forged
cookie or none. Pass: no 5xx and no traceback; a 200 is a Payloads document; anything else
a JSON error; decoding writes nothing, so no case may change a row."""

import asyncio
import base64
import json
from contextlib import closing
from typing import Any

import httpx
from google.protobuf import json_format
from hypothesis import strategies as st
from sqlalchemy import Engine
from temporalio.api.common.v1 import Payload, Payloads

from agentrt.core.codec import ENCODING, KEY_ID, EncryptionCodec
from bench.fuzz_core import Finding, LogTrap, Tally, Verdict, changed, drive, snapshot
from bench.fuzz_local import JSON

COOKIE = "agentrt_codec"  # api/operator/codec.COOKIE


def sealed_payloads(payload_keys: str, values: list[Any]) -> list[dict[str, Any]]:
    """`values` as JSON payloads sealed with the deployment's keys, as Payload JSON."""
    plain = [Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(v).encode())
             for v in values]  # fmt: skip
    sealed = asyncio.run(EncryptionCodec.from_spec(payload_keys).encode(plain))
    return [json.loads(json_format.MessageToJson(p)) for p in sealed]


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


@st.composite
def payload(draw: st.DrawFn, sealed: list[dict[str, Any]]) -> Any:
    base = draw(st.sampled_from(sealed))
    kind = draw(st.integers(0, 7))
    if kind <= 1:
        return base
    data = base64.b64decode(base["data"])
    metadata = dict(base["metadata"])
    if kind == 2:  # altered
        i = draw(st.integers(0, len(data) - 1))
        data = data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1 :]
    elif kind == 3:  # truncated
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif kind == 4:  # another key id, or none, or bytes that are no text
        metadata[KEY_ID] = _b64(draw(st.sampled_from([b"nokey", b"", b"\xff\xfe", b"p1\x00"])))
    elif kind == 5:  # another encoding
        metadata["encoding"] = _b64(draw(st.sampled_from([b"json/plain", b"binary/null", b""])))
    elif kind == 6:  # plaintext
        return {"metadata": {"encoding": _b64(b"json/plain")}, "data": _b64(b'"hello"')}
    else:
        return draw(JSON)
    out: dict[str, Any] = {"metadata": metadata, "data": _b64(data)}
    if draw(st.booleans()):
        out["data"] = draw(st.sampled_from(["!!!", "", "AAAA", out["data"]]))
    return out


def bodies(sealed: list[dict[str, Any]]) -> st.SearchStrategy[bytes]:
    payloads = st.lists(payload(sealed), max_size=4) | st.builds(
        lambda p, n: [p] * n, st.sampled_from(sealed), st.sampled_from([100, 2_000])
    )
    documents = payloads.map(lambda ps: {"payloads": ps}) | JSON
    return documents.map(lambda d: json.dumps(d, default=str).encode()) | st.binary(max_size=40)


def cases(sealed: list[dict[str, Any]], namespace: str) -> st.SearchStrategy[Any]:
    where = st.sampled_from(["", namespace, "other", "%00", "x" * 300])
    path = where.map(lambda ns: f"/codec/{ns}/decode" if ns else "/codec/decode")
    header = st.sampled_from([namespace, namespace, "", "other", "a b", "%00"])
    session = st.sampled_from(["decode", "decode", "decode", "read-only", "forged", "none"])
    ctype = st.sampled_from(["application/json"] * 4 + ["text/plain", ""])
    return st.tuples(path, header, session, ctype, bodies(sealed))


def codec_surface(
    base_url: str,
    engine: Engine,
    sessions: dict[str, str],
    sealed: list[dict[str, Any]],
    namespace: str,
    cases_n: int,
    seed_value: int | None,
    trap: LogTrap,
) -> list[Tally]:
    """`sessions`: "decode" and "read-only" -> a session cookie's value (signed in with a
    token holding `payloads:decode`, and one without)."""
    http = httpx.Client(base_url=base_url, timeout=httpx.Timeout(30))
    jar = {**sessions, "forged": "x" * 43}
    state = {"rows": snapshot(engine)}

    def check(case: tuple[str, str, str, str, bytes]) -> Verdict:
        path, header, session, ctype, body = case
        headers = {"X-Namespace": header} if header else {}
        if ctype:
            headers["Content-Type"] = ctype
        if session in jar:
            headers["Cookie"] = f"{COOKIE}={jar[session]}"
        reply = http.post(path, content=body, headers=headers)
        if reply.status_code >= 500 or "Traceback (most recent call last)" in reply.text:
            raise Finding(f"HTTP {reply.status_code}: {reply.text[:300]}")
        after = snapshot(engine)
        if changed(state["rows"], after):
            diff, state["rows"] = changed(state["rows"], after), after
            raise Finding(f"a decode changed rows: {diff}")
        if reply.status_code != 200:
            reply.json()  # a typed JSON error
            return "rejected"
        json_format.Parse(reply.content, Payloads())  # a Payloads document
        return "accepted"

    tally = Tally("session codec (/codec decode)")
    with closing(http):
        drive(tally, cases(sealed, namespace), check,
              cases=cases_n, seed_value=seed_value, trap=trap)  # fmt: skip
    return [tally]


def signed_in(base_url: str, secret: str) -> str:
    """The session cookie `POST /me/session` sets for a token."""
    with httpx.Client(base_url=base_url, timeout=30) as http:
        reply = http.post("/me/session", headers={"Authorization": f"Bearer {secret}"})
    if reply.status_code != 204:
        raise RuntimeError(f"sign-in refused: {reply.status_code} {reply.text[:200]}")
    return str(reply.cookies[COOKIE])


__all__ = ["ENCODING", "codec_surface", "sealed_payloads", "signed_in"]
