"""The live view: the newest frame with overlays (``/snapshot.jpg``) and the multipart MJPEG stream
(``/video.mjpg``), both from the table's frame hub (one JPEG encoding shared by every viewer)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse

from kosti.dashboard.frames import encode_jpeg, placeholder_frame
from kosti.dashboard.routes.deps import Live

JPEG: dict[int | str, dict[str, object]] = {200: {"content": {"image/jpeg": {}}, "description": "a JPEG image"}}
MJPEG: dict[int | str, dict[str, object]] = {200: {"content": {"multipart/x-mixed-replace; boundary=frame": {}},
               "description": "JPEG frames, one part each (MJPEG)"}}
NO_CAMERA = "no camera / нет камеры"


def create_live_router() -> APIRouter:
    """The live view routes (the table's :class:`~kosti.dashboard.wiring.LiveTable`)."""
    router = APIRouter()

    @router.get("/snapshot.jpg", summary="The newest live frame with overlays (JPEG)", response_class=Response,
                responses=JPEG)
    async def snapshot(live: Live) -> Response:
        hub = live.frames
        seq, jpeg = hub.latest()
        if hub.age() > 0.5 and live.source is not None:  # encoding was idle: wait for a fresh frame
            seq, jpeg = await hub.next_frame(seq, timeout_s=1.5)
        if jpeg is None:
            jpeg = encode_jpeg(placeholder_frame(NO_CAMERA))
        return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "no-store"})

    @router.get("/video.mjpg", summary="Live view with overlays (multipart MJPEG)", response_class=StreamingResponse,
                responses=MJPEG)
    async def video(request: Request, live: Live, fps: float = Query(30.0, gt=0, le=60)) -> StreamingResponse:
        min_gap = 1.0 / fps

        async def frames() -> AsyncIterator[bytes]:
            seq = -1
            loop = asyncio.get_running_loop()
            last = 0.0
            while True:
                if await request.is_disconnected():
                    return
                seq, jpeg = await live.frames.next_frame(seq)
                if jpeg is None:
                    jpeg = encode_jpeg(placeholder_frame(NO_CAMERA))
                now = loop.time()
                if now - last < min_gap:
                    await asyncio.sleep(min_gap - (now - last))
                last = loop.time()
                yield (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: " + str(len(jpeg)).encode()
                       + b"\r\n\r\n" + jpeg + b"\r\n")

        return StreamingResponse(frames(), media_type="multipart/x-mixed-replace; boundary=frame",
                                 headers={"Cache-Control": "no-store"})

    return router
