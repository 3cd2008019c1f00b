"""kosti — a camera scorekeeper for the dice game 1000 (Тысяча), Farkle and 10000.

Subpackages (each a top-level folder of the repository):

* :mod:`kosti.engine` — the rules: score a throw, run the turn and the game (pure, no I/O).
* :mod:`kosti.vision` — frames → settled throws: sources, settle detection, the dice reader.
* :mod:`kosti.dashboard` — FastAPI live view, scoreboard and controls.
* :mod:`kosti.datasets` — synthetic data, capture, labelling, dataset YAMLs.
* :mod:`kosti.models` — the shipped weights and their model card.

Data flows one way: frames → throws → game events → views.
"""

__version__ = "0.1.0"
