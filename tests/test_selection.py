"""The second pass of `./dev test` (AGENTRT_TEST_DATABASE_ONLY=1) keeps every test that can
reach the database and leaves out the rest."""

from pathlib import Path

import pytest

from tests.conftest import OWN_DATABASE, reaches_the_database

TESTS = Path(__file__).parent


def test_a_test_without_the_database_fixture_is_left_out(request: pytest.FixtureRequest) -> None:
    assert not reaches_the_database(request.node)


def test_a_test_on_the_database_fixture_is_kept(
    request: pytest.FixtureRequest, database_url: str
) -> None:
    assert reaches_the_database(request.node)


@pytest.mark.parametrize(
    "module", ["store/test_migrations.py", "workflows/test_store_outage.py", "api/test_metrics.py"]
)
def test_a_module_that_makes_its_own_database_is_kept_whole(module: str) -> None:
    class Elsewhere:  # one of that module's tests, without the fixture
        fixturenames = ("tmp_path",)
        path = TESTS / module

    assert reaches_the_database(Elsewhere)  # type: ignore[arg-type]


def test_no_helper_or_conftest_makes_a_database_the_rule_cannot_see() -> None:
    """The rule reads the test's own module: a fixture or helper elsewhere that made a
    database through tests/_db.py would escape it. Only the root conftest does (for
    `database_url`, which the rule follows)."""
    helpers = [
        p.relative_to(TESTS).as_posix()
        for p in TESTS.rglob("*.py")
        if not p.name.startswith("test_")
        and p not in (TESTS / "conftest.py", TESTS / "_db.py")
        and OWN_DATABASE in p.read_text()
    ]
    assert helpers == []
