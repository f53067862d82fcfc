"""Log set-up for the entry points (worker, API, CLI): text, or one JSON object a line.

In JSON, a line from Temporal code (`activity.logger`, `workflow.logger`, a tool's
`ctx.logger`) carries the run as fields: `run_id` (the agent run's uuid, which is its
workflow id), `workflow_id`, `workflow_run_id`, and the activity or workflow type."""

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal

import httpx
from temporalio import activity, workflow

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
_ACTIVITY_FIELDS = ("activity_type", "activity_id", "attempt", "task_queue", "workflow_type")
_WORKFLOW_FIELDS = ("task_queue", "workflow_type", "update_name", "update_id")


def run_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The ids the Temporal loggers put on a record (`temporal_activity`/`_workflow`)."""
    fields: dict[str, Any] = {}
    act = getattr(record, "temporal_activity", None)
    if isinstance(act, dict) and act.get("workflow_id"):
        fields.update(run_id=act["workflow_id"], workflow_id=act["workflow_id"])
        fields["workflow_run_id"] = act.get("workflow_run_id")
        fields.update({k: act[k] for k in _ACTIVITY_FIELDS if act.get(k) is not None})
    wf = getattr(record, "temporal_workflow", None)
    if isinstance(wf, dict) and wf.get("workflow_id"):
        fields.update(run_id=wf["workflow_id"], workflow_id=wf["workflow_id"])
        fields["workflow_run_id"] = wf.get("run_id")
        fields.update({k: wf[k] for k in _WORKFLOW_FIELDS if wf.get(k) is not None})
    return fields


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **run_fields(record),
        }
        if record.exc_info:
            line["exc_type"] = getattr(record.exc_info[0], "__name__", None)
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


class UrlsWithoutSecrets(logging.Filter):
    """The HTTP client's request lines (`httpx` logs `HTTP Request: POST <url> "200 OK"` at
    INFO) with each URL cut to its origin: a webhook's path and query are the client's
    (a Slack-style secret path, `?token=`), and a log is no place for a credential."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(_is_url(a) for a in record.args):
            record.args = tuple(_origin(a) if _is_url(a) else a for a in record.args)
        return True


def _is_url(value: object) -> bool:
    return isinstance(value, httpx.URL) or (
        isinstance(value, str) and value.startswith(("http://", "https://"))
    )


def _origin(value: object) -> str:
    url = value if isinstance(value, httpx.URL) else httpx.URL(str(value))
    port = f":{url.port}" if url.port is not None else ""
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{url.scheme}://{host}{port}/(path withheld)"


HTTP_CLIENT_LOGGERS = ("httpx", "httpcore")


def withhold_urls() -> None:
    """Idempotent: the filter on the HTTP client's loggers, for every handler."""
    for name in HTTP_CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, UrlsWithoutSecrets) for f in logger.filters):
            logger.addFilter(UrlsWithoutSecrets())


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is at the time (as logging's last resort does)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def configure_logging(level: str | int = "INFO", fmt: Literal["text", "json"] = "text") -> None:
    """One handler on stderr in the chosen format. Text, like logging.basicConfig, leaves
    a root logger that already has handlers (an embedding application's) alone; JSON
    replaces only a handler of ours."""
    withhold_urls()
    root = logging.getLogger()
    ours = [h for h in root.handlers if isinstance(h, _Stderr)]
    if fmt == "text" and len(ours) < len(root.handlers):
        return
    for old in ours:
        root.removeHandler(old)
    handler = _Stderr()
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
        # The ids are fields: not also appended to the message as a dict's repr.
        activity.logger.activity_info_on_message = False
        workflow.logger.workflow_info_on_message = False
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    root.addHandler(handler)
    root.setLevel(level)


__all__ = [
    "JsonFormatter",
    "UrlsWithoutSecrets",
    "configure_logging",
    "run_fields",
    "withhold_urls",
]
