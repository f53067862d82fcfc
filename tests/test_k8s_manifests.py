"""deploy/k8s, checked without a cluster (Kubernetes does not run here): every object
validates against the Kubernetes schemas kubernetes-validate bundles (strict: an unknown
field is an error), the KEDA ScaledObject against the schema in deploy/k8s/schemas, and the
pieces agree with each other and with the code: every AGENTRT_* name is a real setting,
the scaler watches the queue the workers poll, the pod's grace period outlasts the worker's
drain, and no secret has a value in the files.

That the worker does drain on SIGTERM (stops polling, lets in-flight work finish, exits 0)
is tests/workers/test_worker_process.py::test_sigterm_drains_and_exits_cleanly_after_serving_a_run;
the drain's bound is WorkerSettings.graceful_shutdown_seconds (workers/fleet.py)."""

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from kubernetes_validate import utils as kv

from agentrt.api.settings import ApiSettings
from agentrt.core.settings import TemporalSettings, WorkerSettings, env_name
from agentrt.core.temporal_tls import temporal_access
from tests._tls import TestCA

ROOT = Path(__file__).resolve().parent.parent
K8S = ROOT / "deploy" / "k8s"
KUBERNETES_VERSION = "1.30.0"  # the oldest minor the manifests promise to work on
KEDA_SCHEMA = json.loads((K8S / "schemas" / "keda-scaledobject.schema.json").read_text())
KEDA_SCHEMAS = {
    "ScaledObject": KEDA_SCHEMA,
    "TriggerAuthentication": json.loads(
        (K8S / "schemas" / "keda-triggerauthentication.schema.json").read_text()
    ),
}
SECRETS = re.compile(r"PASSWORD|_KEYS$|_KEY$|TOKEN|DATABASE_URL")
# Settings that name a file of a mounted Secret, not a secret themselves.
SECRET_FILES = {"AGENTRT_TEMPORAL_TLS_KEY"}
TLS_SECRET = "agentrt-temporal-tls"


