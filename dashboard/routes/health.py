"""``GET /healthz`` (200 healthy / 503 failing, JSON saying which check failed) and ``GET /metrics`` (Prometheus text
format), :mod:`kosti.dashboard.health`.

Off the LAN unless configured: both answer only to this machine (loopback clients: systemd's watchdog, a local
monitor) and to the networks in ``monitor_from`` (``[server] monitor_from``, e.g. ``["192.168.1.0/24"]`` for a
Prometheus server on the LAN); anyone else gets 403. They never change anything and need no PIN."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from kosti.dashboard.errors import TableError
from kosti.dashboard.health import STALL_S, TableMetrics, health
from kosti.dashboard.routes.deps import Table
from kosti.dashboard.schemas import HealthReport


def parse_networks(values: Iterable[str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """``["192.168.1.0/24", "10.0.0.5"]`` → networks (a bare address is its own /32 or /128). Raises
    :class:`ValueError` naming the value that is no network."""
    out = []
    for v in values:
        try:
            out.append(ipaddress.ip_network(str(v).strip(), strict=False))
        except ValueError:
            raise ValueError(f"monitor_from: {v!r} is not an IP address or network (e.g. 192.168.1.0/24)") from None
    return out


def create_health_router(metrics: TableMetrics, monitor_from: Iterable[str] = (),
                         stall_s: float = STALL_S) -> APIRouter:
    """``/healthz`` and ``/metrics`` for the app's table and its ``metrics``; ``monitor_from``: networks besides loopback
    that may read them (:func:`parse_networks`: :class:`ValueError` for one that is not a network)."""
    router = APIRouter()
    nets = parse_networks(monitor_from)

    def allowed(request: Request) -> None:
        host = request.client.host if request.client else ""
        try:
            addr = ipaddress.ip_address(host)
        except ValueError:
            addr = None
        if addr is not None and (addr.is_loopback or any(addr in n for n in nets)):
            return
        server = request.scope.get("server") or ("",)
        if host and host == server[0]:  # from the address it listens on (bound to a LAN address): this machine
            return
        raise TableError(403, "health and metrics answer only this machine: add the monitor's network to "
                              "[server] monitor_from",
                         "состояние и метрики доступны только с этой машины: добавьте сеть монитора в "
                         "[server] monitor_from")

    @router.get("/healthz", summary="Health: camera, database, disk (200 or 503); this machine and monitor_from only",
                response_model=HealthReport,
                responses={503: {"model": HealthReport, "description": "a check fails (the body says which)"}})
    def get_health(request: Request, table: Table) -> JSONResponse:
        allowed(request)
        h: dict[str, Any] = health(table, stall_s)
        return JSONResponse(h, status_code=200 if h["ok"] else 503, headers={"Cache-Control": "no-store"})

    @router.get("/metrics", summary="Prometheus metrics (text format); this machine and monitor_from only",
                response_class=Response, responses={200: {"content": {"text/plain": {}}}})
    def get_metrics(request: Request) -> Response:
        allowed(request)
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return router
