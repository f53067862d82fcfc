"""docker-compose.yml and the Dockerfile, checked without Docker (it does not run here):
references resolve, the worker points at the right services, ports are well-formed and
bound to loopback, Temporal is the official server on PostgreSQL (no dev server) with its
schema set up by the admin tools, the search attributes we set are registered, Temporal Web
is the version the demo embeds, every service has a healthcheck and no password has a
default."""

import os
import re
import shutil
import subprocess
import tomllib
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy.engine import make_url

from agentrt.core.devserver import SEARCH_ATTRIBUTES, temporal_cli
from agentrt.core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
CONDITIONS = {"service_started", "service_healthy", "service_completed_successfully"}
_VAR = re.compile(r"\$\{(\w+)(?::?([-?])([^}]*))?\}")
# What a user puts in .env for the variables compose requires (`${NAME:?message}`).
REQUIRED = {
    "POSTGRES_PASSWORD": "superuser-from-dot-env",
    "PG_AGENTRT_PASSWORD": "agentrt-from-dot-env",
    "PG_TEMPORAL_PASSWORD": "temporal-from-dot-env",
    "AGENTRT_PAYLOAD_KEYS": "p1:" + "A" * 43 + "=",
}
INIT_ROLES = ROOT / "deploy" / "postgres" / "init-roles.sh"


def interpolate(value: str) -> str:
    """Compose's interpolation with only REQUIRED set: `${NAME:-default}` gives the default
    (or empty), `${NAME:?message}` must be one of REQUIRED (compose would refuse to start)."""

    def one(m: re.Match[str]) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3)
        if op == "?":
            assert name in REQUIRED, f"{name} is required but not documented as such"
            return REQUIRED[name]
        return REQUIRED.get(name, arg or "")

    return _VAR.sub(one, value)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return doc


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    svcs: dict[str, dict[str, Any]] = compose["services"]
    return svcs


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: interpolate(str(v)) for k, v in env.items()}


def depends_on(service: dict[str, Any]) -> dict[str, str]:
    deps = service.get("depends_on") or {}
    if isinstance(deps, list):
        return dict.fromkeys(deps, "service_started")
    return {name: spec.get("condition", "service_started") for name, spec in deps.items()}


def test_expected_services(services: dict[str, dict[str, Any]]) -> None:
    assert {
        "postgres", "temporal-schema", "temporal", "temporal-setup", "temporal-ui",
        "migrate", "worker", "api",
    } <= set(services)  # fmt: skip
    assert services["postgres"]["image"].startswith("postgres:16")
    for name, svc in services.items():
        if "image" in svc and "build" not in svc:
            _, _, tag = svc["image"].partition(":")
            assert tag and tag != "latest", f"{name}: pin the image version"


def test_depends_on_names_existing_services_with_valid_conditions(
    services: dict[str, dict[str, Any]],
) -> None:
    for name, svc in services.items():
        for dep, condition in depends_on(svc).items():
            assert dep in services, f"{name} depends on unknown service {dep}"
            assert condition in CONDITIONS, f"{name}: bad condition {condition}"
            if condition == "service_healthy":
                assert "healthcheck" in services[dep], f"{name} waits on {dep}'s health"


def test_healthchecks_on_postgres_and_temporal(services: dict[str, dict[str, Any]]) -> None:
    for name in ("postgres", "temporal", "temporal-ui"):
        check = services[name].get("healthcheck")
        assert check and check.get("test"), f"{name} has no healthcheck"
        assert check["test"][0] in {"CMD", "CMD-SHELL"}


