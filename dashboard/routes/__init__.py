"""The dashboard's web layer: one FastAPI router per job; each route depends on the application objects it uses.

* :mod:`.games` — rule presets, stored games, history, throw images, new game / resume / rematch, and the
  game controls (one route per command of :data:`.commands.COMMANDS`);
* :mod:`.live` — the live view (``/snapshot.jpg``, ``/video.mjpg``);
* :mod:`.settings` — ``GET/PUT /api/settings``;
* :mod:`.pages` — the page, the spectator view, the web-app files, the API reference, offline ``/docs``;
* :mod:`.ws` — the WebSocket: snapshot pushes and the same commands as REST;
* :mod:`.commands` — the one command table (name, body model, handler) REST and the WebSocket share;
* :mod:`.errors` — the one place domain errors become HTTP statuses and the one error shape;
* :mod:`.review` — the label review page and API over a capture folder; :mod:`.teach` — "teach my dice";
* :mod:`.deps` — the application objects a route depends on (``Depends``): the game
  (:class:`~kosti.dashboard.session.GameSession`), the camera (:class:`~kosti.dashboard.wiring.LiveTable`), the
  settings, the database, the table that answers the snapshot.

Request and response models are in :mod:`kosti.dashboard.schemas` (``schemas.review``, ``schemas.teach`` for
those pages, ``schemas.advice``).
* :mod:`.advice` — the turn advice and the dice statistics (the advisor itself: :mod:`kosti.dashboard.advisor_api`).
"""
