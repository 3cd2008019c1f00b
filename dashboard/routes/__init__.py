"""The dashboard's web layer: one FastAPI router per job, each built around the one table.

* :mod:`.games` — rule presets, stored games, history, throw images, new game / resume / rematch, and the
  game controls (one route per command of :data:`.commands.COMMANDS`);
* :mod:`.live` — the live view (``/snapshot.jpg``, ``/video.mjpg``);
* :mod:`.settings` — ``GET/PUT /api/settings``;
* :mod:`.pages` — the page, the spectator view, the web-app files, the API reference, offline ``/docs``;
* :mod:`.ws` — the WebSocket: snapshot pushes and the same commands as REST;
* :mod:`.commands` — the one command table (name, body model, handler) REST and the WebSocket share;
* :mod:`.errors` — the one place domain errors become HTTP statuses and the one error shape.

The label review and teach pages have their routers in :mod:`kosti.dashboard.review` and
:mod:`kosti.dashboard.teach`, the advice and statistics in :mod:`kosti.dashboard.advisor_api`.
"""