def documents() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(K8S.glob("*.yaml")):
        out += [(path.name, doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return out


def one(kind: str, name: str) -> dict[str, Any]:
    (found,) = [d for _, d in documents() if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def known_env_names() -> set[str]:
    return {
        env_name(group, field) for _, group in ApiSettings.groups() for field in group.model_fields
    }


def container_env(pod: dict[str, Any]) -> dict[str, Any]:
    """A container's environment: its ConfigMap's data under its own entries."""
    (container,) = pod["containers"]
    env: dict[str, Any] = {}
    for source in container.get("envFrom", []):
        env.update(one("ConfigMap", source["configMapRef"]["name"])["data"])
    for entry in container.get("env", []):
        env[entry["name"]] = entry.get("value", entry.get("valueFrom"))
    return env


@pytest.mark.parametrize(
    ("file", "doc"), documents(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_object_validates(file: str, doc: dict[str, Any]) -> None:
    if doc["apiVersion"].startswith("keda.sh/"):
        jsonschema.Draft202012Validator(KEDA_SCHEMAS[doc["kind"]]).validate(doc)
    else:
        kv.validate(doc, KUBERNETES_VERSION, strict=True)


def test_the_validators_refuse_a_broken_object() -> None:
    """Both validators really check: a misspelt field and a wrong type are refused."""
    worker = json.loads(json.dumps(one("Deployment", "agentrt-worker")))
    worker["spec"]["template"]["spec"]["terminationGracePeriod"] = 45
    with pytest.raises(kv.ValidationError):
        kv.validate(worker, KUBERNETES_VERSION, strict=True)
    scaled = json.loads(json.dumps(one("ScaledObject", "agentrt-worker")))
    scaled["spec"]["triggers"][0]["metadata"]["taskqueue"] = "agent-runs"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(KEDA_SCHEMA).validate(scaled)
    scaled = json.loads(json.dumps(one("ScaledObject", "agentrt-worker")))
    scaled["spec"]["maxReplicaCount"] = "20"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(KEDA_SCHEMA).validate(scaled)
    auth = json.loads(json.dumps(one("TriggerAuthentication", "agentrt-temporal")))
    auth["spec"]["secretTargetRef"][0]["parameter"] = "certificate"  # not the scaler's
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(KEDA_SCHEMAS["TriggerAuthentication"]).validate(auth)
    policy = json.loads(json.dumps(one("NetworkPolicy", "agentrt-worker")))
    policy["spec"]["policyType"] = ["Egress"]  # misspelt: the pods would stay open
    with pytest.raises(kv.ValidationError):
        kv.validate(policy, KUBERNETES_VERSION, strict=True)


def test_the_schemas_come_bundled() -> None:
    """Offline after pip install: the schemas are files inside the package."""
    assert KUBERNETES_VERSION in kv.all_versions()
    assert Path(kv.__file__).parent.joinpath("kubernetes-json-schema").is_dir()


def test_every_agentrt_name_is_a_setting_and_no_secret_has_a_value() -> None:
    known = known_env_names()
    for _, doc in documents():
        if doc["kind"] == "ConfigMap":
            for name in doc["data"]:
                assert name in known, f"ConfigMap {doc['metadata']['name']}: {name} is no setting"
                if name not in SECRET_FILES:
                    assert not SECRETS.search(name), f"{name} is a secret: put it in the Secret"
        pod = _pod(doc)
        if pod is None:
            continue
        for container in pod["containers"]:
            for entry in container.get("env", []):
                assert entry["name"] in known, f"{entry['name']} is no setting"
                if SECRETS.search(entry["name"]):
                    assert "value" not in entry, f"{entry['name']}: a literal secret"
                    assert entry["valueFrom"]["secretKeyRef"]["name"] == "agentrt-secrets"
    assert not [d for _, d in documents() if d["kind"] == "Secret"], "ship no Secret values"


def _pod(doc: dict[str, Any]) -> dict[str, Any] | None:
    if doc["kind"] in ("Deployment", "Job"):
        spec: dict[str, Any] = doc["spec"]["template"]["spec"]
        return spec
    return None


def test_keda_scales_the_worker_deployment_on_the_queue_it_polls() -> None:
    scaled = one("ScaledObject", "agentrt-worker")
    target = scaled["spec"]["scaleTargetRef"]
    worker = one(target.get("kind", "Deployment"), target["name"])
    env = container_env(worker["spec"]["template"]["spec"])
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "temporal"
    meta = trigger["metadata"]
    assert meta["taskQueue"] == env["AGENTRT_TASK_QUEUE"]
    assert meta["namespace"] == env["AGENTRT_TEMPORAL_NAMESPACE"]
    assert meta["endpoint"] == env["AGENTRT_TEMPORAL_ADDRESS"]
    assert set(meta["queueTypes"].split(",")) == {"workflow", "activity"}
    # A start waits for a worker to begin the run: never scaled to zero.
    assert scaled["spec"]["minReplicaCount"] >= 1
    assert scaled["spec"]["maxReplicaCount"] > scaled["spec"]["minReplicaCount"]


def test_the_worker_drains_inside_its_grace_period(monkeypatch: pytest.MonkeyPatch) -> None:
    worker = one("Deployment", "agentrt-worker")
    pod = worker["spec"]["template"]["spec"]
    env = container_env(pod)
    drain_name = env_name(WorkerSettings, "graceful_shutdown_seconds")
    # What the worker reads, read the way it reads it: from its environment.
    monkeypatch.setenv(drain_name, env[drain_name])
    drain = WorkerSettings(_env_file=None).graceful_shutdown_seconds
    assert drain == float(env[drain_name]) > 0
    grace = pod["terminationGracePeriodSeconds"]
    assert grace >= drain + 10, "the drain, then process exit, must fit before SIGKILL"
    (container,) = pod["containers"]
    # SIGTERM reaches agentrt-worker itself (no shell in between, no preStop sleep eating
    # the grace period).
    assert container["command"] == ["agentrt-worker"]
    assert "lifecycle" not in container
    # Liveness does not ask Temporal: an outage must not restart the whole fleet.
    assert "exec" not in container["livenessProbe"]
    assert container["readinessProbe"]["exec"]["command"] == ["agentrt-worker", "--check"]


def test_the_api_serves_its_probes_and_the_same_secrets() -> None:
    api = one("Deployment", "agentrt-api")
    pod = api["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["agentrt-api", "serve"]
    env = container_env(pod)
    assert env["AGENTRT_API_HOST"] == "0.0.0.0"
    port = int(env["AGENTRT_API_PORT"])
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["http"] == port
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz"
    worker_env = container_env(one("Deployment", "agentrt-worker")["spec"]["template"]["spec"])
    for name in ("AGENTRT_DATABASE_URL", "AGENTRT_SEAL_KEYS", "AGENTRT_PAYLOAD_KEYS"):
        assert env[name] == worker_env[name], f"{name}: the API reads what the workers seal"
    service = one("Service", "agentrt-api")
    assert service["spec"]["selector"] == api["spec"]["selector"]["matchLabels"]


def test_every_pod_runs_as_the_images_user_without_privileges() -> None:
    uid = re.search(r"useradd .*--uid (\d+)", (ROOT / "Dockerfile").read_text())
    assert uid
    for _, doc in documents():
        pod = _pod(doc)
        if pod is None:
            continue
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] == int(uid.group(1))
        for container in pod["containers"]:
            assert container["securityContext"]["allowPrivilegeEscalation"] is False
            assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]


def _pods() -> list[tuple[str, dict[str, Any]]]:
    return [(d["metadata"]["name"], pod) for _, d in documents() if (pod := _pod(d)) is not None]


def test_every_pod_is_hardened() -> None:
    """Issue 41, L11: a read-only root filesystem (scratch on an in-memory /tmp), the
    runtime's seccomp profile, and no service account token (agentrt never calls the
    Kubernetes API)."""
    pods = _pods()
    assert {name for name, _ in pods} == {"agentrt-worker", "agentrt-api", "agentrt-migrate"}
    for name, pod in pods:
        assert pod["automountServiceAccountToken"] is False, name
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
        volumes = {v["name"]: v for v in pod["volumes"]}
        for container in pod["containers"]:
            assert container["securityContext"]["readOnlyRootFilesystem"] is True, name
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            assert "emptyDir" in volumes[mounts["/tmp"]], f"{name}: /tmp must be writable"


def _selects(policy: dict[str, Any], labels: dict[str, str]) -> bool:
    wanted = policy["spec"]["podSelector"].get("matchLabels", {})
    return all(labels.get(k) == v for k, v in wanted.items())


def _egress_ports(policy: dict[str, Any]) -> set[int]:
    return {p["port"] for rule in policy["spec"].get("egress", []) for p in rule.get("ports", [])}


def test_a_network_policy_fences_every_pod_both_ways() -> None:
    policies = [d for _, d in documents() if d["kind"] == "NetworkPolicy"]
    for _, doc in documents():
        pod = _pod(doc)
        if pod is None:
            continue
        name, labels = doc["metadata"]["name"], doc["spec"]["template"]["metadata"]["labels"]
        (policy,) = [p for p in policies if _selects(p, labels)]
        assert set(policy["spec"]["policyTypes"]) == {"Ingress", "Egress"}, name
        env = container_env(pod)
        ports = _egress_ports(policy)
        assert 53 in ports and 5432 in ports, f"{name}: DNS and PostgreSQL"
        talks_to_temporal = "temporal-tls" in {v["name"] for v in pod["volumes"]}
        temporal_port = int(env["AGENTRT_TEMPORAL_ADDRESS"].rpartition(":")[2])
        assert (temporal_port in ports) is talks_to_temporal, name
        if name == "agentrt-migrate":
            assert ports == {53, 5432} and policy["spec"]["ingress"] == []
    api = one("Deployment", "agentrt-api")["spec"]["template"]["spec"]
    (api_policy,) = [p for p in policies if p["metadata"]["name"] == "agentrt-api"]
    served = {p["port"] for rule in api_policy["spec"]["ingress"] for p in rule["ports"]}
    assert int(container_env(api)["AGENTRT_API_PORT"]) in served


def test_temporal_tls_and_the_api_key_come_from_secrets_and_are_read_as_written(
    tmp_path: Path,
) -> None:
    """The worker and the API reach Temporal with the files of the Secret
    agentrt-temporal-tls, mounted read-only where the settings point, and the API key from
    agentrt-secrets; KEDA's scaler with the same Secret. The settings, read as the worker
    reads them with certificates made here in place of the Secret's, check out."""
    ca = TestCA()
    files = {"ca.crt": ca.pem}
    client = ca.issue("worker-1", client=True)
    files["tls.crt"], files["tls.key"] = client.cert, client.key
    for path, text in files.items():
        (tmp_path / path).write_text(text)
    for name in ("agentrt-worker", "agentrt-api"):
        pod = one("Deployment", name)["spec"]["template"]["spec"]
        (volume,) = [
            v for v in pod["volumes"] if v.get("secret", {}).get("secretName") == TLS_SECRET
        ]
        (container,) = pod["containers"]
        (mount,) = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
        assert mount["readOnly"] is True
        env = container_env(pod)
        api_key = env["AGENTRT_TEMPORAL_API_KEY"]["secretKeyRef"]
        assert api_key == {"name": "agentrt-secrets", "key": "temporal-api-key", "optional": True}
        read: dict[str, str] = {}
        for setting in ("tls_ca", "tls_cert", "tls_key"):
            path = Path(env[f"AGENTRT_TEMPORAL_{setting.upper()}"])
            assert path.parent == Path(mount["mountPath"]) and path.name in files, path
            read[setting] = str(tmp_path / path.name)
        settings = TemporalSettings(
            _env_file=None, address=env["AGENTRT_TEMPORAL_ADDRESS"],
            tls_server_name=env["AGENTRT_TEMPORAL_TLS_SERVER_NAME"], **read,
        )  # fmt: skip
        access = temporal_access(settings)
        assert access.has_client_cert and access.uses_tls
    trigger_auth = one("TriggerAuthentication", "agentrt-temporal")
    refs = {r["parameter"]: r for r in trigger_auth["spec"]["secretTargetRef"]}
    assert {p: (r["name"], r["key"]) for p, r in refs.items()} == {
        "ca": (TLS_SECRET, "ca.crt"),
        "cert": (TLS_SECRET, "tls.crt"),
        "key": (TLS_SECRET, "tls.key"),
    }
    (trigger,) = one("ScaledObject", "agentrt-worker")["spec"]["triggers"]
    assert trigger["authenticationRef"]["name"] == "agentrt-temporal"
    worker_env = container_env(one("Deployment", "agentrt-worker")["spec"]["template"]["spec"])
    assert trigger["metadata"]["tlsServerName"] == worker_env["AGENTRT_TEMPORAL_TLS_SERVER_NAME"]