def test_worker_points_at_postgres_and_temporal(services: dict[str, dict[str, Any]]) -> None:
    worker = services["worker"]
    env = environment(worker)
    url = make_url(env["AGENTRT_DATABASE_URL"])
    assert url.drivername == "postgresql+psycopg"
    assert url.host in services and services[url.host]["image"].startswith("postgres")
    pg_env = environment(services[url.host])
    # Its own role and database (deploy/postgres/init-roles.sh), never the superuser.
    assert (url.username, url.database) == ("agentrt", "agentrt")
    assert url.username != pg_env["POSTGRES_USER"]
    assert url.password == pg_env["PG_AGENTRT_PASSWORD"] != pg_env["POSTGRES_PASSWORD"]

    host, _, port = env["AGENTRT_TEMPORAL_ADDRESS"].partition(":")
    assert host == "temporal" and host in services
    assert port == "7233"
    # The worker starts once the schema is at head and the namespace and search attributes
    # exist (temporal-setup waited for the server's health itself).
    assert depends_on(worker) == {
        "migrate": "service_completed_successfully",
        "temporal-setup": "service_completed_successfully",
    }
    ui_env = environment(services["temporal-ui"])
    assert ui_env["TEMPORAL_ADDRESS"] == env["AGENTRT_TEMPORAL_ADDRESS"]


def test_no_dev_server_anywhere(services: dict[str, dict[str, Any]]) -> None:
    for name, svc in services.items():
        words = " ".join(str(w) for w in [svc.get("command", ""), svc.get("entrypoint", "")])
        assert "start-dev" not in words, f"{name} runs the Temporal dev server"
        assert not str(svc.get("image", "")).startswith(
            ("temporalio/temporal:", "temporalio/auto-setup:")
        ), f"{name}: the dev-server CLI image or auto-setup, not the server"
    assert "start-dev" not in COMPOSE.read_text().replace("# ", "")


def test_temporal_is_the_official_server_on_postgres(
    services: dict[str, dict[str, Any]],
) -> None:
    temporal = services["temporal"]
    image, _, version = temporal["image"].partition(":")
    assert image == "temporalio/server"
    env = environment(temporal)
    assert env["DB"] == "postgres12"
    assert env["POSTGRES_SEEDS"] in services
    pg = services[env["POSTGRES_SEEDS"]]
    assert pg["image"].startswith("postgres:")
    pg_env = environment(pg)
    # Temporal's own role, neither the superuser nor agentrt's.
    assert env["POSTGRES_USER"] == "temporal" != pg_env["POSTGRES_USER"]
    assert env["POSTGRES_PWD"] == pg_env["PG_TEMPORAL_PASSWORD"]
    assert env["DB_PORT"] == "5432"
    # The schema job: the admin tools of the server's own version, before the server.
    schema = services["temporal-schema"]
    assert schema["image"] == f"temporalio/admin-tools:{version}"
    assert depends_on(temporal) == {"temporal-schema": "service_completed_successfully"}
    assert depends_on(schema) == {env["POSTGRES_SEEDS"]: "service_healthy"}
    assert schema["restart"] == "no"
    schema_env = environment(schema)
    assert schema_env["SQL_HOST"] == env["POSTGRES_SEEDS"]
    assert schema_env["SQL_USER"] == env["POSTGRES_USER"]
    assert schema_env["SQL_PASSWORD"] == env["POSTGRES_PWD"]
    script = mounted_script(schema)
    code = [line for line in script.splitlines() if not line.lstrip().startswith("#")]
    tool_lines = [line for line in code if "temporal-sql-tool" in line]
    assert tool_lines and all("--plugin postgres12" in line for line in tool_lines)
    for verb in ("create-database", "setup-schema", "update-schema"):
        assert re.search(rf"^\s*sql {verb}\b", script, re.M), verb
    # The databases it makes are those the server is told to use.
    for db in (env["DBNAME"], env["VISIBILITY_DBNAME"]):
        assert re.search(rf"\b{db}\b", script.split("for db in", 1)[1].splitlines()[0])
    assert "/etc/temporal/schema/postgresql/v12/temporal/versioned" in script
    assert "/etc/temporal/schema/postgresql/v12/visibility/versioned" in script
    # The dynamic config the server reads is in the mounted folder.
    dynamic = env["DYNAMIC_CONFIG_FILE_PATH"].removeprefix("config/dynamicconfig/")
    (mount,) = [m for m in temporal["volumes"] if ":/etc/temporal/config/dynamicconfig" in m]
    assert yaml.safe_load((COMPOSE.parent / mount.split(":")[0] / dynamic).read_text())


