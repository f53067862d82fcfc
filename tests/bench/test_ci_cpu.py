"""bench.ci_cpu sums each test's CPU per database and file, most first."""

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.ci_cpu import DIR_VARIABLE, by_file, table


def test_rows_are_summed_per_database_and_file_most_cpu_first() -> None:
    rows = [
        ("sqlite", {"id": "tests/a.py::t1", "own": 1.0, "kids": 2.0, "wall": 5.0}),
        ("sqlite", {"id": "tests/a.py::t2[x]", "own": 0.5, "kids": 0.0, "wall": 1.0}),
        ("postgres", {"id": "tests/a.py::t1", "own": 1.0, "kids": 9.0, "wall": 4.0}),
        ("sqlite", {"id": "tests/b.py::t", "own": 0.1, "kids": 0.1, "wall": 0.5}),
    ]
    files = by_file(rows)
    assert [(f.database, f.path, f.tests) for f in files] == [
        ("postgres", "tests/a.py", 1),
        ("sqlite", "tests/a.py", 2),
        ("sqlite", "tests/b.py", 1),
    ]
    assert files[1].cpu == 3.5 and files[1].wall == 6.0
    text = table(files, most=2).splitlines()
    assert text[0] == "in tests: 3 CPU-s in pytest, 11 CPU-s in reaped children"
    assert len(text) == 4 and text[-1].endswith("sqlite   tests/a.py")


def test_the_plugin_writes_one_row_per_test_of_a_real_pytest_run(tmp_path: Path) -> None:
    (tmp_path / "test_two.py").write_text("def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    env = {**os.environ, DIR_VARIABLE: str(tmp_path / "out"), "AGENTRT_TEST_DATABASE": "x"}
    root = Path(__file__).resolve().parents[2]  # where `bench` imports from
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "bench.ci_cpu", "-p", "no:cacheprovider",
         str(tmp_path / "test_two.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    [written] = list((tmp_path / "out").glob("x-*.jsonl"))
    rows = [json.loads(line) for line in written.read_text().splitlines()]
    assert [r["id"].split("::")[1] for r in rows] == ["test_a", "test_b"]
    assert all(r["own"] >= 0 and r["kids"] >= 0 and r["wall"] >= 0 for r in rows)
