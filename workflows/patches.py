"""Which of this build's patches a run asks Temporal about: the runs that began before it.

A `workflow.patched()` call on a run's first execution records a marker, and the SDK's core
follows it with a `TemporalChangeVersion` search-attribute upsert: two history events and
a visibility write on the server, per patch, per run (about 5% of the dev server's CPU per
run: bench/HISTORY.md set 18). The markers exist for the runs that began on an earlier
build and replay here (README, "Support window"): their history holds a marker where they
took a patched path, and no marker where they took the old one, so they must still be asked.

A run that begins on this build takes every patched path, and records no marker:

- on its first execution nothing is asked, so nothing is recorded;
- on a replay (a worker restart, a cache eviction, a reset) the first task probes its
  history for the markers every earlier build recorded at a run's start
  (`store-steps-v2` since 0.3.1, the two older ones in 0.3.0). In replay, `patched()`
  answers from the history and records nothing (sdk-core's patch machine: "replaying, no
  marker: returns false"), so the probe is the same on every replay: markers there, the
  run began on an earlier build and is asked as before; none, it began on this one.

A later segment of a long run (workflows/segments.py) has no start marker to probe: its
carry says it (`Carry.patch_markers`), written by the segment before it; a carry from a
build before this one has no such field and reads True.

`Patches.on` is for the patches this build already has (PARALLEL_TOOLS, LOCAL_STAMP, ...):
every run of this build took their new paths. A patch a later build adds must be asked
through `workflow.patched()` itself: a run of this build still in flight took its old path,
and only the absence of its marker says so.
"""

from dataclasses import dataclass

from temporalio import workflow

# The start markers: 0.3.1 and later recorded STORE_STEPS_V2 at every run's start, 0.3.0
# the two older ones (it took the store-step paths they stand for).
STORE_STEPS_V2 = "store-steps-v2"
STORE_STEPS_V1 = ("local-store-steps", "answer-completes-run")


@dataclass
class Patches:
    """`asked`: the run began before this build and records and reads markers as it did."""

    asked: bool = True

    def on(self, patch_id: str) -> bool:
        """Whether the run takes the patched path: always, in a run of this build."""
        return workflow.patched(patch_id) if self.asked else True

    def deprecated(self, patch_id: str) -> None:
        """A patch whose old path is gone, acknowledged where a marker may stand for it."""
        if self.asked:
            workflow.deprecate_patch(patch_id)


def at_start() -> Patches:
    """At a run's start, before any command: whether it began before this build."""
    if not workflow.unsafe.is_replaying():
        return Patches(asked=False)  # the first execution of the first task: this build's
    if workflow.patched(STORE_STEPS_V2):
        return Patches(asked=True)
    # Both asked (a list, not any()): a 0.3.0 history holds both markers, and a marker no
    # call asks for fails the replay.
    older = [workflow.patched(patch) for patch in STORE_STEPS_V1]
    return Patches(asked=any(older))
