"""What the CI-sized bench smoke run (`./dev bench-smoke`) holds the bench to.

A ratio fails the smoke run when it passes its limit by more than the noise measured for
it on this machine. The limit is the issue-12 target, or the figure last measured here if
that is still over target (so the smoke run catches regressions now and tightens by itself
to the target once the figure meets it: edit LAST_MEASURED when a change moves a figure).
"""

from dataclasses import dataclass

from bench.versus_report import PERSISTENT, SQL_TARGETS, STORELESS


@dataclass(frozen=True)
class Limit:
    figure: str
    target: float
    last_measured: float  # this machine, quick bench (see docs/benchmarks/results.md)
    noise: float  # run-to-run spread of the smoke-size figure on this machine
    higher_is_better: bool = False

    @property
    def bound(self) -> float:
        if self.higher_is_better:
            return min(self.target, self.last_measured) - self.noise
        return max(self.target, self.last_measured) + self.noise

    def passes(self, value: float) -> bool:
        return value >= self.bound if self.higher_is_better else value <= self.bound


# Last measured: the session that made a PostgreSQL step one round trip (2026-12-01),
# medians of four runs of the final code's loop section. SQLite: k = 1 1.39x, k = 3 1.28x,
# throughput 0.82x, worker CPU 1.28x, server CPU 1.19x. PostgreSQL: 1.37x, 1.305x (at the
# limit), 0.75x, 1.35x, 1.27x. On SQLite every figure meets its target, so the target is
# each limit. Noise: the spread seen between repeated runs of the same code on this shared
# 2-core machine: k = 1 moved between 1.31x and 1.52x on one commit (PostgreSQL at the
# start commit: 1.28x to 1.57x), k = 3 between 1.21x and 1.39x, throughput between 0.69x
# and 0.89x, worker CPU between 1.17x and 1.50x. The CI-sized smoke run (a burst of 30)
# spreads wider and sits lower on throughput and higher on worker CPU than the full bench:
# 0.58x-0.64x and 1.62x-1.95x over the smoke runs of this and the session before, so their
# noise is set to reach that spread.
LIMITS = (
    Limit("loop.k1.ratio", PERSISTENT.idle[1], 1.39, 0.45),
    Limit("loop.k3.ratio", PERSISTENT.idle[3], 1.28, 0.4),
    Limit("loop.sat.throughput_ratio", PERSISTENT.throughput, 0.82, 0.2, True),
    Limit("loop.sat.worker_cpu_ratio", PERSISTENT.cpu, 1.28, 0.55),
    Limit("loop.sat.server_cpu_ratio", PERSISTENT.cpu, 1.19, 0.3),
)


@dataclass(frozen=True)
class Target:
    """A figure reported against its target by the smoke run, never asserted."""

    figure: str
    target: float
    higher_is_better: bool = False

    def met(self, value: float) -> bool:
        return value >= self.target if self.higher_is_better else value <= self.target


# The targets against the storeless loop (issue 26's, tightened by issue 45) and issue 45's
# SQL per k = 3 agent run: printed by the smoke run next to the limits above. Reported only:
# the code before issue 26's redesign missed them (1.52x, 1.53x, 0.71x and 1.73x on SQLite;
# docs/benchmarks/history.md set 6), issue 45's were not met when set (set 22), and a limit
# set to today's figures plus the smoke size's noise would sit far above them.
REPORTED = (
    Target("storeless.k1.ratio", STORELESS.idle[1]),
    Target("storeless.k3.ratio", STORELESS.idle[3]),
    Target("storeless.sat.throughput_ratio", STORELESS.throughput, True),
    Target("storeless.sat.worker_cpu_ratio", STORELESS.cpu),
    Target("loop.k3.statements", SQL_TARGETS[3][0]),
    Target("loop.k3.commits", SQL_TARGETS[3][1]),
)
