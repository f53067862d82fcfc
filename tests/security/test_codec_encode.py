"""Issue 41 (2, Info): the standalone codec server (`agentrt codec-server`) encrypted
anything for any holder of its token on cf842b3, so Temporal Web, or an operator with the
decode token, could make a payload the workers accept as ours (a forged signal). Now
`/encode` takes only the workers' and clients' own token (AGENTRT_CODEC_ENCODE_TOKEN)."""

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads

from agentrt.core.codec import EncryptionCodec
from agentrt.core.codec_server import create_codec_app, serving
from agentrt.core.devserver import free_port

KEYS = "k1:" + base64.b64encode(b"e" * 32).decode()
DECODE = "operators-decode-token"
ENCODE = "workers-encode-token"
NS = {"X-Namespace": "default"}


def _body(payloads: list[Payload]) -> str:
    return json_format.MessageToJson(Payloads(payloads=payloads))


PLAIN = [
    Payload(metadata={"encoding": b"json/plain"}, data=json.dumps({"approved": True}).encode())
]


@asynccontextmanager
async def _server(token: str | None, encode: str | None) -> AsyncIterator[httpx.AsyncClient]:
    app = create_codec_app(EncryptionCodec.from_spec(KEYS), [], token, encode_token=encode)
    async with serving(app, free_port()) as url, httpx.AsyncClient(base_url=url) as http:
        yield http


def _bearer(token: str) -> dict[str, str]:
    return {**NS, "Authorization": f"Bearer {token}"}


async def test_the_decode_token_cannot_encode_and_the_encode_token_can() -> None:
    async with _server(DECODE, ENCODE) as http:
        refused = await http.post("/encode", content=_body(PLAIN), headers=_bearer(DECODE))
        assert refused.status_code == 403
        assert "only for workers and clients" in refused.json()["error"]
        assert "payloads" not in refused.json()
        for headers in (NS, _bearer("wrong")):
            assert (
                await http.post("/encode", content=_body(PLAIN), headers=headers)
            ).status_code == 401
        made = await http.post("/default/encode", content=_body(PLAIN), headers=_bearer(ENCODE))
        assert made.status_code == 200
        sealed = json_format.Parse(made.text, Payloads()).payloads
        assert await EncryptionCodec.from_spec(KEYS).decode(sealed) == PLAIN
        # Both tokens decode (a client reads the results it asked for).
        for token in (DECODE, ENCODE):
            opened = await http.post("/decode", content=made.text, headers=_bearer(token))
            assert opened.status_code == 200, token


async def test_without_an_encode_token_nobody_encodes_not_even_a_dev_server() -> None:
    for token in (DECODE, None):  # a server with a decode token, and a loopback dev one
        async with _server(token, None) as http:
            headers = _bearer(DECODE) if token else NS
            reply = await http.post("/encode", content=_body(PLAIN), headers=headers)
            assert reply.status_code == 403, token
            sealed = await EncryptionCodec.from_spec(KEYS).encode(PLAIN)
            assert (
                await http.post("/decode", content=_body(sealed), headers=headers)
            ).status_code == 200
