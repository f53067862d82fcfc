"""The grouped settings read every variable the flat settings read, with the same meaning:
deployments set them. And the Settings page's table (docs/reference/settings.md) lists every
setting."""

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, SecretStr
from pydantic_settings import BaseSettings

from agentrt.api.settings import ApiServerSettings, ApiSettings
from agentrt.core.settings import (
    DatabaseSettings,
    Settings,
    SettingsGroup,
    TemporalSettings,
    env_name,
)
from agentrt.core.settings_api import RemoteSettings

SETTINGS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "settings.md"

# Every field of the flat `Settings`/`ApiSettings` before grouping (issue 26), written out
# so this cannot pass on an empty list, in two tables: those read as the very string set,
# old name -> (group.field, value), and those read converted (a number, a flag, a path),
# old name -> (group.field, value set, value read).
AS_SET: dict[str, tuple[str, str]] = {
    "database_url": ("database.url", "sqlite:////tmp/x.db"),
    "postgres_dsn": ("database.postgres_dsn", "postgresql://h/db"),
    "temporal_address": ("temporal.address", "temporal.svc:7233"),
    "temporal_namespace": ("temporal.namespace", "prod"),
    "task_queue": ("temporal.task_queue", "runs-q"),
    "deployment_name": ("temporal.deployment_name", "agentrt"),
    "build_id": ("temporal.build_id", "b42"),
    "model_task_queue": ("worker.model_task_queue", "models-q"),
    "tool_task_queue": ("worker.tool_task_queue", "tools-q"),
    "toolbox_queues": ("worker.toolbox_queues", "crm=crm-q"),
    "serve": ("worker.serve", "workflows"),
    "maintenance_task_queue": ("retention.task_queue", "maint-q"),
    "provider_rate_limits": ("worker.provider_rate_limits", "openai=5"),
    "seal_keys": ("privacy.seal_keys", "k1:c2VhbA=="),
    "payload_keys": ("privacy.payload_keys", "p1:cGF5bG9hZA=="),
    "codec_ui_origins": ("codec.ui_origins", "http://ui:8233"),
    "codec_token": ("codec.token", "codec-secret"),
    "scripted_providers": ("providers.scripted_providers", "scripted,fake"),
    "provider_answer_levels": ("providers.provider_answer_levels", "x=none"),
    "toolboxes": ("worker.toolboxes", "pkg.mod:box"),
    "openai_base_url": ("providers.openai_base_url", "http://llm/v1"),
    "openai_api_key": ("providers.openai_api_key", "sk-test"),
    "metrics_host": ("telemetry.metrics_host", "0.0.0.0"),
    "otlp_endpoint": ("telemetry.otlp_endpoint", "http://otel:4318"),
    "log_format": ("telemetry.log_format", "json"),
    "fault_block_at": ("faults.block_at", "write.before"),
    "fault_fail_at": ("faults.fail_at", "write.after"),
    "codec_allowed_hosts": ("codec.allowed_hosts", "codec.internal"),
    "api_host": ("api.host", "0.0.0.0"),
    "api_public_url": ("api.public_url", "https://agents.example"),
    "api_keys": ("api.keys", "alice=" + "a" * 64),
    "api_agent_name": ("api.agent_name", "support-bot"),
    "api_agent_description": ("api.agent_description", "Helps."),
    "api_default_skill": ("api.default_skill", "helper"),
    "api_key_profiles": ("api.key_profiles", "alice=helper"),
    "api_allowed_hosts": ("api.allowed_hosts", "*.example"),
    "push_allowed_networks": ("push.allowed_networks", "10.0.0.0/8"),
    "push_allowed_hosts": ("push.allowed_hosts", "hooks.internal"),
}
CONVERTED: dict[str, tuple[str, str, Any]] = {
    "start_timeout_seconds": ("temporal.start_timeout_seconds", "12.5", 12.5),
    "max_concurrent_activities": ("worker.max_concurrent_activities", "7", 7),
    "max_concurrent_workflow_tasks": ("worker.max_concurrent_workflow_tasks", "8", 8),
    "graceful_shutdown_seconds": ("worker.graceful_shutdown_seconds", "9", 9.0),
    "retention_finished_days": ("retention.finished_days", "31", 31.0),
    "retention_waiting_days": ("retention.waiting_days", "15", 15.0),
    "retention_every_hours": ("retention.every_hours", "25", 25.0),
    "model_concurrency": ("worker.model_concurrency", "3", 3),
    "tool_concurrency": ("worker.tool_concurrency", "4", 4),
    "metrics_port": ("telemetry.metrics_port", "9100", 9100),
    "temporal_metrics_port": ("telemetry.temporal_metrics_port", "9101", 9101),
    "max_prompt_chars": ("limits.max_prompt_chars", "5000", 5000),
    "max_part_chars": ("limits.max_part_chars", "4000", 4000),
    "api_port": ("api.port", "9090", 9090),
    "api_blocking_cap_seconds": ("api.blocking_cap_seconds", "61", 61.0),
    "api_max_body_bytes": ("api.max_body_bytes", "2048", 2048),
    "api_poll_seconds": ("api.poll_seconds", "0.5", 0.5),
    "api_shutdown_seconds": ("api.shutdown_seconds", "11", 11),
    "push_timeout_seconds": ("push.timeout_seconds", "3", 3.0),
    "push_backoff_seconds": ("push.backoff_seconds", "2", 2.0),
    "push_backoff_max_seconds": ("push.backoff_max_seconds", "100", 100.0),
    "push_max_attempts": ("push.max_attempts", "5", 5),
    "push_client_concurrency": ("push.client_concurrency", "2", 2),
    "push_max_in_flight": ("push.max_in_flight", "32", 32),
    "toolbox_entry_points": ("worker.toolbox_entry_points", "false", False),
    "allow_plaintext_history": ("privacy.allow_plaintext_history", "true", True),
    "api_migrate": ("api.migrate", "false", False),
    "data_dir": ("database.data_dir", "/srv/agentrt", Path("/srv/agentrt")),
    "profiles_file": ("worker.profiles_file", "/etc/a/profiles.yaml", Path("/etc/a/profiles.yaml")),
    "rules_file": ("providers.rules_file", "/etc/a/rules.yaml", Path("/etc/a/rules.yaml")),
    "mcp_servers_file": ("worker.mcp_servers_file", "/etc/a/mcp.yaml", Path("/etc/a/mcp.yaml")),
    "providers_file": ("providers.file", "/etc/a/providers.yaml", Path("/etc/a/providers.yaml")),
    "fault_marker_dir": ("faults.marker_dir", "/tmp/markers", Path("/tmp/markers")),
}
# old name -> (group.field, value set, value read), for both tables
FLAT: dict[str, tuple[str, str, Any]] = {
    **{old: (path, raw, raw) for old, (path, raw) in AS_SET.items()},
    **CONVERTED,
}


