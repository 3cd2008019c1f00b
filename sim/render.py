"""The procedural renderer in one import: six-sided pip dice, table tops and virtual-table frames.

Synthetic images with exact ground truth for the virtual table (:mod:`kosti.sim.virtual`), the synthetic
training data (:mod:`kosti.datasets.synth`), the test clips and the benchmarks. The code lives in three
modules, one job each:

* :mod:`kosti.sim.dice` — die styles (:data:`STYLES`, :func:`random_style`, :func:`wide_style`), body
  textures and one die on a transparent canvas (:func:`render_die`, :func:`render_styled`);
* :mod:`kosti.sim.compose` — alpha compositing with a soft shadow (:func:`paste`), blur and noise helpers;
* :mod:`kosti.sim.table_top` — table tops (:data:`BACKGROUNDS`, :func:`make_background`) and whole frames
  of dice on a table with their boxes (:func:`render_table`).

Everything is OpenCV + NumPy, deterministic for a given seed; colours are BGR ``uint8`` triples.
"""

from kosti.sim.compose import blur_sprite, motion_kernel, paste, smooth_noise, soft_blur
from kosti.sim.dice import (
    PIP_LAYOUTS,
    PIP_PAINTS,
    STYLES,
    Color,
    DieStyle,
    RenderedDie,
    random_style,
    render_die,
    render_styled,
    texture_body,
    wide_style,
)
from kosti.sim.table_top import BACKGROUNDS, WIDE_BACKGROUNDS, make_background, render_table

__all__ = [
    "BACKGROUNDS", "PIP_LAYOUTS", "PIP_PAINTS", "STYLES", "WIDE_BACKGROUNDS", "Color", "DieStyle", "RenderedDie",
    "blur_sprite", "make_background", "motion_kernel", "paste", "random_style", "render_die", "render_styled",
    "render_table", "smooth_noise", "soft_blur", "texture_body", "wide_style",
]
