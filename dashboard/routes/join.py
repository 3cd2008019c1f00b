"""Join from a phone: ``GET /api/join`` (the table's addresses) and ``GET /api/join/qr.svg`` (a QR code of one).

``?for=watch`` (default) is the spectators' address, public like the page; ``?for=control`` holds the PIN
(:mod:`kosti.dashboard.join`) and is answered only to a client that sent the right PIN (``X-Kosti-Pin``), so a
QR code on the TV never gives the PIN away. A dashboard phones cannot reach (it listens on loopback only) offers no
QR code at all (404 ``not_on_lan``, saying to start it with ``--host 0.0.0.0``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field

from kosti.dashboard.errors import NotFound
from kosti.dashboard.join import join_urls, qr_svg


class Join(BaseModel):
    """The addresses a phone opens to join the table."""

    watch: str = Field(description="the page for spectators, e.g. http://192.168.1.23:8000/")
    name_url: str | None = Field(description="the same by this machine's mDNS name (http://kosti.local:8000/), or null")
    lan: bool = Field(description="whether phones can reach it (false: the dashboard listens on this machine only)")
    pin_required: bool = Field(description="whether control needs the PIN (the control QR code asks for it)")


def create_join_router(host: str, port: int, pin: Callable[[], str | None], pin_required: bool,
                       check_pin: Callable[[Request], str]) -> APIRouter:
    """The join routes of a dashboard bound to ``host:port``; ``pin()`` gives its control PIN."""
    router = APIRouter()

    @router.get("/api/join", summary="The addresses phones open to join (and whether they can)", response_model=Join)
    def get_join() -> Join:
        urls = join_urls(host, port, pin(), pin_required)
        return Join(watch=urls.watch, name_url=urls.name_url, lan=urls.lan, pin_required=pin_required)

    @router.get("/api/join/qr.svg", summary="QR code of the address to open (for=control holds the PIN: PIN needed)",
                response_class=Response, responses={200: {"content": {"image/svg+xml": {}}, "description": "SVG"}})
    def get_qr(request: Request, for_: Literal["watch", "control"] = Query("watch", alias="for")) -> Response:
        urls = join_urls(host, port, pin(), pin_required)
        if not urls.lan:  # a code for 127.0.0.1 is of no use to any phone: say how to open the table to them
            raise NotFound("phones cannot reach this dashboard (it listens on this machine only): start kosti with "
                           "--host 0.0.0.0 so that phones can join",
                           "телефоны не могут открыть эту панель (она слушает только эту машину): запустите kosti "
                           "с --host 0.0.0.0, чтобы подключались телефоны", code="not_on_lan")
        if for_ == "control":
            check_pin(request)  # 403 without the right PIN, 429 while locked out
        text = urls.control if for_ == "control" else urls.watch
        return Response(qr_svg(text), media_type="image/svg+xml", headers={"Cache-Control": "no-store"})

    return router
