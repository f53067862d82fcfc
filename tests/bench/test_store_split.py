"""bench.store_split counts each store call once, by method, at its outermost call."""

import pytest

import agentrt.activities._common as common
from bench.store_split import Tally, table, tallied


class _Store:
    def outer(self) -> int:
        # A store method that makes another store call through the same path.
        return common._store_call(self.inner) + 1

    def inner(self) -> int:
        return 1


def test_a_nested_call_counts_once_under_the_outer_method() -> None:
    store = _Store()
    with tallied() as tally:
        assert common._store_call(store.outer) == 2
        assert common._store_call(store.inner) == 1
    assert tally.calls == {"_Store.outer": 1, "_Store.inner": 1}
    assert set(tally.cpu) == {"_Store.outer", "_Store.inner"}


def test_the_wrapper_is_removed_and_errors_pass_through() -> None:
    before = common._store_call

    def boom() -> None:
        raise KeyError("x")

    with tallied() as tally:
        with pytest.raises(KeyError):
            common._store_call(boom)
    assert common._store_call is before
    assert tally.calls["test_the_wrapper_is_removed_and_errors_pass_through.<locals>.boom"] == 1


def test_the_table_reads_per_run() -> None:
    tally = Tally()
    tally.cpu["RunStore.turn_inputs"] = 0.004  # 4 ms over 2 runs
    tally.calls["RunStore.turn_inputs"] = 8
    text = table(tally, 2)
    assert "RunStore.turn_inputs" in text
    assert "4.00" in text and "500" in text and "2.00" in text
