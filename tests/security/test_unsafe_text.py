"""Issue 41, L6 and L7: text the store or a JSON encoder cannot take is a 400, never a 500.

- L6: a lone surrogate (`"\\ud800"`) in a `POST /runs` prompt was a 500 with a traceback
  (the workflow input could not be encoded).
- L7: on PostgreSQL, a NUL character in a `GET /runs` filter or a start's profile name was
  a 500 whose traceback logged the SQL statement and its parameters.

Both are refused before routing (api/text_check.py): in the path, the query, and every
string and key of a JSON body; nothing is created, and no log line holds SQL or a
traceback. Run on SQLite and PostgreSQL alike (AGENTRT_TEST_DATABASE=postgres)."""

import json
import logging

import pytest
from sqlalchemy.exc import DataError

from agentrt.api.operator.errors import _refused_by_database
from tests.api.conftest import Live
from tests.api.ops_helpers import http, name, token

JSON = {"Content-Type": "application/json"}
BAD_BODIES = {
    "lone high surrogate in the prompt": b'{"profile": "helper", "prompt": "hi \\ud800 there"}',
    "lone low surrogate in the prompt": b'{"profile": "helper", "prompt": "\\udc00"}',
    "reversed pair": b'{"profile": "helper", "prompt": "\\udc00\\ud800"}',
    "NUL in the profile": b'{"profile": "hel\\u0000per", "prompt": "hi"}',
    "NUL in the prompt": b'{"profile": "helper", "prompt": "a\\u0000b"}',
    "surrogate in a key": b'{"profile": "helper", "prompt": "hi", "\\ud800": 1}',
    "nested far too deep": b'{"profile": "helper", "prompt": "hi", "x": ' + b"[" * 30_000
    + b"]" * 30_000 + b"}",
}  # fmt: skip
BAD_QUERIES = [
    "/runs?profile=he%00lper",
    "/runs?initiator=a%00b",
    "/runs?status=RUNNING%00",
    "/runs?cursor=%00",
    "/runs/%00",
    "/inbox?profile=x%00",
]


def _no_sql_and_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        line = record.getMessage()
        assert "SELECT" not in line and "[SQL" not in line and "parameters" not in line, line
        assert not record.exc_info, f"a traceback was logged: {line}"
        assert record.levelno < logging.ERROR, line


@pytest.mark.parametrize("shape", sorted(BAD_BODIES))
async def test_a_start_holding_text_the_store_cannot_take_is_a_400_and_creates_nothing(
    live: Live, caplog: pytest.LogCaptureFixture, shape: str
) -> None:
    caplog.set_level(logging.INFO)
    who = name("alice")
    async with http(live, token(live, who, "runs:start", "runs:read")) as c:
        reply = await c.post("/runs", content=BAD_BODIES[shape], headers=JSON)
        assert reply.status_code == 400, reply.text
        assert reply.json()["error"]["type"] == "invalid_request"
        mine = await c.get("/runs", params={"initiator": who})
        assert mine.status_code == 200 and mine.json()["runs"] == [], mine.text
    _no_sql_and_no_traceback(caplog)


@pytest.mark.parametrize("path", BAD_QUERIES)
async def test_a_nul_in_a_path_or_filter_is_a_400_with_no_sql_logged(
    live: Live, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    caplog.set_level(logging.INFO)
    async with http(live, token(live, name("alice"), "runs:read", "runs:decide")) as c:
        reply = await c.get(path)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["type"] == "invalid_request"
    _no_sql_and_no_traceback(caplog)


async def test_a_surrogate_pair_and_plain_unicode_still_start(live: Live) -> None:
    """An emoji escaped as its UTF-16 pair is text: only an unpaired half is refused."""
    body = json.dumps({"profile": "helper", "prompt": "order 7 \U0001f600 café"}).encode()
    assert b"\\ud83d\\ude00" in body  # ensure_ascii: the pair, escaped
    async with http(live, token(live, name("alice"), "runs:start")) as c:
        reply = await c.post("/runs", content=body, headers=JSON)
    assert reply.status_code == 201, reply.text


async def test_a_statement_the_database_refuses_is_a_500_without_sql_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The last line of defence, for input a check missed: one line, no SQL, no trace."""
    caplog.set_level(logging.INFO)
    exc = DataError("SELECT agent_run.id FROM agent_run WHERE profile = %(p)s",
                    {"p": "secret\x00"}, Exception("text fields cannot contain NUL"))  # fmt: skip
    reply = await _refused_by_database(None, exc)  # type: ignore[arg-type]
    assert reply.status_code == 500
    assert json.loads(bytes(reply.body)) == {
        "error": {"type": "store_error", "message": "the database refused this request"}
    }
    lines = [r.getMessage() for r in caplog.records]
    assert lines and all("SELECT" not in ln and "secret" not in ln for ln in lines), lines
