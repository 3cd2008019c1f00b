"""Why the camera gives no picture, in words for the table (English and Russian).

The source reports a state (:class:`kosti.vision.reconnect.SourceStatus`: ``connecting``, ``stalled``,
``reconnecting``, ``failed``) and the last error in the library's English; :func:`source_why` turns them into one
sentence a player understands — what is wrong, what to check, and when kosti tries again — shown on every
screen beside the "camera down" badge. The cause is read from the error's text (the messages of
:mod:`kosti.vision.camera_sources`, :mod:`kosti.vision.picamera_source` and the reconnecting wrapper).
"""

from __future__ import annotations

from collections.abc import Mapping

#: (words in the error, English cause, Russian cause), tried in order; the first match names the cause.
CAUSES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    # not plugged in (yet): kosti run --wait-for-camera, the service, picks it up when it appears (issue 44)
    (("no camera is connected", "no raspberry pi camera is connected"),
     "no camera is connected: plug it in, kosti picks it up by itself",
     "камера не подключена: подключите её, kosti найдёт её сам"),
    # a video file or a folder of frames that has been read to its end (kosti run keeps the game; nothing failed)
    (("end of stream",),
     "the video or folder of frames has ended: there is nothing more to read",
     "видео или папка кадров закончились: больше нечего читать"),
    (("no frame for", "stalled"),
     "the camera stopped sending pictures", "камера перестала присылать кадры"),
    (("picamera2 is not available", "not installed"),
     "the camera's software is not installed", "не установлена программа для камеры"),
    (("refused", "unreachable", "timed out", "timeout", "connection", "network", "rtsp://", "http://"),
     "the camera's stream does not answer: check the network and the camera's power",
     "поток камеры не отвечает: проверьте сеть и питание камеры"),
    (("cannot be opened", "cannot open", "cannot start", "no such", "unplugged", "not found", "busy", "gone"),
     "the camera cannot be opened: it is unplugged, switched off or used by another program",
     "камеру не открыть: она отключена, выключена или занята другой программой"),
)
DEFAULT_CAUSE = ("the camera failed", "камера дала сбой")


def _cause(message: str) -> tuple[str, str]:
    low = message.lower()
    for words, en, ru in CAUSES:
        if any(w in low for w in words):
            return en, ru
    return DEFAULT_CAUSE


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def source_why(status: object, message: str = "") -> tuple[str, str] | None:
    """One sentence in English and in Russian saying why there is no picture, or ``None`` while frames arrive.

    Args:
        status: the source's status (JSON): a :meth:`SourceStatus.to_dict` mapping (``state``, ``message``, ``attempts``,
            ``retry_in_s`` seconds) for a reconnecting camera, else ``"ok"`` / ``"error"`` / ``"none"``.
        message: the runner's last error (a source that does not reconnect, e.g. a video file).

    Returns:
        ``(english, russian)``, e.g. ``("the camera cannot be opened: …; trying again in 8 s (attempt 4)",
        "камеру не открыть: …; новая попытка через 8 с (попытка 4)")``, or ``None`` when there is nothing to say.
    """
    if isinstance(status, Mapping):
        state = str(status.get("state", "ok"))
        text = str(status.get("message") or message or "")
        attempts = int(_number(status.get("attempts")))
        retry = _number(status.get("retry_in_s"))
    else:
        state, text, attempts, retry = ("error" if message else str(status or "ok")), message, 0, 0.0
    if state == "ok" or (state in ("none", "") and not text):
        return None
    if state == "connecting":
        if attempts == 0:
            return "connecting to the camera…", "подключаюсь к камере…"
        en, ru = _cause(text)
        return f"{en}; connecting again (attempt {attempts + 1})", f"{ru}; подключаюсь снова (попытка {attempts + 1})"
    if state == "stalled":
        return ("no picture from the camera for a moment; waiting for it",
                "камера на миг перестала присылать кадры; жду")
    en, ru = _cause(text)
    if state == "failed":
        return (f"{en}; kosti gave up after {attempts} attempts: check the camera and restart kosti",
                f"{ru}; kosti прекратил попытки после {attempts}-й: проверьте камеру и перезапустите kosti")
    if state == "reconnecting":
        wait = max(1, round(retry))
        return (f"{en}; trying again in {wait} s (attempt {attempts + 1})",
                f"{ru}; новая попытка через {wait} с (попытка {attempts + 1})")
    return en, ru
