"""Settings, sources and errors of the synthetic scene generator (:mod:`kosti.datasets.synth`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kosti.sim.render import (
    BACKGROUNDS,
    STYLES,
    WIDE_BACKGROUNDS,
)

#: Default location of the shared photos: ``<repo>/../shared/datasets`` (valid in a source checkout).
DEFAULT_REAL_ROOT = Path(__file__).resolve().parents[2] / "shared" / "datasets"
#: The only (dataset, split) pairs whose photos may feed synthetic data. skovy-webcam is evaluation-only.
REAL_SOURCES: tuple[tuple[str, str], ...] = (("byler-d6", "train"), ("rune55-dedup", "train"))
#: Classifier class folders: faces 1–6 and ``x`` (unreadable / not a die).
CROP_CLASSES: tuple[str, ...] = ("1", "2", "3", "4", "5", "6", "x")
_IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp")

ATTRIBUTION = """\
# Attribution

Synthetic images in this folder contain material derived from these photo collections:

* byler-d6 — nell-byler/dice_detection, BSD 3-Clause License.
  Copyright (c) 2019, Nell Byler. All rights reserved.
  Redistribution and use in source and binary forms, with or without modification, are permitted
  provided that the following conditions are met: (1) Redistributions of source code must retain the
  above copyright notice, this list of conditions and the following disclaimer. (2) Redistributions
  in binary form must reproduce the above copyright notice, this list of conditions and the
  following disclaimer in the documentation and/or other materials provided with the distribution.
  (3) Neither the name of the copyright holder nor the names of its contributors may be used to
  endorse or promote products derived from this software without specific prior written permission.
  THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR
  IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND
  FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR
  CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
  DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
  DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER
  IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF
  THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
* rune55 (Roboflow Universe, rune-zkmvl), CC BY 4.0 — https://universe.roboflow.com/rune-zkmvl/rune55,
  https://creativecommons.org/licenses/by/4.0/ . Changes: dice cut out, scaled, rotated and pasted
  onto other backgrounds; backgrounds cropped with dice painted out; recoloured, blurred, noised.
"""


class SynthError(ValueError):
    """Bad settings or missing inputs for the generator (CLI exit code 2)."""

    exit_code = 2


@dataclass(frozen=True)
class SynthConfig:
    """Settings of the scene generator (all sizes in pixels of the square output image).

    Attributes:
        imgsz: side of each scene image.
        classes: ``"die"`` (one class) or ``"faces"`` (class k = face k+1) for detector labels.
        styles: restrict procedural dice to these :data:`kosti.sim.render.STYLES` names; empty =
            named styles and random colours.
        real_frac: probability that a die is a real crop (0 = procedural dice only; needs photos
            otherwise).
        real_bg_frac: probability that the table top is a crop of a real training photo.
        min_die, max_die: die size range (side of the top face), drawn log-uniformly per scene.
        max_dice: most dice in one scene.
        neg_frac: share of scenes without dice (negatives: table top and distractors only).
        min_visible: least visible fraction of a die's silhouette for a detector label.
        val_frac: share of scenes that go to the ``val`` split.
        backgrounds: restrict procedural table tops to these
            :data:`kosti.sim.render.BACKGROUNDS` names; empty = all.
        degrade: apply the camera degradations (perspective warp, blur, rolling dice, glare,
            colour/exposure shifts, grayscale, noise, JPEG quality 35–95). ``False`` gives clean
            scenes (JPEG quality 95) for inspection and tests.
        oblique_frac: share of scenes seen by a camera looking at the table from the side (a webcam on
            a shelf, a phone held at an angle): every rendered die of the scene leans the same way by
            ``|tilt|`` 0.2–0.45 of its side, so two side faces show (:func:`kosti.sim.render.render_die`).
            Other scenes keep the near-top-down view (``|tilt|`` ≈ 0.1). 0 (default) draws nothing extra
            from the scene's random stream, so earlier seeds give the same scenes.
        wide: the wide generator (issue 11): dice styles from the whole hue circle, light pips on dark
            bodies, coloured pips, translucent, marbled and wooden dice (:func:`kosti.sim.render.wide_style`,
            60 % of rendered dice), the table tops of :data:`kosti.sim.render.WIDE_BACKGROUNDS`, the
            hard negatives of :data:`_WIDE_CLUTTER_KINDS` beside the usual distractors, distractors
            among dice in 60 % of scenes (30 % otherwise), and colour changes a die survives (channel
            swaps and hue rotation of the whole scene, 20 %). ``False`` (default) draws nothing extra, so
            earlier seeds give the same scenes.
    """

    imgsz: int = 640
    classes: str = "die"
    styles: tuple[str, ...] = ()
    real_frac: float = 0.5
    real_bg_frac: float = 0.2
    min_die: float = 16.0
    max_die: float = 200.0
    max_dice: int = 6
    neg_frac: float = 0.08
    min_visible: float = 0.6
    val_frac: float = 0.1
    backgrounds: tuple[str, ...] = ()
    degrade: bool = True
    oblique_frac: float = 0.0
    wide: bool = False

    def check(self) -> None:
        """Raise :class:`SynthError` for out-of-range settings."""
        if self.classes not in ("die", "faces"):
            raise SynthError(f"classes must be 'die' or 'faces', got {self.classes!r}")
        if not 64 <= self.imgsz <= 4096:
            raise SynthError(f"imgsz must be 64-4096, got {self.imgsz}")
        allowed = WIDE_BACKGROUNDS if self.wide else BACKGROUNDS
        bad_bg = [b for b in self.backgrounds if b not in allowed]
        if bad_bg:
            raise SynthError(f"unknown background(s) {', '.join(bad_bg)}; choose from {', '.join(allowed)}")
        bad = [s for s in self.styles if s not in STYLES]
        if bad:
            raise SynthError(f"unknown style(s) {', '.join(bad)}; choose from {', '.join(STYLES)}")
        for name in ("real_frac", "real_bg_frac", "neg_frac", "val_frac", "min_visible", "oblique_frac"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise SynthError(f"{name} must be within 0-1, got {v}")
        if not 8 <= self.min_die <= self.max_die:
            raise SynthError(f"need 8 <= min_die <= max_die, got {self.min_die}, {self.max_die}")
        if not 1 <= self.max_dice <= 30:
            raise SynthError(f"max_dice must be 1-30, got {self.max_dice}")
