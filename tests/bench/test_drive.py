"""bench/drive.all_of: a burst whose one run fails stops the others."""

import asyncio

import pytest

from bench.drive import BenchError, all_of


async def test_the_first_failure_cancels_the_other_runs_and_propagates() -> None:
    finished: list[int] = []
    cancelled: list[int] = []

    async def run(i: int) -> None:
        if i == 2:
            await asyncio.sleep(0.01)
            raise BenchError("run 2 failed")
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(i)
            raise
        finished.append(i)

    with pytest.raises(BenchError, match="run 2 failed"):
        await asyncio.wait_for(all_of(run(i) for i in range(5)), 2)
    assert sorted(cancelled) == [0, 1, 3, 4] and finished == []


async def test_every_run_is_awaited_when_none_fails() -> None:
    done: list[int] = []

    async def run(i: int) -> None:
        await asyncio.sleep(0.001 * i)
        done.append(i)

    await all_of(run(i) for i in range(5))
    assert sorted(done) == [0, 1, 2, 3, 4]
