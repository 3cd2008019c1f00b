"""How a phone joins the table: the dashboard's address on the local network, with or without the PIN, as text and
as a QR code (``segno``: pure Python, no dependencies; ISO/IEC 18004 QR codes as SVG or terminal text).

The QR code holds the machine's LAN IP address, not its ``NAME.local`` name: every phone opens an IP address,
while ``.local`` names need mDNS, which older Android phones do not resolve (the name is shown beside it). The
control address carries the PIN in the URL's fragment (``http://192.168.1.23:8000/#pin=482913``): a fragment
never leaves the phone (it is not sent to the server, so it is in no log and no ``Referer``); the page stores it
as the PIN typed by hand would be and takes it out of the address bar.
"""

from __future__ import annotations

import io
import socket
from dataclasses import dataclass

#: Addresses that mean "this machine only".
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "127.0.1.1"})
#: Addresses that mean "every interface": the QR code then shows the LAN address.
ANY = frozenset({"0.0.0.0", "::", ""})


@dataclass(frozen=True)
class JoinUrls:
    """The addresses a phone opens.

    Attributes:
        watch: the page for spectators (anyone on the network may watch).
        control: the page with the PIN in its fragment (``#pin=…``) when control needs one, else ``watch``.
        name_url: the same page by this machine's mDNS name (``http://NAME.local:PORT/``), or None off the LAN.
        lan: whether other machines can reach it (False when the dashboard listens on loopback only).
        host: the address in the URLs.
    """

    watch: str
    control: str
    name_url: str | None
    lan: bool
    host: str


def lan_address() -> str:
    """This machine's address on the local network (for phones), or ``127.0.0.1`` without one.

    A UDP socket "connected" to a private address makes the OS pick the outgoing interface; no packet is sent."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.254.254.254", 1))
            return str(s.getsockname()[0])
    except OSError:
        return "127.0.0.1"


def join_urls(host: str, port: int, pin: str | None, pin_required: bool | None = None) -> JoinUrls:
    """The join addresses of a dashboard bound to ``host:port`` whose control PIN is ``pin``.

    ``pin_required``: whether control needs the PIN (default: off loopback, as
    :attr:`kosti.dashboard.app.DashboardConfig.pin_required`)."""
    lan = host not in LOOPBACK
    shown = lan_address() if host in ANY else host
    if shown in LOOPBACK or shown.startswith("127."):
        lan = False
    name = f"[{shown}]" if ":" in shown else shown
    watch = f"http://{name}:{port}/"
    needs = pin_required if pin_required is not None else lan
    control = f"{watch}#pin={pin}" if pin and needs else watch
    name_url = None
    if lan:
        try:
            hostname = socket.gethostname().split(".")[0].lower()
        except OSError:
            hostname = ""
        name_url = f"http://{hostname}.local:{port}/" if hostname and hostname != "localhost" else None
    return JoinUrls(watch=watch, control=control, name_url=name_url, lan=lan, host=shown)


def qr_svg(text: str, scale: int = 8, dark: str = "#000", light: str = "#fff") -> bytes:
    """``text`` as a QR code in SVG (error correction M, a 4-module quiet zone as the standard asks; ``scale`` px
    per module). Raises :class:`ValueError` for text too long for a QR code."""
    import segno

    try:
        qr = segno.make(text, error="m", micro=False)
    except segno.DataOverflowError as exc:
        raise ValueError(str(exc)) from None
    buf = io.BytesIO()
    qr.save(buf, kind="svg", scale=scale, border=4, dark=dark, light=light, xmldecl=False,
            title="kosti", desc=text)
    return buf.getvalue()


def terminal_qr(text: str) -> str:
    """``text`` as a QR code drawn with block characters for a terminal (``kosti pin --qr``)."""
    import segno

    buf = io.StringIO()
    segno.make(text, error="m", micro=False).terminal(out=buf, compact=True, border=2)
    return buf.getvalue()
