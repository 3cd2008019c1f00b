"""Each reader and settle setting is declared once (issue 39): the ``[reader]`` / ``[settle]`` config models, the flags
of ``kosti read`` / ``kosti eval`` and the constructors agree with :class:`ReaderParams` / :class:`SettleParams` field
by field — names, defaults, bounds, descriptions."""

from __future__ import annotations

import argparse
import dataclasses
import textwrap

import pytest

from kosti.config.sections import ReaderSettings, SettleSettings
from kosti.vision.params import ReaderParams, SettingError, SettleParams, check_params, value_problem

#: Config keys of ``[reader]`` that are no reader setting: which model files, and the runtime (no ``auto`` there).
READER_CONFIG_ONLY = {"model", "detector", "classifier", "backend"}
BOUNDS = ("ge", "gt", "le", "lt", "multiple_of")


def _pydantic_bounds(info) -> dict[str, float]:
    out = {}
    for m in info.metadata:
        for k in BOUNDS:
            if getattr(m, k, None) is not None:
                out[k] = getattr(m, k)
    return out


@pytest.mark.parametrize(("params", "section", "config_only"),
                         [(ReaderParams, ReaderSettings, READER_CONFIG_ONLY), (SettleParams, SettleSettings, set())])
def test_the_config_section_is_the_dataclass_field_by_field(params, section, config_only):
    declared = {f.name: f for f in dataclasses.fields(params) if f.metadata["config"]}
    assert set(section.model_fields) - config_only == set(declared)
    for name, f in declared.items():
        info = section.model_fields[name]
        assert info.default == f.default, name
        bounds = {k: f.metadata[k] for k in BOUNDS if f.metadata[k] is not None}
        assert _pydantic_bounds(info) == ({} if f.metadata["off"] is not None else bounds), name
        assert info.description == textwrap.fill(f.metadata["doc"], 110, break_on_hyphens=False), name
        aliases = info.validation_alias.choices if info.validation_alias is not None else [name]
        assert list(aliases) == [name, *f.metadata["aliases"]], name
    # what the section hands on is the dataclass itself, every field set from the file
    section_values = section().model_dump(include=set(declared))
    built = section().reader_params() if params is ReaderParams else section().settle_params()
    assert {k: getattr(built, k) for k in declared} == section_values


def _read_parser() -> argparse.ArgumentParser:
    from kosti.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["read"]


def _probe(value: float, whole: bool) -> str:
    return str(int(value)) if whole else repr(float(value))


def test_the_read_flags_are_the_dataclass_field_by_field():
    parser = _read_parser()
    actions = {a.dest: a for a in parser._actions}
    flagged = [f for f in dataclasses.fields(ReaderParams) if f.metadata["flag"]]
    assert {f.name for f in flagged} == {"conf", "iou", "value_conf", "tta", "verify_conf", "verify_prob",
                                          "verify_one_conf", "not_die_prob", "dim_gain", "zoom_below", "zoom_imgsz",
                                          "zoom_max", "threads"}
    for f in flagged:
        a = actions[f.name]
        assert a.default == f.default, f.name
        if isinstance(f.default, bool):
            assert a.option_strings == [f"--no-{f.name.replace('_', '-')}"] and a.const is False
            continue
        assert a.option_strings == [f"--{f.name.replace('_', '-')}"], f.name
        whole = isinstance(f.default, int)
        m = f.metadata
        for k in ("ge", "le"):  # inclusive bounds are accepted, a step beyond is refused
            if m[k] is not None:
                assert a.type(_probe(m[k], whole)) == m[k], (f.name, k)
                beyond = m[k] - 1 if k == "ge" else m[k] + 1
                with pytest.raises(argparse.ArgumentTypeError):
                    a.type(_probe(beyond, whole) if whole else _probe(m[k] + (-0.001 if k == "ge" else 0.001), whole))
        for k in ("gt", "lt"):  # exclusive bounds are refused
            if m[k] is not None:
                with pytest.raises(argparse.ArgumentTypeError):
                    a.type(_probe(m[k], whole))
        if m["off"] is not None:
            assert a.type(_probe(m["off"], whole)) == m["off"]
        if m["multiple_of"]:
            with pytest.raises(argparse.ArgumentTypeError, match="multiple of"):
                a.type(str(m["ge"] + 1))


def test_the_read_flags_build_the_reader_params(tmp_path):
    parser = _read_parser()
    args = parser.parse_args(["--conf", "0.4", "--no-tta", "--zoom-max", "1920", "--threads", "2", "x.png"])
    from kosti.vision.params import params_from_args

    p = params_from_args(ReaderParams, args, backend="onnx")
    assert p == dataclasses.replace(ReaderParams(), conf=0.4, tta=False, zoom_max=1920, threads=2, backend="onnx")
    assert p.zoom_asked() and not ReaderParams().zoom_asked()


def test_declared_bounds_are_checked_with_one_message():
    assert value_problem("conf", 1.0, dataclasses.fields(ReaderParams)[0].metadata) == "conf must be > 0 and < 1, got 1"
    with pytest.raises(SettingError, match=r"dim_gain must be 0 \(off\), or ≥ 1 and < 2.5, got 0.5"):
        check_params(ReaderParams(dim_gain=0.5))
    with pytest.raises(SettingError, match="zoom_imgsz must be ≥ 672 and ≤ 2048, a multiple of 32, got 700"):
        check_params(ReaderParams(zoom_imgsz=700))
    check_params(ReaderParams(zoom_imgsz=700), step=False)  # the reader rounds a side up to its stride
    check_params(ReaderParams())
    check_params(SettleParams())


