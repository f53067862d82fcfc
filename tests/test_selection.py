"""The second pass of `./dev test` (AGENTRT_TEST_DATABASE_ONLY=1) keeps every test that can
reach the database and leaves out the rest."""

from pathlib import Path

import pytest

from tests.conftest import reaches_the_database

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
