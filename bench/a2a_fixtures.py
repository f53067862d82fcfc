"""The A2A tests' deployment (tests/api/fixtures): their profiles and rules, and callers
granted every fixture profile by name. The fuzz (bench/fuzz.py) serves it as the A2A tests
do (tests/api/conftest.py, tests/security/test_input_caps.py); each adds its own database,
keys and limits."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentrt.api.settings import key_digest
from agentrt.core.profiles import load_profiles

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "api" / "fixtures"


def fixture_profiles() -> list[str]:
    return sorted(load_profiles(FIXTURES / "profiles.yaml"))


def fixture_groups(keys: Mapping[str, str], **api: Any) -> dict[str, dict[str, Any]]:
    """The worker, providers and api setting groups (for `ApiSettings.replace`) serving
    the fixtures to `keys` (caller -> API key); `api` adds to the api group or overrides it."""
    return {
        "worker": {"profiles_file": FIXTURES / "profiles.yaml"},
        "providers": {
            "rules_file": FIXTURES / "rules.yaml",
            "scripted_providers": "scripted,strict",
            "provider_answer_levels": "strict=none",
        },
        "api": {
            "keys": ",".join(f"{who}={key_digest(k)}" for who, k in keys.items()),
            "key_profiles": ",".join(f"{who}={'|'.join(fixture_profiles())}" for who in keys),
            "default_skill": "helper",
            "poll_seconds": 0.05,
            **api,
        },
    }
