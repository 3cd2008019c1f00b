"""The live pipeline: frames → settle → read → one :class:`Throw` per rest period.

The names of the pipeline, from the modules that hold them (import them from here or from there):

* :mod:`kosti.vision.throws` — :class:`Die`, :class:`Throw`, the :class:`Reader` protocol;
* :mod:`kosti.vision.vote` — voting over frames (:func:`dedupe`, :func:`vote`, :func:`recover_dice`) and the
  throw checks (:func:`check_throw`, :data:`BLOCKING_REASONS`): a throw is ``ok`` when the number of dice in the
  roll area equals ``expected_dice``, every die is read with confidence and no two boxes overlap, else
  ``uncertain`` with the reasons in English and Russian;
* :mod:`kosti.vision.throw_detector` — :class:`ThrowDetector`, the frame-by-frame core (no threads, no I/O),
  and its :class:`FrameResult`;
* :mod:`kosti.vision.overlay` — the live-view overlay (:func:`annotate`, built from small annotators) and the
  one JPEG encoder (:func:`encode_jpeg`);
* :mod:`kosti.vision.runner` — :class:`LivePipeline`, the one camera runner (``kosti run`` / ``demo``, ``watch``,
  ``capture``), and :func:`default_reader`.
"""

from __future__ import annotations

from kosti.vision.overlay import annotate, encode_jpeg, placeholder_frame
from kosti.vision.runner import LivePipeline, ReaderReload, RunnerObserver, Tuning, default_reader
from kosti.vision.throw_detector import FrameResult, ThrowDetector
from kosti.vision.throws import Die, Reader, Throw, TunableReader
from kosti.vision.vote import BLOCKING_REASONS, check_throw, dedupe, recover_dice, vote

__all__ = [
    "BLOCKING_REASONS", "Die", "FrameResult", "LivePipeline", "Reader", "ReaderReload", "RunnerObserver",
    "Throw", "ThrowDetector", "TunableReader", "Tuning", "annotate", "check_throw", "dedupe", "default_reader",
    "encode_jpeg", "placeholder_frame", "recover_dice", "vote",
]
