"""Benchmark sizes. The defaults keep a full run near four minutes on two cores."""

from dataclasses import dataclass


@dataclass(frozen=True)
class BenchConfig:
    runs: int = 20  # sequential runs per kind (agent, bare, bare+db) and per k
    warmup: int = 2  # untimed runs per kind before timing
    tools: tuple[int, ...] = (1, 3, 6)  # tool calls per agent run (one per round)
    concurrency: int = 10  # runs in flight for the throughput figures
    throughput_runs: int = 30  # runs per kind and k for the throughput figures
    history_rounds: tuple[int, ...] = (5, 10, 20)
    long_history_rounds: int = 49  # rounds of the bench-only 50-model-call run; 0 skips it
    fence_runs: int = 8  # runs of 4 unfenced + 4 fenced writes each
    # Long runs (issue 30): one run of `long_calls` tool calls with 4 kB results and 1 kB of
    # model text a turn, continuing as new every `long_segment_rounds`, against the loop.
    long_calls: int = 100
    long_segment_rounds: int = 50  # AGENTRT_SEGMENT_ROUNDS' default
    long_runs: int = 3  # runs per kind, interleaved
    server_runs: int = 20  # sequential baseline runs per dev-server configuration
    server_activities: int = 9  # activities per baseline run in the dev-server section
    timer_runs: int = 5  # runs of the timer probe per dev-server configuration
    burst: int = 100  # runs started at once for the saturation figures
    burst_reps: int = 2  # alternating bursts per kind
    memory_runs: int = 200  # runs waiting for approval (the figure: 1000)
    ablate: bool = False  # also run the tuned server once without each TUNING key
    persist: bool = False  # dev servers persist to a file instead of memory
    # The load section (not in the default sections): the base level, then multiples of it.
    load_levels: tuple[int, ...] = (1, 2, 4)
    load_runs: int = 200  # runs started per level at 1x
    load_starts: int = 50  # starts in flight at 1x
    load_followers: int = 100  # SSE followers at 1x
    load_decisions: int = 20  # decisions in flight at 1x
    load_workers: int = 1  # worker processes
    load_seconds: float = 600.0  # a level's deadline for every run to end
    load_kill_api: float = 0.0  # > 0: SIGKILL the API this many seconds into each level
    load_client: str = "split"  # "split": the starts from a process of their own; "one"
    # bench-load: one refund per run; bench-load-parallel: the refund beside three reads
    # whose events commit out of sequence order (bench/load_profiles.yaml).
    load_profile: str = "bench-load"


def tiny() -> BenchConfig:
    """The smallest size that still exercises every code path (for the smoke test)."""
    return BenchConfig(
        runs=2,
        warmup=1,
        tools=(1,),
        concurrency=2,
        throughput_runs=2,
        history_rounds=(2, 3),
        long_history_rounds=0,
        fence_runs=1,
        long_calls=6,
        long_segment_rounds=3,
        long_runs=1,
        server_runs=2,
        server_activities=2,
        timer_runs=1,
        burst=4,
        burst_reps=1,
        memory_runs=4,
        load_levels=(1,),
        load_runs=8,
        load_starts=4,
        load_followers=8,
        load_decisions=2,
        load_seconds=120.0,
    )
