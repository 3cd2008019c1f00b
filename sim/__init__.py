"""kosti.sim — simulation for demos, tests, training data and benchmarks; nothing here reads a camera.

* :mod:`kosti.sim.render` — the procedural renderer (dice, table tops, virtual-table frames);
* :mod:`kosti.sim.virtual` — the virtual dice table of ``kosti demo`` (a frame source that throws);
* :mod:`kosti.sim.replay` — a photo folder replayed as a camera stream with synthetic hand motion;
* :mod:`kosti.sim.synthetic` — quick synthetic dice frames for reader tests and benchmarks;
* :mod:`kosti.sim.untrained_models` — untrained YOLO11n models built from YAML (tests, benchmarks).

Data flows one way: ``sim`` uses the frame-source base of :mod:`kosti.vision`, never the reverse except
through :func:`kosti.vision.sources.open_source`, which opens ``virtual:`` and folder specs lazily.
"""
