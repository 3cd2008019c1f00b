"""Settings: ``GET /api/settings`` (source, zones, thresholds, live view) and ``PUT /api/settings``."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from kosti.dashboard.routes.commands import Result
from kosti.dashboard.routes.deps import Settings
from kosti.dashboard.routes.games import PinCheck
from kosti.dashboard.schemas import SettingsBody, SettingsView


def create_settings_router(check_pin: PinCheck) -> APIRouter:
    """The settings routes (the table's :class:`~kosti.dashboard.live_settings.LiveSettings`); changing needs
    ``check_pin``."""
    router = APIRouter()

    @router.get("/api/settings", summary="Source, zones, thresholds", response_model=SettingsView,
                response_model_exclude_unset=True)
    def get_settings(settings: Settings) -> Result:
        return settings.current()

    @router.put("/api/settings", summary="Change source, zones, thresholds", response_model=SettingsView,
                response_model_exclude_unset=True)
    def put_settings(body: SettingsBody, settings: Settings, actor: str = Depends(check_pin)) -> Result:
        values = body.model_dump(exclude_none=True)
        if "thresholds" in values:
            values["thresholds"] = {k: v for k, v in values["thresholds"].items() if v is not None}
        return settings.update(values)

    return router
