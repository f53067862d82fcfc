"""`agentrt demo --team` as a user runs it (issue 43 item 4): a triage agent delegates a
refund to the child agent `support`, whose refund waits for the demo's approval in the
child's own run, and asks the remote agent `carrier` (a second agentrt: `agentrt-api` in
its own process, with its own database and worker) for a quote over A2A. Offline: the
scripted model (workers/demo_rules.yaml). Payload keys are on, as in every demo."""

import os
import re
from pathlib import Path

import pytest

from tests.starter.test_embedded import assert_nothing_left, demo_dir, start_demo

__all__ = ["demo_dir"]

pytestmark = pytest.mark.timeout(120)


def _alive(pid: int) -> bool:
    try:
        state = next(
            ln for ln in Path(f"/proc/{pid}/status").read_text().splitlines()
            if ln.startswith("State")
        )  # fmt: skip
    except (OSError, StopIteration):
        return False
    return "zombie" not in state


def test_the_team_demo_runs_a_child_and_a_remote_agent_and_stops_them(demo_dir: Path) -> None:
    demo = start_demo(demo_dir, "--team")
    out, err = demo.proc.communicate(timeout=110)
    assert demo.proc.returncode == 0, f"{out}\n{err}"
    assert "Traceback" not in err, err
    tree = out.split("Tree:\n", 1)[1].split("Events of", 1)[0].splitlines()
    assert len(tree) == 2, tree  # the parent and its one child
    assert re.fullmatch(r"triage \S+ COMPLETED", tree[0]), tree
    assert re.fullmatch(r"  support \S+ COMPLETED", tree[1]), tree
    # Both pending turns were decided: the parent's delegation (a write: the child can
    # refund) and the child's own refund, in the child's run.
    assert "(triage) is WAITING_FOR_APPROVAL" in out and "(support) is WAITING_FOR_APPROVAL" in out
    assert out.count("Approved as demo-operator, automatically") == 2, out
    assert out.count("issue_refund(order_id=1042, amount_cents=4999, memo=customer request) =") == 1
    assert "Refunds issued: 1" in out
    assert "carrier.quote(message=Shipping quote for order 1042) =" in out
    assert "Remote agent 'carrier': 1 A2A task(s) from this caller" in out
    assert "Outcome: COMPLETED (answered)" in out
    assert "the carrier quotes return shipping at 899 cents" in out
    # The parent's tool result of the delegation is the child's answer.
    assert "support(prompt=Please refund order 1042, the customer …) = Done: order 1042" in out
    # The remote API process it started is gone, as is everything else it started.
    (pid,) = re.findall(r"agentrt-api at http://127\.0\.0\.1:\d+ \(pid (\d+)", out)
    assert not _alive(int(pid))
    assert (demo_dir / "remote" / "agentrt.db").exists()  # the remote's own database
    assert_nothing_left(demo_dir)
    assert os.stat(demo_dir / "remote" / "caller.token").st_mode & 0o077 == 0
