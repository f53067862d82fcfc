"""Settings, read only in entry points (worker, CLI, API, Alembic env) and passed down."""

import base64
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from agentrt.contracts.errors import ConfigError
from agentrt.core.private import FILE_MODE, private_dir, tighten
from agentrt.core.settings_base import SettingsGroup, env_name
from agentrt.core.settings_process import (
    DEFAULT_DATA_DIR,
    DEFAULT_POSTGRES_DSN,
    SERVE_ROLES,
    DatabaseSettings,
    FaultSettings,
    TelemetrySettings,
    TemporalSettings,
    WorkerSettings,
)
from agentrt.core.settings_runs import (
    CodecSettings,
    LimitSettings,
    PrivacySettings,
    ProviderSettings,
    RetentionSettings,
)

__all__ = [
    "DEFAULT_DATA_DIR",
    "DEFAULT_POSTGRES_DSN",
    "SERVE_ROLES",
    "CodecSettings",
    "DatabaseSettings",
    "FaultSettings",
    "LimitSettings",
    "PrivacySettings",
    "ProviderSettings",
    "RetentionSettings",
    "Settings",
    "SettingsGroup",
    "TelemetrySettings",
    "TemporalSettings",
    "WorkerSettings",
    "env_name",
]


class Settings(BaseModel):
    """Every setting, by group (core/settings_process.py, core/settings_runs.py).
    `Settings()` reads the environment and `.env`; `Settings(database=DatabaseSettings(
    url=...))` sets one group and reads the others."""

    # A keyword no group has is a mistake (a flat name from before the grouping, say).
    model_config = ConfigDict(extra="forbid")

    temporal: TemporalSettings = Field(default_factory=TemporalSettings)
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    providers: ProviderSettings = Field(default_factory=ProviderSettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)
    codec: CodecSettings = Field(default_factory=CodecSettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    faults: FaultSettings = Field(default_factory=FaultSettings)

    @classmethod
    def groups(cls) -> Iterator[tuple[str, type[SettingsGroup]]]:
        """(attribute, group class) for each group, in declaration order."""
        for name, field in cls.model_fields.items():
            if isinstance(field.annotation, type) and issubclass(field.annotation, SettingsGroup):
                yield name, field.annotation

    def replace(self, **groups: Mapping[str, Any]) -> Self:
        """A copy with some fields of some groups changed:
        `settings.replace(temporal={"task_queue": q}, database={"url": u})`. Values are
        validated: `privacy={"seal_keys": "k:..."}` becomes a SecretStr."""
        update: dict[str, Any] = {}
        for name, fields in groups.items():
            group = getattr(self, name, None)
            if not isinstance(group, SettingsGroup):
                raise TypeError(f"{type(self).__name__} has no settings group {name!r}")
            # Built anew (not model_copy's as-is), so a value is checked and converted as if
            # it came from the environment; every field is given, so none is read from it.
            current = {k: getattr(group, k) for k in type(group).model_fields}
            update[name] = type(group)(**(current | dict(fields)))
        return super().model_copy(update=update)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """Pydantic's copy sets any attribute it is given, unchecked: a flat name from before
        the grouping (`task_queue`) would be set and read by nobody. Only groups pass."""
        unknown = sorted(set(update or {}) - set(type(self).model_fields))
        if unknown:
            raise TypeError(f"{type(self).__name__} has no settings group {unknown}; use replace()")
        return super().model_copy(update=update, deep=deep)

    # The key files live under the data directory, so these read two groups (privacy and
    # database) and stay here.

    def payload_keys_spec(self) -> str | None:
        """The configured payload keys, else the key file `agentrt demo` generated under
        data_dir (so every process of the embedded default shares them), else None."""
        if self.privacy.payload_keys is not None:
            return self.privacy.payload_keys.get_secret_value()
        path = self.payload_key_file()
        try:
            return path.read_text().strip() or None
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ConfigError(f"cannot read the payload key {path.resolve()}: {exc}") from None

    def payload_key_file(self) -> Path:
        """Where `agentrt demo` keeps the payload key it generated: under data_dir."""
        return self.database.data_dir / "payload.key"

    def create_payload_key_if_missing(self) -> str:
        """For the embedded default (`agentrt demo`): the configured payload keys, else the
        key file under data_dir, generated on first use like the seal key."""
        if self.privacy.payload_keys is not None:
            return self.privacy.payload_keys.get_secret_value()
        _create_key_file(self.payload_key_file())
        spec = self.payload_keys_spec()
        if spec is None:
            raise ConfigError(f"the payload key file {self.payload_key_file().resolve()} is empty")
        return spec

    def seal_key_file(self) -> Path:
        """Where the worker keeps a generated key when AGENTRT_SEAL_KEYS is not set."""
        return self.database.data_dir / "seal.key"

    def read_seal_keys(self) -> str:
        """The configured seal keys, else the key file under data_dir. Reads only: a client
        must open what the worker sealed, so a key it made up here would be useless."""
        if self.privacy.seal_keys is not None:
            return self.privacy.seal_keys.get_secret_value()
        path = self.seal_key_file()
        try:
            spec = path.read_text().strip()
        except FileNotFoundError:
            raise ConfigError(
                f"no seal key: set AGENTRT_SEAL_KEYS, or AGENTRT_DATA_DIR to the worker's data "
                f"directory (there is no {path.resolve()})"
            ) from None
        except OSError as exc:
            raise ConfigError(f"cannot read the seal key {path.resolve()}: {exc}") from None
        if not spec:
            raise ConfigError(f"the seal key file {path.resolve()} is empty")
        return spec

    def create_seal_key_if_missing(self) -> str:
        """For the processes that own the data (the worker, `migrate`, the demo): the
        configured keys, else the key file under data_dir, generated on first use. Two
        processes starting at once agree on one key: the file appears whole or not at all."""
        data_dir = self.database.data_dir
        if data_dir.is_dir():
            private_dir(data_dir)  # one made before the 0700 rule is tightened at start
        if self.privacy.seal_keys is not None:
            return self.privacy.seal_keys.get_secret_value()
        path = self.seal_key_file()
        _create_key_file(path)
        tighten(path, FILE_MODE)  # a key file made before the 0600 rule
        return self.read_seal_keys()


def _create_key_file(path: Path) -> None:
    """A new random 32-byte key as `local:<base64>` at `path`, unless one is there. Two
    processes starting at once agree on one key: the file appears whole or not at all."""
    if path.exists():
        return
    private_dir(path.parent)
    draft = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(f"local:{base64.b64encode(os.urandom(32)).decode()}\n")
    try:
        os.link(draft, path)  # fails if another process linked its key first
    except FileExistsError:
        pass
    finally:
        draft.unlink()