def _read(settings: Settings, path: str) -> Any:
    group, field = path.split(".")
    value = getattr(getattr(settings, group), field)
    return value.get_secret_value() if isinstance(value, SecretStr) else value


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No inherited AGENTRT_ variable, and a working directory without a `.env`."""
    for name in [n for n in __import__("os").environ if n.upper().startswith("AGENTRT_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_the_flat_list_is_every_setting_there_was() -> None:
    assert len(FLAT) == 71
    assert len({path for path, _, _ in FLAT.values()}) == 71  # no two names on one field


@pytest.mark.parametrize("old", sorted(FLAT))
def test_every_old_variable_sets_its_grouped_setting(
    clean_env: pytest.MonkeyPatch, old: str
) -> None:
    path, raw, want = FLAT[old]
    default = _read(ApiSettings(), path)
    assert default != want  # the value read is the variable's, not a default
    clean_env.setenv(f"AGENTRT_{old.upper()}", raw)
    assert _read(ApiSettings(), path) == want
    group, field = path.split(".")
    assert env_name(type(getattr(ApiSettings(), group)), field) == f"AGENTRT_{old.upper()}"


def test_all_old_variables_at_once_and_lower_case_too(clean_env: pytest.MonkeyPatch) -> None:
    for old, (_, raw, _) in FLAT.items():
        clean_env.setenv(
            f"agentrt_{old}" if old.startswith("api_") else f"AGENTRT_{old.upper()}", raw
        )
    settings = ApiSettings()
    assert {old: _read(settings, path) for old, (path, _, _) in FLAT.items()} == {
        old: want for old, (_, _, want) in FLAT.items()
    }


def test_a_dotenv_file_in_the_working_directory_is_read(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_text(
        "AGENTRT_TEMPORAL_ADDRESS=from-dotenv:7233\nAGENTRT_API_PORT=9191\n"
        "AGENTRT_DATABASE_URL=sqlite:////dotenv.db\nAGENTRT_MAINTENANCE_TASK_QUEUE=m-q\n"
    )
    clean_env.setenv("AGENTRT_API_PORT", "9292")  # the environment wins over the file
    settings = ApiSettings()
    assert settings.temporal.address == "from-dotenv:7233"
    assert settings.database.url == "sqlite:////dotenv.db"
    assert settings.retention.task_queue == "m-q"
    assert settings.api.port == 9292


def test_unknown_variables_are_ignored_by_the_classes(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The entry points refuse them (tests/core/test_unknown_variables.py); a `Settings()`
    # built in a user's own code, whose environment is theirs, reads only what it knows.
    clean_env.setenv("AGENTRT_NO_SUCH_SETTING", "1")
    clean_env.setenv("AGENTRT_TEMPORAL_NO_SUCH", "1")
    (tmp_path / ".env").write_text("AGENTRT_ALSO_UNKNOWN=1\n")
    assert ApiSettings().temporal.address == "127.0.0.1:7233"


def test_a_group_field_name_is_not_read_as_a_variable(clean_env: pytest.MonkeyPatch) -> None:
    # A field that kept its old variable through an alias answers to that name only.
    clean_env.setenv("AGENTRT_URL", "sqlite:////wrong.db")
    clean_env.setenv("AGENTRT_TEMPORAL_TASK_QUEUE", "wrong")
    settings = Settings()
    assert settings.database.url == "" and settings.temporal.task_queue == "agent-runs"


def test_keywords_win_over_the_environment_and_unknown_ones_are_refused(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("AGENTRT_DATABASE_URL", "sqlite:////env.db")
    clean_env.setenv("AGENTRT_DATA_DIR", "/env-data")
    group = DatabaseSettings(url="sqlite:////kw.db")
    assert (group.url, group.data_dir) == ("sqlite:////kw.db", Path("/env-data"))
    assert Settings(database=group).database.url == "sqlite:////kw.db"
    with pytest.raises(TypeError, match="database_url"):
        DatabaseSettings(database_url="sqlite:////old-name.db")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="database_url"):
        Settings(database_url="sqlite:////flat.db")  # type: ignore[call-arg]


def test_replace_validates_and_refuses_unknown_names(clean_env: pytest.MonkeyPatch) -> None:
    base = ApiSettings()
    moved = base.replace(temporal={"task_queue": "q2"}, privacy={"seal_keys": "k:a2V5"})
    assert moved.temporal.task_queue == "q2" and base.temporal.task_queue == "agent-runs"
    assert isinstance(moved.privacy.seal_keys, SecretStr)
    assert moved.api == base.api  # untouched groups are kept
    with pytest.raises(TypeError, match="taskqueue"):
        base.replace(temporal={"taskqueue": "q"})
    with pytest.raises(TypeError, match="nosuch"):
        base.replace(nosuch={"a": 1})
    with pytest.raises(ValueError, match="greater than 0"):
        base.replace(temporal={"start_timeout_seconds": 0})


def test_the_api_group_keeps_its_helpers(clean_env: pytest.MonkeyPatch) -> None:
    api = ApiServerSettings(host="10.0.0.1", port=81)
    assert api.url() == "http://10.0.0.1:81"
    assert ApiServerSettings(public_url="https://a.example/").url() == "https://a.example"
    digest = "b" * 64
    keyed = ApiServerSettings(keys=f"bob={digest}", key_profiles="bob=helper|x-*")
    assert keyed.callers() == {digest: "bob"}
    assert keyed.grants() == {"bob": frozenset({"helper", "x-*"})}


def test_the_temporal_group_takes_new_fields_under_its_prefix() -> None:
    # Issue 28's TLS settings go here: a new field is AGENTRT_TEMPORAL_<FIELD> by itself.
    class Extended(TemporalSettings):
        tls_cert: str = ""

    assert env_name(Extended, "tls_cert") == "AGENTRT_TEMPORAL_TLS_CERT"
    assert env_name(Extended, "task_queue") == "AGENTRT_TASK_QUEUE"


# --- the Settings page's table ------------------------------------------------------------


def _page_rows() -> dict[str, str]:
    text = SETTINGS_PAGE.read_text()
    rows = re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \| `(AGENTRT_[A-Z_]+)` \|", text, re.M)
    assert len(rows) == len(dict(rows))  # each setting once
    return dict(rows)


def _documented() -> dict[str, str]:
    want = {
        f"{name}.{field}": env_name(group, field)
        for name, group in ApiSettings.groups()
        for field in group.model_fields
    }
    remote: type[BaseSettings] = RemoteSettings
    prefix = remote.model_config.get("env_prefix", "")
    for field in remote.model_fields:
        want[f"remote.{field}"] = f"{prefix}{field}".upper()
    return want


def test_every_setting_is_in_the_settings_page_table_under_its_variable() -> None:
    rows, want = _page_rows(), _documented()
    assert len(want) > 70
    assert {k: rows.get(k) for k in want} == want  # missing or wrong: named here
    assert set(rows) == set(want)  # and no row for a setting that is gone


def test_every_group_is_a_settings_group() -> None:
    groups = dict(ApiSettings.groups())
    assert set(groups) == {
        "temporal", "database", "worker", "providers", "privacy", "codec", "retention",
        "telemetry", "limits", "faults", "api", "push",
    }  # fmt: skip
    assert all(issubclass(g, SettingsGroup) and issubclass(g, BaseModel) for g in groups.values())
    assert set(ApiSettings.model_fields) == set(groups)  # no setting outside a group


def test_a_copy_with_a_flat_name_is_refused_not_silently_set() -> None:
    settings = Settings()
    with pytest.raises(TypeError, match="replace"):
        settings.model_copy(update={"task_queue": "nowhere"})
    moved = settings.model_copy(update={"temporal": settings.temporal.model_copy()})
    assert moved.temporal == settings.temporal
