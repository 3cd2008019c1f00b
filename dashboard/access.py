"""Who may change the game: the control PIN's lockout, cross-site (Origin / Host) checks, request size limits.

Three guards sit in front of every state-changing route of the dashboard (``POST``/``PUT``/``PATCH``/
``DELETE`` and every WebSocket command):

* :class:`PinGuard` — the PIN check with one **global**, exponential lockout: after ``free_failures`` wrong
  PINs (from any address, over HTTP or the WebSocket) every further wrong PIN locks PIN checks for
  ``base_s * 2**k`` seconds (capped at ``max_lock_s``). A guesser with many addresses gains nothing over one:
  a 6-digit PIN (10^6 values) then needs decades, not seconds. The right PIN resets the count.
* :func:`host_allowed` and :func:`request_allowed` — the Host and Origin checks. **Every** request — pages,
  reads such as ``GET /api/state``, the live view, state-changing requests and WebSocket handshakes — is
  refused (403) when its ``Host`` is neither an IP address nor an allowed name (DNS rebinding: a foreign name
  that resolves to the table would otherwise let another site's script read the table). Allowed names:
  loopback names, this machine's host name (and ``NAME.local``), the configured ``--host`` and ``[server]
  allowed_hosts``. A browser page on another site can also send a form ``POST`` or open a WebSocket to the
  table; it cannot hide its ``Origin``. A state-changing request (and every WebSocket handshake) is refused
  (403) when its ``Origin`` is not the dashboard's own origin or when ``Sec-Fetch-Site`` says ``cross-site``.
* :func:`from_spectator_view` — the spectator view ``/tv`` has no control, and the server refuses control
  from it: a state-changing HTTP request whose ``Referer`` is the spectator view (``/tv``, or any page with
  ``?view=tv``) is refused (403). Browsers send the page's address as ``Referer`` with every same-origin
  request (the page asks for it with ``<meta name="referrer" content="same-origin">``); the spectator view's
  WebSocket is opened as ``/ws?view=tv`` and answers every command with the same 403
  (:mod:`kosti.dashboard.routes.ws`). This keeps a spectator screen from changing the game by mistake; who
  may change it at all is the PIN's job.
* :class:`BodyLimit` — an ASGI middleware refusing (413) request bodies over ``max_bytes`` before they are
  read into memory, whether the size is declared (``Content-Length``) or streamed.

Errors use the dashboard's documented shape ``{"error": English, "error_ru": Russian, "status": code}``.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterable
from urllib.parse import parse_qs, urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Largest request body any dashboard route accepts (bytes). The largest legitimate body is a settings
#: change with two zone polygons (< 4 KiB); 64 KiB leaves room and keeps a flood from reaching memory.
MAX_BODY_BYTES = 64 * 1024
#: Methods that change something (every other method is read-only in the dashboard: no state-changing GET).
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "127.0.0.1", "::1", "127.0.1.1"})


class AccessError(Exception):
    """A request refused at the door: ``status`` (403, 413, 429) with an English and a Russian reason."""

    def __init__(self, status: int, en: str, ru: str) -> None:
        super().__init__(en)
        self.status, self.en, self.ru = status, en, ru

    def to_json(self) -> dict[str, str | int]:
        """``{"error": English, "error_ru": Russian, "status": HTTP status}``."""
        return {"error": self.en, "error_ru": self.ru, "status": self.status}


def make_pin(digits: int = 6) -> str:
    """A random PIN of ``digits`` digits (``secrets``; leading zeros kept), e.g. ``"048213"``."""
    return f"{secrets.randbelow(10 ** digits):0{digits}d}"


class PinGuard:
    """The control PIN check with a global exponential lockout (see the module docstring).

    Args:
        pin: the PIN (digits) or ``None`` (every check fails: no PIN was set).
        free_failures: wrong PINs allowed (from all addresses together) before the lockout starts.
        base_s: the first lockout in seconds; each further wrong PIN doubles it.
        max_lock_s: the longest lockout (seconds), so the table itself is never locked out for long.
        forget_s: wrong PINs older than this many seconds no longer count.
        clock: ``time.monotonic`` (tests inject a fake clock).
    """

    def __init__(self, pin: str | None, free_failures: int = 5, base_s: float = 2.0, max_lock_s: float = 300.0,
                 forget_s: float = 3600.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.pin = pin
        self.free_failures, self.base_s, self.max_lock_s, self.forget_s = free_failures, base_s, max_lock_s, forget_s
        self._clock = clock
        self._lock = threading.Lock()
        self._fails: list[float] = []
        self._locked_until = 0.0

    @property
    def failures(self) -> int:
        """Wrong PINs that still count."""
        with self._lock:
            self._forget(self._clock())
            return len(self._fails)

    def _forget(self, now: float) -> None:
        self._fails = [t for t in self._fails if now - t < self.forget_s]

    def locked_for(self) -> float:
        """Seconds until PIN checks are accepted again (0.0 = not locked)."""
        with self._lock:
            return max(0.0, self._locked_until - self._clock())

    def check(self, who: str, given: object) -> None:
        """Accept the right PIN; raise :class:`AccessError` 403 (wrong or missing PIN) or 429 (locked).

        ``who`` (the client address) is only used in messages; the lockout is global. A missing PIN is not
        an attempt (a viewer pressing a button) and does not count.
        """
        with self._lock:
            now = self._clock()
            self._forget(now)
            if now < self._locked_until:
                wait = self._locked_until - now
                raise AccessError(429, f"too many wrong PINs: wait {wait:.0f} s",
                                  f"слишком много неверных PIN: подождите {wait:.0f} с")
            ok = given is not None and self.pin is not None and isinstance(given, str | int) \
                and secrets.compare_digest(str(given).encode(), str(self.pin).encode())
            if ok:
                self._fails.clear()
                return
            if given not in (None, ""):
                self._fails.append(now)
                over = len(self._fails) - self.free_failures
                if over >= 0:
                    self._locked_until = now + min(self.max_lock_s, self.base_s * 2.0 ** over)
            raise AccessError(403, "control needs the PIN shown when the dashboard started",
                              "для управления нужен PIN, показанный при запуске")


def allowed_host_names(configured: Iterable[str] = ()) -> frozenset[str]:
    """Host names (lower case, no port) a state-changing request may name in ``Host``, besides IP addresses:
    loopback names, this machine's host name and ``NAME.local`` (mDNS), and ``configured`` names."""
    names = set(LOOPBACK_NAMES)
    try:
        h = socket.gethostname().lower()
        names |= {h, f"{h}.local", h.split(".")[0]}
    except OSError:
        pass
    for c in configured:
        if c and c not in ("0.0.0.0", "::"):
            names.add(c.strip().lower().rstrip("."))
    return frozenset(names)


