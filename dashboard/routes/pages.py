"""Pages: the single-page UI (``/``), the spectator view (``/tv``), the installable web app's manifest and
service worker, the API as a plain page (``/api``) and the interactive OpenAPI docs served offline
(``/docs``). None of them is part of ``/openapi.json``: they are pages, not the API."""

from __future__ import annotations

import html
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"


def create_pages_router(app: FastAPI) -> APIRouter:
    """The page routes; ``/api`` lists the routes of ``app``'s OpenAPI schema."""
    router = APIRouter(include_in_schema=False)

    @router.get("/")
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    @router.get("/tv")
    def spectator() -> FileResponse:
        """The spectator view: the same page with big scores only (a TV, a phone leaning on the lamp)."""
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    @router.get("/manifest.webmanifest")
    def manifest() -> FileResponse:
        return FileResponse(STATIC_DIR / "manifest.webmanifest", media_type="application/manifest+json")

    @router.get("/sw.js")
    def service_worker() -> FileResponse:
        """The service worker lives at the root so that its scope is the whole dashboard (installable PWA)."""
        return FileResponse(STATIC_DIR / "sw.js", media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    @router.get("/api", response_class=HTMLResponse)
    def api_reference() -> HTMLResponse:
        """The API as a plain page built from the OpenAPI schema (no script needed; ``/docs`` is the
        interactive Swagger UI, also served offline)."""
        rows = []
        for path, ops in app.openapi()["paths"].items():
            for method, op in ops.items():
                body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
                ref = body.get("$ref", "").rsplit("/", 1)[-1] or (body.get("anyOf", [{}])[0].get("$ref", "").rsplit("/", 1)[-1])
                rows.append(f"<tr><td><code>{method.upper()}</code></td><td><code>{html.escape(path)}</code></td>"
                            f"<td>{html.escape(op.get('summary', ''))}</td><td>{html.escape(ref)}</td></tr>")
        page = ("<!doctype html><meta charset=utf-8><title>kosti API</title>"
                "<style>body{font:14px system-ui;margin:1em}td{padding:3px 8px;border-bottom:1px solid #ccc}</style>"
                "<h1>kosti dashboard API</h1><p>Schema: <a href=/openapi.json>/openapi.json</a> · "
                "interactive: <a href=/docs>/docs</a> · WebSocket <code>/ws</code></p>"
                "<table><tr><th>method</th><th>path</th><th>what</th><th>body</th></tr>" + "".join(rows) + "</table>")
        return HTMLResponse(page)

    return router


def mount_static(app: FastAPI) -> None:
    """Serve ``dashboard/static`` at ``/static`` and the offline OpenAPI docs at ``/docs``."""
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    mount_offline_docs(app)


def mount_offline_docs(app: FastAPI) -> None:
    """Serve the interactive OpenAPI docs at ``/docs`` from the ``swagger-ui-py`` package's files.

    FastAPI's default ``/docs`` page loads Swagger UI from a CDN and is blank offline; the table's
    Raspberry Pi usually has no internet, so the same page is built here on local copies. The API is
    OpenAPI 3.1 (FastAPI), which Swagger UI reads from version 5 on: ``swagger-ui-py`` ships 5.x (the older
    ``swagger-ui-bundle`` ships 4.15 and shows "Unable to render this definition").
    """
    import swagger_ui
    from fastapi.openapi.docs import get_swagger_ui_html

    static = Path(swagger_ui.__file__).resolve().parent / "static"
    app.mount("/docs-static", StaticFiles(directory=static), name="docs-static")

    @app.get("/docs", include_in_schema=False)
    async def _docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} — API",
            swagger_js_url="/docs-static/swagger-ui-bundle.js",
            swagger_css_url="/docs-static/swagger-ui.css",
            swagger_favicon_url="/docs-static/favicon-32x32.png",
        )