def mounted_script(service: dict[str, Any]) -> str:
    """The shell script a one-shot admin-tools service runs, read from its bind mount."""
    entry = service["entrypoint"]
    assert entry[0] == "/bin/sh", "admin-tools is Alpine: POSIX sh only"
    (mount,) = [m for m in service["volumes"] if m.startswith("./")]
    host, inside = mount.split(":")[:2]
    return (COMPOSE.parent / host / Path(entry[1]).relative_to(inside)).read_text()


def test_the_setup_job_registers_our_namespace_and_search_attributes(
    services: dict[str, dict[str, Any]],
) -> None:
    setup = services["temporal-setup"]
    assert setup["image"].startswith("temporalio/admin-tools:")
    assert depends_on(setup) == {"temporal": "service_healthy"}
    assert setup["restart"] == "no"
    env = environment(setup)
    assert env["TEMPORAL_ADDRESS"] == environment(services["worker"])["AGENTRT_TEMPORAL_ADDRESS"]
    assert (
        env["TEMPORAL_NAMESPACE"] == environment(services["worker"])["AGENTRT_TEMPORAL_NAMESPACE"]
    )
    script = mounted_script(setup)
    (line,) = re.findall(r"^for attribute in (.+); do$", script, re.M)
    assert set(line.split()) == {f"{name}={kind}" for name, kind in SEARCH_ATTRIBUTES.items()}
    assert "temporal operator search-attribute create" in script
    assert "temporal operator namespace create" in script