def _split_host(value: str) -> tuple[str, str]:
    """``"name:8000"`` / ``"[::1]:8000"`` → ``(host lower-case without brackets, port or "")``."""
    value = value.strip().lower()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        return host, rest.lstrip(":")
    if value.count(":") > 1:  # a bare IPv6 address
        return value, ""
    host, _, port = value.partition(":")
    return host.rstrip("."), port


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def host_allowed(headers: dict[str, str], names: frozenset[str]) -> AccessError | None:
    """Check any request's ``Host`` header (every route, reads included: the DNS rebinding guard).

    Args:
        headers: request headers, lower-case names.
        names: :func:`allowed_host_names`.

    Returns:
        ``None`` when ``Host`` is an IP address or one of ``names`` (any port), else the :class:`AccessError`
        (403) to answer with; a missing or empty ``Host`` is refused too.
    """
    host_header = headers.get("host", "")
    host, _ = _split_host(host_header)
    if not host or not (_is_ip(host) or host in names):
        return AccessError(403, f"host {host_header[:80]!r} is not this table's address (use its IP address or "
                                "add the name to [server] allowed_hosts)",
                           f"адрес {host_header[:80]!r} не принадлежит этому столу (откройте стол по IP-адресу или "
                           "добавьте имя в [server] allowed_hosts)")
    return None


def from_spectator_view(headers: dict[str, str]) -> bool:
    """Whether a request comes from the spectator view: its ``Referer`` is the page ``/tv`` (with or without a
    trailing slash and query) or any page opened with ``?view=tv`` (see the module docstring)."""
    ref = headers.get("referer", "")
    if not ref:
        return False
    try:
        parts = urlsplit(ref)
    except ValueError:
        return False
    return parts.path.rstrip("/") == "/tv" or "tv" in parse_qs(parts.query).get("view", [])