def test_the_constructors_refuse_what_the_declaration_refuses_at_the_physical_bounds():
    """The reader's and the settle detector's own checks are never narrower than the declaration, and refuse the
    physical impossibilities the declaration also refuses (a probability above 1, a negative still time)."""
    from kosti.vision.reader import DiceReader, ReaderSettingsError
    from kosti.vision.settle import SettleDetector

    for name, bad in (("value_conf", 1.5), ("iou", 0.0), ("not_die_prob", 0.0), ("dim_gain", 0.5),
                      ("verify_prob", -0.1), ("nested_frac", 0.0), ("backend", "tflite")):
        assert value_problem(name, bad, dict(next(f for f in dataclasses.fields(ReaderParams)
                                                  if f.name == name).metadata)), name
        with pytest.raises(ReaderSettingsError, match=name):  # refused before any model is loaded
            DiceReader("no-such-detector.onnx", params=ReaderParams(**{name: bad}))
    with pytest.raises(ReaderSettingsError, match="unknown reader setting"):
        DiceReader(conf_threshold=0.5)
    for name, bad in (("still_s", -1.0), ("dim_gain", 0.5), ("die_fraction", 0.0)):
        with pytest.raises(ValueError):
            SettleDetector(**{name: bad})
    assert SettleDetector(SettleParams(still_s=0.7)).still_s == 0.7
    with pytest.raises(TypeError):
        SettleDetector(still_time=0.7)  # only declared names


def _bound_probes(m: dict) -> tuple[list[float], list[float]]:
    """Values a setting with declared ``metadata`` ``m`` accepts (its inclusive bounds, its default) and refuses
    (its exclusive bounds, a step beyond each bound)."""
    ok, bad = [m["default"]], []
    for k, step in (("ge", -0.001), ("le", 0.001)):
        if m[k] is not None:
            ok.append(m[k])
            bad.append(m[k] + step)
    for k in ("gt", "lt"):
        if m[k] is not None:
            bad.append(m[k])
    return ok, bad


def test_the_dashboard_thresholds_are_the_declared_live_thresholds_field_by_field():
    """``PUT /api/settings``'s thresholds, the stored row's check, the table's defaults and the runner's
    :class:`Tuning` take their names, bounds and defaults from :data:`LIVE_THRESHOLDS`: a literal written into
    one of them again (the dashboard once capped ``still_s`` at 5 s where the config allows 10) fails here."""
    from pydantic import ValidationError

    from kosti.dashboard.schemas import Thresholds
    from kosti.dashboard.table_settings import DEFAULT_SETTINGS, tuning, valid_stored_settings
    from kosti.vision.params import LIVE_THRESHOLDS, meta
    from kosti.vision.runner import Tuning

    assert set(Thresholds.model_fields) == set(LIVE_THRESHOLDS)
    assert {f.name for f in dataclasses.fields(Tuning)} == {"zones", *LIVE_THRESHOLDS}
    assert tuning({"thresholds": {"still_s": 0.7}}) == Tuning(zones=tuning({}).zones, still_s=0.7)
    for name, cls in LIVE_THRESHOLDS.items():
        m = meta(cls, name)
        info = Thresholds.model_fields[name]
        assert info.default is None, name  # left out = unchanged
        assert _pydantic_bounds(info) == {k: m[k] for k in ("ge", "gt", "le", "lt") if m[k] is not None}, name
        assert info.description is not None and info.description.startswith(m["doc"]), name
        ok, bad = _bound_probes(m)
        # a valid value of another threshold, kept beside a bad one (each threshold is judged on its own)
        other = {"value_conf": 0.5} if name != "value_conf" else {"still_s": 1.0}
        for v in ok:
            assert getattr(Thresholds(**{name: v}), name) == v, (name, v)
            assert valid_stored_settings({"thresholds": {name: v}}) == {"thresholds": {name: v}}, (name, v)
        for v in bad:
            with pytest.raises(ValidationError):
                Thresholds(**{name: v})
            assert valid_stored_settings({"thresholds": {name: v, **other}}) == {"thresholds": other}, (name, v)
        assert valid_stored_settings({"thresholds": {name: "0.5"}}) == {"thresholds": {}}, name  # text, no number
    assert meta(SettleParams, "still_s")["le"] == 10.0  # the one bound of the still time, the dashboard's too
    defaults = DEFAULT_SETTINGS["thresholds"]
    assert isinstance(defaults, dict) and defaults
    assert defaults == {k: meta(LIVE_THRESHOLDS[k], k)["default"] for k in defaults}


def test_the_settings_page_inputs_stay_within_the_declared_bounds():
    """The Settings page's number inputs offer no value the API refuses, and reach the declared inclusive bound."""
    import re
    from pathlib import Path

    import kosti.dashboard
    from kosti.vision.params import LIVE_THRESHOLDS, meta

    html = (Path(kosti.dashboard.__file__).parent / "static" / "index.html").read_text(encoding="utf-8")
    for input_id, name in (("set-conf", "conf"), ("set-value-conf", "value_conf"), ("set-still", "still_s")):
        tag = re.search(rf'<input id="{input_id}"[^>]*>', html)
        assert tag, input_id
        lo, hi = (float(re.search(rf'{a}="([^"]+)"', tag.group(0)).group(1)) for a in ("min", "max"))
        m = meta(LIVE_THRESHOLDS[name], name)
        assert value_problem(name, lo, m) is None and value_problem(name, hi, m) is None, (name, lo, hi)
        if m["le"] is not None:
            assert hi == m["le"], name
