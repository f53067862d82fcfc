"""What a load level's clients send and what they saw (bench/load_drive.py drives them;
bench/load_check.py checks what they saw against the store)."""

from collections import Counter
from dataclasses import dataclass, field

PROFILE, PROMPT = "bench-load", "bench load"
# The load profiles (bench/load_profiles.yaml), each with the prompt its rule answers: one
# refund that waits for approval, alone or beside three reads that finish in the reverse
# of their order (their events commit out of sequence order; issue 40 item 1).
PROMPTS = {PROFILE: PROMPT, "bench-load-parallel": "bench load parallel"}
BEGUN, ACCEPTED = "POST /runs (begun)", "POST /runs (accepted)"
RESENT = "POST /runs (sent again: 200)"
INBOX, RUN, DECISION = "GET /inbox", "GET /runs/{id}", "POST /runs/{id}/decision"
SSE = {"Accept": "text/event-stream"}
ASYNC = {"Prefer": "respond-async"}
RECONNECTS = 50
START_ATTEMPTS = 20  # a start answered 503 is sent again after its Retry-After
NOT_BEGUN_SECONDS = 300.0  # how long a follower follows again a run not begun
WATCHERS = 10  # GET /runs/{id} in flight
AWAY_SECONDS = 120.0  # how long a client tries again an API that does not answer at all


@dataclass(frozen=True)
class Sizes:
    runs: int
    starts: int  # starts in flight
    followers: int
    decisions: int  # decisions in flight
    profile: str = PROFILE  # one of PROMPTS

    def times(self, m: int) -> "Sizes":
        return Sizes(self.runs * m, self.starts * m, self.followers * m, self.decisions * m,
                     self.profile)  # fmt: skip

    @property
    def prompt(self) -> str:
        return PROMPTS[self.profile]


@dataclass
class Follow:
    run: int  # index of the run followed
    seen: list[int] = field(default_factory=list)
    ended: bool = False
    reconnects: int = 0
    early_ends: int = 0  # `end` with no status: the run had not begun


@dataclass
class Tally:
    latency: dict[str, list[float]] = field(default_factory=dict)
    run_ids: dict[int, str] = field(default_factory=dict)
    answered_live: set[str] = field(default_factory=set)  # 200/201 with a live status
    accepted_refused: int = 0  # `Prefer: respond-async` answered other than 202
    final: dict[str, str] = field(default_factory=dict)  # run id -> terminal status
    ended_at: dict[str, float] = field(default_factory=dict)
    approved: set[str] = field(default_factory=set)
    # Approvals sent whose answer never came (the API killed meanwhile): applied or not.
    unanswered: set[str] = field(default_factory=set)
    follows: list[Follow] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    began: float = 0.0
    # Each client process's event-loop lag samples ("client"; "starts" when the starts run
    # in a process of their own) and CPU seconds over the level.
    lag: dict[str, list[float]] = field(default_factory=lambda: {"client": [], "starts": []})
    cpu: dict[str, float] = field(default_factory=dict)

    def took(self, endpoint: str, seconds: float) -> None:
        self.latency.setdefault(endpoint, []).append(seconds)
