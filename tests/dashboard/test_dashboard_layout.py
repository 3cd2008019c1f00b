"""The dashboard's shape (issue 39): every route is served by a router of ``dashboard/routes/``, the table's facade
stays small (the routes depend on the application objects, not on forwarders), and no function or class of
``dashboard/`` grows past what one reader holds in mind (80 lines; 25 methods)."""

from __future__ import annotations

import ast
from pathlib import Path

from fastapi.routing import APIRoute, APIWebSocketRoute

from kosti.dashboard.table import TableService

DASHBOARD = Path(__file__).resolve().parents[2] / "dashboard"


def _api_routes(routes: list) -> list:
    """The API and WebSocket routes of ``routes``, those of included routers too (FastAPI wraps an included router:
    its ``original_router``)."""
    out = []
    for r in routes:
        if isinstance(r, APIRoute | APIWebSocketRoute):
            out.append(r)
        elif hasattr(r, "original_router"):
            out += _api_routes(r.original_router.routes)
    return out


def test_every_route_is_served_by_a_router_of_dashboard_routes(make_client, tmp_path):
    client = make_client(review_dir=tmp_path / "captures", start_capture=False)  # the review and teach pages too
    where = {r.path: r.endpoint.__module__ for r in _api_routes(client.app.routes)}
    assert {"/api/state", "/api/advice", "/api/stats", "/api/review/stats", "/api/teach/status", "/ws"} <= set(where)
    outside = {path: module for path, module in where.items() if not module.startswith("kosti.dashboard.routes.")}
    assert not outside, outside


def test_the_table_facade_has_fewer_than_15_methods():
    methods = [name for name, value in vars(TableService).items() if callable(value) or isinstance(value, property)]
    assert len(methods) < 15, methods


def test_no_function_over_80_lines_and_no_class_over_25_methods_in_the_dashboard():
    long_functions, big_classes = [], []
    for path in sorted(DASHBOARD.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno >= 80:
                long_functions.append(f"{path.relative_to(DASHBOARD)}:{node.lineno} {node.name}")
            if isinstance(node, ast.ClassDef):
                n = sum(isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef) for b in node.body)
                if n >= 25:
                    big_classes.append(f"{path.relative_to(DASHBOARD)}:{node.lineno} {node.name} ({n})")
    assert not long_functions and not big_classes, (long_functions, big_classes)
