"""The one secret-redaction rule for camera URLs: what viewers, the API and the log may see of a source spec.

:func:`redact_url` is used for every place a source URL can appear — dashboard settings and snapshots, the
WebSocket, source status messages, error messages (:func:`redact_text`) and, through
:func:`install_log_redaction`, every log record of the process. Importing this module is cheap (stdlib only).
"""

from __future__ import annotations

import logging
import re
from typing import Any

_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")


def redact_url(spec: str | None) -> str | None:
    """A source spec with its secrets replaced by ``***``: safe to show to viewers and to log.

    The one redaction rule for every place a source URL appears (settings, snapshots, the WebSocket, logs,
    error messages):

    * user information — everything between ``scheme://`` and the **last** ``@`` before the query, so a
      password holding ``/``, ``:`` or ``@`` is hidden whole: ``rtsp://admin:p/a@ss@cam/x`` → ``rtsp://***@cam/x``;
    * every query value (IP cameras take ``?user=admin&pwd=…`` and tokens there): ``?user=***&pwd=***``;
    * a fragment is dropped.

    Strings without ``scheme://`` (device indexes, file paths, ``virtual``) come back unchanged; ``None`` → ``None``.
    """
    if spec is None or "://" not in spec:
        return spec
    scheme, rest = spec.split("://", 1)
    rest = rest.split("#", 1)[0]
    head, sep, query = rest.partition("?")
    if "@" in query and "=" not in query.split("@", 1)[0]:  # a password holding "?": user information
        head, sep, query = f"{head}?{query}".rpartition("@")[2].partition("?")
        head = "***@" + head
    elif "@" in head:
        head = "***@" + head.rpartition("@")[2]
    head = re.sub(r";([^=;/]+)=[^;/]*", r";\1=***", head)  # path parameters (/live;pwd=...)
    if sep:
        parts = []
        for item in re.split(r"([&;])", query):
            if item in ("&", ";"):
                parts.append(item)
            else:
                key, eq, _ = item.partition("=")
                parts.append(f"{key}{eq}***" if eq else item)
        query = "".join(parts)
    return f"{scheme}://{head}{sep}{query}"


def redact_text(text: str) -> str:
    """``text`` (an error message, a log line) with every URL in it passed through :func:`redact_url`."""
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)) or "", text)


_factory_installed = False


def install_log_redaction() -> None:
    """Make every log record of the process pass through :class:`RedactingFilter` when it is created (a record
    factory, so uvicorn's and the libraries' loggers are covered whatever handlers they configure later).
    Idempotent; called by the ``kosti`` command at start."""
    global _factory_installed
    if _factory_installed:
        return
    previous = logging.getLogRecordFactory()
    scrub = RedactingFilter()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        scrub.filter(record)
        return record

    logging.setLogRecordFactory(factory)
    _factory_installed = True


class RedactingFilter(logging.Filter):
    """A logging filter that runs :func:`redact_text` over every record's message and traceback (camera URLs with
    passwords reach the log through library messages too). :func:`install_log_redaction` applies it to every
    record of the process."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is logging's own business
            return True
        if "://" in msg:
            record.msg, record.args = redact_text(msg), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        return True
