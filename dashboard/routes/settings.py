"""Settings: ``GET /api/settings`` (source, zones, thresholds, live view) and ``PUT /api/settings``."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from kosti.dashboard.routes.commands import Result
from kosti.dashboard.routes.games import PinCheck
from kosti.dashboard.schemas import SettingsBody, SettingsView
from kosti.dashboard.table import TableService


def create_settings_router(table: TableService, check_pin: PinCheck) -> APIRouter:
    """The settings routes of ``table``; changing needs ``check_pin``."""
    router = APIRouter()

    @router.get("/api/settings", summary="Source, zones, thresholds", response_model=SettingsView,
                response_model_exclude_unset=True)
    def get_settings() -> Result:
        return table.get_settings()

    @router.put("/api/settings", summary="Change source, zones, thresholds", response_model=SettingsView,
                response_model_exclude_unset=True)
    def put_settings(body: SettingsBody, actor: str = Depends(check_pin)) -> Result:
        values = body.model_dump(exclude_none=True)
        if "thresholds" in values:
            values["thresholds"] = {k: v for k, v in values["thresholds"].items() if v is not None}
        return table.update_settings(values)

    return router
