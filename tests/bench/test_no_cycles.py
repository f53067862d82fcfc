"""bench/ has no import cycle (issue 42: versus -> sqlcount -> versus, with breakdown and
versus_report, was a circle of four modules). grimp is import-linter's own graph: it reads
every import, one inside a function too."""

import grimp


def test_no_module_of_bench_imports_itself_round_a_circle() -> None:
    graph = grimp.build_graph("bench", cache_dir=None)
    assert len(graph.find_children("bench")) > 50
    assert graph.nominate_cycle_breakers("bench") == set()
