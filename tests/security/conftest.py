"""The operator API's live-server fixtures, as tests/api has them (tests/live does the
same): one session's store and settings for every security test that serves the API."""

from tests.api.conftest import a2a_parts, a2a_settings, live, make_live

__all__ = ["a2a_parts", "a2a_settings", "live", "make_live"]
