"""`agentrt --api URL schedules ...`: schedules of runs through the operator API
(`/schedules`), as the token's principal, who is then the creator (no --initiator or --by:
the API names who acts). The same methods as RunSchedules (starter/scheduling.py)."""

from datetime import datetime
from urllib.parse import quote

from agentrt.contracts.errors import InvalidRequestError
from agentrt.contracts.schedules import ScheduleRequest, ScheduleView
from agentrt.starter.remote import ApiRuntime


def _path(name: str, verb: str = "") -> str:
    return f"/schedules/{quote(name, safe='')}" + (f"/{verb}" if verb else "")


def _by_token(who: str) -> None:
    if who:
        raise InvalidRequestError("through the API the token's principal acts (no --initiator)")


class ApiSchedules:
    """Schedules of runs over `api` (an `agentrt --api` session)."""

    def __init__(self, api: ApiRuntime) -> None:
        self._api = api

    async def create(self, request: ScheduleRequest, *, created_by: str) -> ScheduleView:
        _by_token(created_by)
        body = request.model_dump(mode="json", exclude_none=True)
        return ScheduleView.model_validate(await self._api.call("POST", "/schedules", json=body))

    async def list(self) -> list[ScheduleView]:
        listed = await self._api.call("GET", "/schedules")
        return [ScheduleView.model_validate(v) for v in listed["schedules"]]

    async def get(self, name: str) -> ScheduleView:
        return ScheduleView.model_validate(await self._api.call("GET", _path(name)))

    async def pause(self, name: str, *, by: str) -> None:
        _by_token(by)
        await self._api.call("POST", _path(name, "pause"))

    async def resume(self, name: str, *, by: str) -> None:
        _by_token(by)
        await self._api.call("POST", _path(name, "resume"))

    async def trigger(self, name: str) -> None:
        await self._api.call("POST", _path(name, "trigger"))

    async def backfill(self, name: str, start: datetime, end: datetime) -> None:
        body = {"start": start.isoformat(), "end": end.isoformat()}
        await self._api.call("POST", _path(name, "backfill"), json=body)

    async def delete(self, name: str) -> None:
        await self._api.call("DELETE", _path(name))
