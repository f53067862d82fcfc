"""An agentrt entry point (`python -m ...`) run as a user runs it, and the one-line error
every entry point owes its user when a setting is wrong or a dependency is down."""

import subprocess
import sys
from pathlib import Path


def run_module(
    module: str, args: tuple[str, ...], *, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Run `python -m module args` in `cwd` (no `.env` there: only `env` configures it)."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def assert_one_line(done: subprocess.CompletedProcess[str], prog: str, *fragments: str) -> None:
    """Exit 2 and exactly one line on stderr, `prog: ` and the error, with every fragment."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: "), done.stderr
    for fragment in fragments:
        assert fragment in lines[0]