def test_temporal_web_is_the_version_the_demo_embeds(
    services: dict[str, dict[str, Any]],
) -> None:
    version = subprocess.run(
        [temporal_cli(), "--version"], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    embedded = re.search(r"\bUI (\d+\.\d+\.\d+)", version)
    assert embedded, version
    assert services["temporal-ui"]["image"] == f"temporalio/ui:{embedded.group(1)}"


def test_the_api_serves_the_operator_api_and_the_approvals_page(
    services: dict[str, dict[str, Any]],
) -> None:
    api = services["api"]
    assert api["command"] == ["agentrt-api", "serve"]
    probe = " ".join(api["healthcheck"]["test"])
    assert "/healthz" in probe  # open past the Host check and the A2A key guard
    text = COMPOSE.read_text()
    assert "/ui/" in text and "agentrt-api token create" in text


def test_ports_are_well_formed_and_loopback_only(services: dict[str, dict[str, Any]]) -> None:
    seen: set[int] = set()
    for name, svc in services.items():
        for entry in svc.get("ports", []):
            assert isinstance(entry, str), f"{name}: use the short 'ip:host:container' form"
            m = re.fullmatch(r"(?:(\d+\.\d+\.\d+\.\d+):)?(\d+):(\d+)(?:/(tcp|udp))?", entry)
            assert m, f"{name}: malformed port mapping {entry!r}"
            ip, host, container = m.group(1), int(m.group(2)), int(m.group(3))
            assert ip == "127.0.0.1", f"{name}: publish on loopback only, not {entry!r}"
            assert 1 <= host <= 65535 and 1 <= container <= 65535
            assert host not in seen, f"host port {host} published twice"
            seen.add(host)


def test_worker_builds_from_a_dockerfile_that_installs_the_package(
    services: dict[str, dict[str, Any]],
) -> None:
    builders = [svc for svc in services.values() if "build" in svc]
    assert len(builders) == 1, "one service builds the image, the others reuse its tag"
    build = builders[0]["build"]
    assert {
        svc["image"] for svc in services.values() if svc.get("image", "").startswith("agentrt:")
    } == {builders[0]["image"]}
    context = COMPOSE.parent / build.get("context", ".")
    dockerfile = context / build.get("dockerfile", "Dockerfile")
    assert dockerfile.is_file()
    text = dockerfile.read_text()
    assert re.search(r"^FROM python:3\.11-slim\b", text, re.M)
    assert re.search(r"^RUN pip install (--compile )?\.", text, re.M)
    assert re.search(r'^CMD \["agentrt-worker"\]', text, re.M)
    # Every folder pyproject maps into the package is copied into the build context of the
    # image, with the two files that build it.
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    folders = set(pyproject["tool"]["setuptools"]["package-dir"].values())
    copied = {
        source.rstrip("/")
        for sources in re.findall(r"^COPY (.+) \S+$", text, re.M)
        for source in sources.split()
    }
    assert folders <= copied, f"Dockerfile misses {folders - copied}"
    assert {"pyproject.toml", "setup.py"} <= copied


def test_the_image_carries_compiled_bytecode() -> None:
    """PYTHONDONTWRITEBYTECODE=1 keeps Python from writing .pyc at run time, so the build
    must compile the installed package, after installing it and before /src goes."""
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^ENV PYTHONDONTWRITEBYTECODE=1", text, re.M)
    # One RUN instruction, continuation lines joined.
    runs = [r.replace("\\\n", " ") for r in re.findall(r"^RUN (.*?)(?<!\\)$", text, re.M | re.S)]
    install = next(r for r in runs if "pip install" in r)
    assert "--compile" in install
    steps = [s.strip() for s in install.split("&&")]
    compile_at = next(i for i, s in enumerate(steps) if "compileall" in s)
    assert "agentrt" in steps[compile_at], "compileall must target the installed package"
    assert steps.index(next(s for s in steps if s.startswith("pip install"))) < compile_at
    assert compile_at < steps.index(next(s for s in steps if s.startswith("rm -rf /src")))


def test_named_volumes_are_declared(compose: dict[str, Any]) -> None:
    declared = set(compose.get("volumes") or {})
    for name, svc in compose["services"].items():
        for mount in svc.get("volumes", []):
            source = mount.split(":", 1)[0]
            if not source.startswith((".", "/")):
                assert source in declared, f"{name} mounts undeclared volume {source}"


def test_the_a2a_server_runs_from_the_same_image_with_the_workers_seal_key(
    services: dict[str, dict[str, Any]],
) -> None:
    api, worker = services["api"], services["worker"]
    assert api["image"] == worker["image"]
    assert api["command"][0] == "agentrt-api"
    assert "worker" in api["depends_on"]
    assert (
        api["environment"]["AGENTRT_DATABASE_URL"] == worker["environment"]["AGENTRT_DATABASE_URL"]
    )
    assert set(api["volumes"]) & set(worker["volumes"])  # the generated seal key is shared
    assert api["environment"]["AGENTRT_API_HOST"] == "0.0.0.0"  # inside its container


def test_every_long_running_service_has_a_healthcheck(
    services: dict[str, dict[str, Any]],
) -> None:
    for name, svc in services.items():
        if svc.get("restart") == "no":
            # A one-shot (migrate, the Temporal schema and setup jobs) exits: its check is
            # its exit status, which a service that needs it waits for.
            waiters = [n for n, s in services.items() if depends_on(s).get(name)]
            assert waiters, f"one-shot {name}: nothing waits for it"
            for waiter in waiters:
                assert depends_on(services[waiter])[name] == "service_completed_successfully"
            continue
        check = svc.get("healthcheck")
        assert check and check.get("test"), f"{name} has no healthcheck"
        assert check["test"][0] in {"CMD", "CMD-SHELL"}, name
        assert check.get("interval") and check.get("retries"), name


def test_a_one_shot_migrate_service_runs_before_every_database_user(
    services: dict[str, dict[str, Any]],
) -> None:
    migrate = services["migrate"]
    assert migrate["command"] == ["agentrt", "migrate"]
    assert migrate["restart"] == "no"
    assert depends_on(migrate) == {"postgres": "service_healthy"}
    for name, svc in services.items():
        if name != "migrate" and "AGENTRT_DATABASE_URL" in environment(svc):
            assert depends_on(svc).get("migrate") == "service_completed_successfully", name
            assert (
                environment(svc)["AGENTRT_DATABASE_URL"]
                == environment(migrate)["AGENTRT_DATABASE_URL"]
            )


SECRET_NAMES = re.compile(r"PASSWORD|PWD|SECRET|TOKEN")


def test_no_silent_default_password(services: dict[str, dict[str, Any]]) -> None:
    text = COMPOSE.read_text()
    for m in _VAR.finditer(text):
        if "PASSWORD" in m.group(1) or "KEY" in m.group(1):
            assert m.group(2) != "-" or not m.group(3), f"{m.group(0)}: a secret with a default"
    assert "POSTGRES_PASSWORD:?" in text
    # Every password a service is given, or carries in a URL, is a required variable: no
    # literal anywhere (the file is in the repository; a default would be everyone's).
    for name, svc in services.items():
        for key, raw in (svc.get("environment") or {}).items():
            raw = str(raw)
            if SECRET_NAMES.search(key) and raw:
                assert re.fullmatch(r"\$\{\w+:\?[^}]*\}", raw), f"{name}.{key}: {raw!r}"
            if "://" in raw and "@" in raw:
                password = make_url(raw).password
                assert password is None or re.search(r"\$\{\w+:\?", raw), f"{name}.{key}"


def test_dockerignore_keeps_local_state_and_secrets_out_of_the_image() -> None:
    ignored = {
        line.strip().rstrip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".venv", ".agentrt", ".git", ".env"} <= ignored


def test_each_system_has_its_own_database_role_made_by_the_init_script(
    services: dict[str, dict[str, Any]],
) -> None:
    """Issue 41, L11: one PostgreSQL superuser owned both the agentrt and the Temporal
    databases on cf842b3. The postgres service now runs deploy/postgres/init-roles.sh on
    its first start, and every service connects as the role of its system."""
    pg = services["postgres"]
    assert "./deploy/postgres:/docker-entrypoint-initdb.d:ro" in pg["volumes"]
    assert "-h 127.0.0.1" in " ".join(pg["healthcheck"]["test"])  # ready after the init
    users = {
        "worker": make_url(environment(services["worker"])["AGENTRT_DATABASE_URL"]).username,
        "api": make_url(environment(services["api"])["AGENTRT_DATABASE_URL"]).username,
        "migrate": make_url(environment(services["migrate"])["AGENTRT_DATABASE_URL"]).username,
        "temporal": environment(services["temporal"])["POSTGRES_USER"],
        "temporal-schema": environment(services["temporal-schema"])["SQL_USER"],
    }
    assert users == {"worker": "agentrt", "api": "agentrt", "migrate": "agentrt",
                     "temporal": "temporal", "temporal-schema": "temporal"}  # fmt: skip
    passwords = {environment(pg)[n] for n in ("POSTGRES_PASSWORD", "PG_AGENTRT_PASSWORD",
                                              "PG_TEMPORAL_PASSWORD")}  # fmt: skip
    assert len(passwords) == 3, "three secrets, none shared"
    assert "PG_AGENTRT_PASSWORD" in INIT_ROLES.read_text()


PG = make_url(Settings().database.postgres_dsn)  # the PostgreSQL the tests use


def _psql(sql: str, *, user: str | None = None, database: str | None = None) -> str:
    """`sql` through psql on the tests' PostgreSQL (trust auth), as `user` in `database`;
    its output, or the error it gave."""
    done = subprocess.run(
        ["psql", "-h", PG.host or "127.0.0.1", "-p", str(PG.port or 5432),
         "-U", user or PG.username or "postgres", "-d", database or PG.database or "postgres",
         "-v", "ON_ERROR_STOP=1", "-tAc", sql],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    return done.stdout.strip() if done.returncode == 0 else f"ERROR: {done.stderr.strip()}"


@pytest.mark.skipif(shutil.which("psql") is None, reason="psql is not installed")
def test_the_init_script_makes_roles_that_reach_only_their_own_databases() -> None:
    """The script itself, run as the postgres image runs it, against the PostgreSQL the
    tests use (names of this test only): two roles, not superusers, unable to create
    databases or roles, each connecting to its own databases and refused the other's."""
    tag = uuid.uuid4().hex[:8]
    agentrt, temporal = f"t_agentrt_{tag}", f"t_temporal_{tag}"
    own = {agentrt: [f"t_agentrt_{tag}"], temporal: [f"t_temporal_{tag}", f"t_vis_{tag}"]}
    names = {
        "PG_AGENTRT_ROLE": agentrt, "PG_AGENTRT_DB": own[agentrt][0],
        "PG_TEMPORAL_ROLE": temporal, "PG_TEMPORAL_DB": own[temporal][0],
        "PG_VISIBILITY_DB": own[temporal][1],
    }  # fmt: skip
    env = {**os.environ, **names, "PG_AGENTRT_PASSWORD": "a-pw", "PG_TEMPORAL_PASSWORD": "t-pw",
           "POSTGRES_USER": PG.username or "postgres", "PGHOST": PG.host or "127.0.0.1",
           "PGPORT": str(PG.port or 5432)}  # fmt: skip
    try:
        made = subprocess.run(
            ["sh", str(INIT_ROLES)], env=env, capture_output=True, text=True, timeout=60,
            check=False,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
        assert "a-pw" not in made.stdout + made.stderr
        for role, databases in own.items():
            flags = _psql(
                "select rolsuper, rolcreatedb, rolcreaterole from pg_roles "
                f"where rolname = '{role}'"
            )
            assert flags == "f|f|f", (role, flags)
            for db in databases:  # its own: it connects, and makes tables there
                made_table = _psql("create table t (i int); select 'made'", user=role, database=db)
                assert made_table.endswith("made"), (role, db, made_table)
            for db in [d for r, dbs in own.items() if r != role for d in dbs]:
                refused = _psql("select 1", user=role, database=db)
                assert "does not have CONNECT privilege" in refused, (role, db, refused)
    finally:
        for db in [d for dbs in own.values() for d in dbs]:
            _psql(f'drop database if exists "{db}"')
        for role in own:
            _psql(f'drop role if exists "{role}"')


def test_payload_keys_are_required_and_temporal_web_decodes_through_the_signed_in_codec(
    services: dict[str, dict[str, Any]],
) -> None:
    """Issue 40 (7): on cf842b3 compose set no payload keys and ran no codec, so Temporal
    held prompts in the clear. Every agentrt process now has the same keys (compose refuses
    to start without them), and Temporal Web decodes through the API's sign-in codec."""
    text = COMPOSE.read_text()
    assert "${AGENTRT_PAYLOAD_KEYS:?" in text
    keys = {environment(services[n]).get("AGENTRT_PAYLOAD_KEYS") for n in ("worker", "api")}
    assert keys == {REQUIRED["AGENTRT_PAYLOAD_KEYS"]}
    ui, api = environment(services["temporal-ui"]), environment(services["api"])
    api_url = api["AGENTRT_API_PUBLIC_URL"]
    assert ui["TEMPORAL_CODEC_ENDPOINT"] == f"{api_url}/codec"
    assert ui["TEMPORAL_CODEC_INCLUDE_CREDENTIALS"] == "true"
    (ui_port,) = services["temporal-ui"]["ports"]
    ui_origin = "http://" + ui_port.rsplit(":", 1)[0]
    assert api["AGENTRT_CODEC_UI_ORIGINS"] == ui_origin
    # The same site (one host, two ports): the session cookie (SameSite=Strict) reaches
    # the codec from Temporal Web.
    assert make_url(api_url.replace("http", "postgresql", 1)).host == "127.0.0.1"
    assert ui_origin.startswith("http://127.0.0.1:")
