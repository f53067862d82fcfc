"""Live output under privacy `redacted`: however a reply is split into deltas, what is
published, joined, is the redaction of the whole reply, so no secret of the redaction
rules leaves, even one split across deltas (contracts/redaction.StreamRedactor)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrt.contracts.redaction import StreamRedactor, redact_text

# One secret per rule (contracts/redaction._SECRETS) and an e-mail address.
SECRETS = [
    "https://admin:hunter2pass@db.example.com/x",
    "Bearer abcdefgh12345678",
    "bearer\n\t ZYXWVUTS98765432",
    "eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl",
    "sk-proj-abcdefghijklmnop1234",
    "sk-ABCDEFGHIJKLMNOPQRSTUV",
    "ghp_abcdefghijklmnopqrstuvwx",
    "AKIAABCDEFGHIJKLMNOP",
    "AIzaabcdefghijklmnopqrstuvwxyz0123456",
    "xoxb-1234567890-abcdef",
    "someone.else@example.org",
]
# Filler that borders secrets in every way that matters: spaces of each kind RE2 knows and
# some it does not, word characters that extend a token, punctuation.
FILLER = st.text(alphabet="ab Z9_-.:/@\t\n\r\f\x0b\u00a0é", max_size=12)


@st.composite
def split_texts(draw: st.DrawFn) -> tuple[str, list[str]]:
    secrets = draw(st.lists(st.sampled_from(SECRETS), min_size=1, max_size=4))
    parts = [draw(FILLER)]
    for s in secrets:
        parts += [s, draw(FILLER)]
    text = "".join(parts)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return text, pieces


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split_texts())
def test_no_secret_leaves_however_the_reply_is_split(case: tuple[str, list[str]]) -> None:
    text, pieces = case
    redactor = StreamRedactor()
    shown = [redactor.feed(p) for p in pieces]
    joined = "".join(shown) + redactor.feed("", final=True)
    assert joined == redact_text(text, max_chars=None)
    # ...and so at no moment did a published prefix hold a secret the whole text hides.
    for secret in SECRETS:
        if secret not in redact_text(text, max_chars=None):
            assert secret not in joined


def test_text_without_secrets_is_shown_as_it_comes_up_to_its_last_space() -> None:
    redactor = StreamRedactor()
    assert redactor.feed("Hello wor") == "Hello "
    assert redactor.feed("ld, key Bearer ") == "world, key "  # a token may follow
    assert redactor.feed("abcdefgh12345678 done") == "[REDACTED] "
    assert redactor.feed("", final=True) == "done"