def spectator_refused() -> AccessError:
    """The 403 for a control request from the spectator view (HTTP and WebSocket alike)."""
    return AccessError(403, "the spectator view (/tv) only shows the game: control it from the main page",
                       "экран для зрителей (/tv) только показывает игру: управляйте с главной страницы")


def request_allowed(headers: dict[str, str], names: frozenset[str], scheme: str = "http") -> AccessError | None:
    """Check a state-changing request's (or WebSocket handshake's) ``Host``, ``Origin`` and ``Sec-Fetch-Site``.

    Args:
        headers: request headers, lower-case names.
        names: :func:`allowed_host_names`.
        scheme: ``http`` or ``https`` (the origin's default port).

    Returns:
        ``None`` when allowed, else the :class:`AccessError` (403) to answer with.
    """
    refused = host_allowed(headers, names)
    if refused is not None:
        return refused
    host, port = _split_host(headers.get("host", ""))
    if headers.get("sec-fetch-site", "") == "cross-site":
        return _foreign()
    origin = headers.get("origin")
    if origin is not None:
        try:
            o = urlsplit(origin)
            o_host, o_port = (o.hostname or "").lower().rstrip("."), str(o.port or "")
        except ValueError:
            return _foreign()
        default = {"http": "80", "https": "443", "ws": "80", "wss": "443"}
        if o.scheme not in default or o_host != host or (o_port or default[o.scheme]) != (port or default.get(scheme, "80")):
            return _foreign()
    return None


def _foreign() -> AccessError:
    return AccessError(403, "refused: the request comes from a page of another site",
                       "отказано: запрос пришёл со страницы другого сайта")


class _TooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware: HTTP request bodies larger than ``max_bytes`` are answered 413 (the error shape) before
    the route reads them; a streamed body is cut off as soon as it passes the limit."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        try:
            too_big = declared is not None and int(declared) > self.max_bytes
        except ValueError:
            too_big = False
        if too_big:
            await self._refuse(send)
            return
        seen = 0
        over = refused = False

        async def limited_receive() -> Message:
            nonlocal seen, over
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_bytes:
                    over = True
                    raise _TooLarge
            return msg

        async def guarded_send(msg: Message) -> None:
            # Once the body ran over the limit, whatever the app answers (its body parser fails) becomes the 413.
            nonlocal refused
            if over:
                if not refused:
                    refused = True
                    await self._refuse(send)
                return
            await send(msg)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except _TooLarge:
            if not refused:
                refused = True
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        kib = self.max_bytes // 1024
        body = json.dumps({"error": f"request body too large (limit {kib} KiB)",
                           "error_ru": f"слишком большой запрос (предел {kib} КиБ)", "status": 413},
                          ensure_ascii=False).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


class CrossSiteGuard:
    """ASGI middleware in front of every route: :func:`host_allowed` for every HTTP request (reads too) and
    :func:`request_allowed` for every state-changing HTTP request and every WebSocket handshake (a foreign page
    could otherwise read the table and send commands); a state-changing request from the spectator view
    (:func:`from_spectator_view`) is refused too. Refused HTTP requests get 403 in the error shape, refused
    WebSockets are closed before they are accepted (HTTP 403)."""

    def __init__(self, app: ASGIApp, names: frozenset[str]) -> None:
        self.app, self.names = app, names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind in ("http", "websocket"):
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
            given = str(scope.get("scheme", "http"))
            scheme = {"wss": "https", "ws": "http"}.get(given, given)
            unsafe = kind == "websocket" or scope.get("method", "GET") in UNSAFE_METHODS
            refused = request_allowed(headers, self.names, scheme) if unsafe else host_allowed(headers, self.names)
            if refused is None and kind == "http" and unsafe and from_spectator_view(headers):
                refused = spectator_refused()
            if refused is not None:
                if kind == "websocket":
                    await send({"type": "websocket.close", "code": 1008, "reason": refused.en[:120]})
                    return
                body = json.dumps(refused.to_json(), ensure_ascii=False).encode()
                await send({"type": "http.response.start", "status": refused.status,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
