"""kosti.registry: versions, atomic active pointer, rollback, refusing worse models; kosti models CLI."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
from pathlib import Path

import ci_guard
import pytest

from kosti.models_cli import main as models_main
from kosti.registry import SHIPPED, Registry, RegistryError, compare_metrics

onnx = ci_guard.need_module("onnx", "the onnx package (train extra) builds the tiny test models")
from onnx import TensorProto, helper  # noqa: E402


def tiny_onnx(path: Path, name: str = "m") -> Path:
    """A real, loadable one-node ONNX model (Identity on a 1×3 float tensor)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], name, [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def ncnn_dir(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "model.ncnn.param").write_text("7767517\n1 1\nInput in0 0 1 in0\n")
    (path / "model.ncnn.bin").write_bytes(b"\0" * 16)
    return path


METRICS_A = {"data": "rune55-dedup/test", "image_exact": 0.90, "die_accuracy": 0.985, "mAP50_95": 0.80}
METRICS_WORSE = {"data": "rune55-dedup/test", "image_exact": 0.85, "die_accuracy": 0.990, "mAP50_95": 0.85}
METRICS_TIE_BETTER = {"data": "rune55-dedup/test", "image_exact": 0.90, "die_accuracy": 0.990, "mAP50_95": 0.70}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    src = tmp_path / "train-out"
    src.mkdir()
    return {"det": tiny_onnx(src / "best_det.onnx", "det"), "cls": tiny_onnx(src / "best_cls.onnx", "cls")}


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    d = tmp_path / "shipped"
    d.mkdir()
    tiny_onnx(d / "dice_det.onnx")
    tiny_onnx(d / "dice_cls.onnx")
    return d


@pytest.fixture
def reg(tmp_path: Path, shipped: Path) -> Registry:
    return Registry(tmp_path / "models", shipped_dir=shipped)


def test_fresh_registry_serves_the_shipped_models(reg: Registry, shipped: Path) -> None:
    assert reg.active_version() == SHIPPED
    assert reg.change_token() is None
    p = reg.active_paths()
    assert (p.detector, p.classifier) == (shipped / "dice_det.onnx", shipped / "dice_cls.onnx")
    assert not p.has_ncnn
    [v] = reg.list_versions()
    assert v.version == SHIPPED and v.active and v.metrics == {}
    assert not reg.root.exists(), "reading must not create files"


def test_add_version_copies_everything(reg: Registry, files: dict[str, Path], tmp_path: Path) -> None:
    (files["cls"].parent / "reader.json").write_text('{"temperature": 1.7}')
    name = reg.add_version(files, METRICS_A, card="# dice v2\ntrained on rune55", source="run-7")
    assert re.fullmatch(r"\d{8}-\d{6}", name)
    d = reg.root / name
    assert reg.paths(name).reader_settings == d / "reader.json", "calibration beside the classifier is kept"
    assert json.loads((d / "reader.json").read_text()) == {"temperature": 1.7}
    assert (d / "det.onnx").read_bytes() == files["det"].read_bytes()
    assert (d / "cls.onnx").read_bytes() == files["cls"].read_bytes()
    assert json.loads((d / "metrics.json").read_text()) == METRICS_A
    assert (d / "card.md").read_text().startswith("# dice v2")
    meta = json.loads((d / "version.json").read_text())
    assert meta["version"] == name and meta["source"] == "run-7" and meta["created"].endswith("Z")
    assert reg.active_version() == SHIPPED, "adding does not activate"
    assert [v.version for v in reg.list_versions()] == [SHIPPED, name]
    second = reg.add_version(files, METRICS_A)
    assert second != name and second.startswith(name[:8])
    assert not [p for p in reg.root.iterdir() if p.name.startswith(".add-")], "no temp folders left"


def test_ncnn_exports_are_served_for_the_ncnn_backend(reg: Registry, files: dict[str, Path], tmp_path: Path) -> None:
    both = dict(files, det_ncnn=ncnn_dir(tmp_path / "d_ncnn"), cls_ncnn=ncnn_dir(tmp_path / "c_ncnn"))
    name = reg.add_version(both, METRICS_A, version="v2-ncnn")
    p = reg.paths(name)
    assert p.has_ncnn
    assert p.for_backend("ncnn") == (reg.root / name / "det_ncnn", reg.root / name / "cls_ncnn")
    assert p.for_backend("onnx") == (reg.root / name / "det.onnx", reg.root / name / "cls.onnx")
    assert "ncnn" in reg.list_versions()[1].backends
    with pytest.raises(RegistryError, match="has no NCNN export"):
        reg.paths(SHIPPED).for_backend("ncnn")
    with pytest.raises(RegistryError, match="both det_ncnn and cls_ncnn"):
        reg.add_version(dict(files, det_ncnn=tmp_path / "d_ncnn"), METRICS_A)
    with pytest.raises(RegistryError, match="not an NCNN export folder"):
        reg.add_version(dict(files, det_ncnn=tmp_path, cls_ncnn=tmp_path / "c_ncnn"), METRICS_A)


def test_bad_inputs_are_refused_and_store_nothing(reg: Registry, files: dict[str, Path], tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(b"not a protobuf at all" * 10)
    with pytest.raises(RegistryError, match="not a loadable ONNX model"):
        reg.add_version({"det": corrupt, "cls": files["cls"]}, METRICS_A)
    with pytest.raises(RegistryError, match="no such file"):
        reg.add_version({"det": tmp_path / "absent.onnx", "cls": files["cls"]}, METRICS_A)
    with pytest.raises(RegistryError, match=r"no such file \(reader_json\)"):
        reg.add_version(dict(files, reader_json=tmp_path / "absent.json"), METRICS_A)
    with pytest.raises(RegistryError, match="missing the 'cls'"):
        reg.add_version({"det": files["det"]}, METRICS_A)
    with pytest.raises(RegistryError, match="invalid model version name"):
        reg.add_version(files, METRICS_A, version="../escape")
    with pytest.raises(RegistryError, match="invalid model version name"):
        reg.add_version(files, METRICS_A, version=SHIPPED)
    bad_metrics = tmp_path / "m.json"
    bad_metrics.write_text("[1, 2]")
    with pytest.raises(RegistryError, match="must be a JSON object"):
        reg.add_version(files, bad_metrics)
    assert reg.version_names() == [SHIPPED]
    reg.add_version(files, METRICS_A, version="v1")
    with pytest.raises(RegistryError, match="already exists"):
        reg.add_version(files, METRICS_A, version="v1")
    with pytest.raises(RegistryError, match="unknown model version 'v9'; known: shipped, v1"):
        reg.use("v9")


def test_use_switches_and_rollback_returns(reg: Registry, files: dict[str, Path]) -> None:
    a = reg.add_version(files, METRICS_A, version="a")
    b = reg.add_version(files, METRICS_TIE_BETTER, version="b")
    tokens = {reg.change_token()}
    assert reg.use(a) == SHIPPED
    tokens.add(reg.change_token())
    assert reg.active_version() == a and reg.previous_version() == SHIPPED
    assert reg.active_paths().detector == reg.root / "a" / "det.onnx"
    assert reg.use(b) == a  # equal image_exact, better die_accuracy: accepted
    tokens.add(reg.change_token())
    assert reg.active_version() == b
    assert reg.rollback() == a
    tokens.add(reg.change_token())
    assert (reg.active_version(), reg.previous_version()) == (a, b)
    assert reg.rollback() == b, "a second rollback undoes the first"
    tokens.add(reg.change_token())
    assert len(tokens) == 5, "every switch changes the token"
    token = reg.change_token()
    assert reg.use(b) == b and reg.change_token() == token, "re-activating the active version is a no-op"
    pointer = json.loads(reg.pointer.read_text())
    assert pointer["serial"] == 4 and pointer["version"] == b


def test_rollback_with_no_history_is_refused(reg: Registry) -> None:
    with pytest.raises(RegistryError, match="nothing to roll back to"):
        reg.rollback()


def test_worse_model_is_refused_unless_forced(reg: Registry, files: dict[str, Path], shipped: Path) -> None:
    (shipped / "metrics.json").write_text(json.dumps(METRICS_A))
    worse = reg.add_version(files, METRICS_WORSE, version="worse")
    with pytest.raises(RegistryError, match=r"worse than the active 'shipped' \(image_exact 0\.85 < 0\.9\)"):
        reg.use(worse)
    assert reg.active_version() == SHIPPED and reg.change_token() is None
    with pytest.raises(RegistryError, match="worse"):
        reg.add_version(files, METRICS_WORSE, version="worse2", activate=True)
    assert "worse2" in reg.version_names(), "a refused activation keeps the version registered"
    blind = reg.add_version(files, None, version="blind")
    with pytest.raises(RegistryError, match="has no metrics.json"):
        reg.use(blind)
    other = reg.add_version(files, dict(METRICS_A, data="byler-d6/test", image_exact=0.99), version="other")
    with pytest.raises(RegistryError, match="different data"):
        reg.use(other)
    assert reg.use(worse, force=True) == SHIPPED
    assert reg.active_version() == worse
    assert reg.rollback() == SHIPPED


def test_compare_metrics_order_and_tolerance() -> None:
    assert compare_metrics(METRICS_WORSE, METRICS_A)[0] == -1
    assert compare_metrics(METRICS_A, METRICS_WORSE)[0] == 1
    assert compare_metrics(METRICS_TIE_BETTER, METRICS_A) == (1, "die_accuracy 0.99 > 0.985")
    assert compare_metrics(METRICS_WORSE, METRICS_A, tolerance=0.1)[0] == 0
    assert compare_metrics({"recall": 0.5}, {"image_exact": 0.9}) == (0, "no metric differs")


def _writer(root: str, shipped: str, n: int) -> None:
    reg = Registry(root, shipped_dir=shipped)
    for i in range(n):
        reg.use("a" if i % 2 == 0 else "b", force=True)


def test_pointer_is_never_half_written(reg: Registry, files: dict[str, Path], shipped: Path) -> None:
    reg.add_version(files, METRICS_A, version="a")
    reg.add_version(files, METRICS_A, version="b")
    reg.use("a")
    writer = mp.get_context("spawn").Process(target=_writer, args=(str(reg.root), str(shipped), 200))
    writer.start()
    seen: set[str] = set()
    reads = 0
    while writer.is_alive() or reads == 0:
        data = json.loads(reg.pointer.read_text())  # raises on a torn file
        seen.add(data["version"])
        assert set(data) == {"version", "previous", "serial", "activated_at"}
        reads += 1
    writer.join()
    assert writer.exitcode == 0
    assert seen <= {"a", "b"} and reads > 10
    assert sorted(p.name for p in reg.root.iterdir()) == [".lock", "a", "active.json", "b"]


def test_failed_write_leaves_the_old_pointer(reg: Registry, files: dict[str, Path],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    reg.add_version(files, METRICS_A, version="a")
    reg.add_version(files, METRICS_A, version="b")
    reg.use("a")
    before = reg.pointer.read_bytes()

    def crash(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError, match="No space left"):
        reg.use("b")
    assert reg.pointer.read_bytes() == before and reg.active_version() == "a"
    assert not [p for p in reg.root.iterdir() if p.name.startswith(".active-")], "temp file removed"


def test_malformed_pointer_is_reported(reg: Registry) -> None:
    reg.root.mkdir(parents=True)
    reg.pointer.write_text('{"previous": "a"}')
    with pytest.raises(RegistryError, match="malformed pointer"):
        reg.active_version()


def test_default_registry_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kosti.common.data_dir as R

    system = tmp_path / "var-lib-kosti"
    monkeypatch.setattr(R, "SYSTEM_DATA_DIR", system)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert Registry().root == tmp_path / "data" / "kosti" / "models"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")  # XDG spec: relative values are invalid
    assert Registry().root == Path.home() / ".local" / "share" / "kosti" / "models"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert Registry().root == Path.home() / ".local" / "share" / "kosti" / "models"
    system.mkdir()  # the service's data folder exists: an admin's `kosti models` manages the service's models
    assert Registry().root == system / "models"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert Registry().root == tmp_path / "data" / "kosti" / "models", "XDG_DATA_HOME still wins"


def test_config_reader_follows_the_active_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  files: dict[str, Path]) -> None:
    from kosti.config import ConfigError, load_config

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    default = Registry()
    v = default.add_version(files, METRICS_A, version="v7")
    cfg_file = tmp_path / "k.toml"
    cfg_file.write_text('[reader]\nmodel = "active"\n')
    reader = load_config(cfg_file).reader
    default.use(v, force=True)
    det, cls, version = reader.model_paths()
    assert (det, cls, version) == (default.root / "v7" / "det.onnx", default.root / "v7" / "cls.onnx", "v7")
    cfg_file.write_text('[reader]\nmodel = "v7"\nbackend = "ncnn"\n')
    with pytest.raises(ConfigError, match=r"reader\.backend: model version 'v7' has no NCNN export"):
        load_config(cfg_file)


def test_models_cli(tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str],
                    monkeypatch: pytest.MonkeyPatch, shipped: Path) -> None:
    monkeypatch.setattr("kosti.models.MODELS_DIR", shipped)
    (shipped / "metrics.json").write_text(json.dumps(METRICS_A))
    root = str(tmp_path / "reg")
    metrics = tmp_path / "eval.json"
    metrics.write_text(json.dumps(METRICS_WORSE))
    rc = models_main(["add", "--registry", root, "--det", str(files["det"]), "--cls", str(files["cls"]),
                      "--metrics", str(metrics), "--name", "v2", "--json"])
    assert rc == 0 and json.loads(capsys.readouterr().out) == {"version": "v2", "active": SHIPPED,
                                                               "activated": False}
    assert models_main(["use", "--registry", root, "v2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "worse than the active 'shipped'" in err and "--force" in err
    assert models_main(["use", "--registry", root, "v2", "--force", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"action": "use", "active": "v2", "previous": SHIPPED}
    assert models_main(["list", "--registry", root, "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["active"] == "v2" and listing["previous"] == SHIPPED
    assert [(v["version"], v["active"]) for v in listing["versions"]] == [(SHIPPED, False), ("v2", True)]
    assert listing["versions"][1]["metrics"]["image_exact"] == 0.85
    # the tiny test models cannot read photos: listed as not measured, the command still succeeds
    assert listing["versions"][1]["reference"] is None and listing["versions"][1]["reference_error"]
    assert models_main(["list", "--registry", root]) == 0
    assert re.search(r"^\* v2 .*not measured", capsys.readouterr().out, re.M)
    assert models_main(["rollback", "--registry", root]) == 0
    assert "active model: shipped (was v2)" in capsys.readouterr().out
    assert Registry(root).active_version() == SHIPPED


def test_watcher_reports_each_switch_once(reg: Registry, files: dict[str, Path]) -> None:
    from kosti.registry import ActiveModelWatcher

    reg.add_version(files, METRICS_A, version="a")
    w = ActiveModelWatcher(reg, min_interval_s=1.0)
    assert w.current.version == SHIPPED and w.poll(now=10.0) is None
    reg.use("a")
    assert w.poll(now=10.5) is None, "checked at most once per interval"
    new = w.poll(now=11.1)
    assert new is not None and new.version == "a" and new.detector == reg.root / "a" / "det.onnx"
    assert w.poll(now=12.2) is None, "reported once"
    reg.rollback()
    assert w.poll(now=13.3).version == SHIPPED  # type: ignore[union-attr]
    # a pointer to a broken version is ignored (the running reader keeps its models) and reported
    reg.use("a")
    (reg.root / "a" / "cls.onnx").unlink()
    assert w.poll(now=14.4) is None and "incomplete" in (w.last_error or "")
    assert w.current.version == SHIPPED
