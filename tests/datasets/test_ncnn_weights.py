"""The NCNN folders hold the shipped INT8 files' own weights (issue 44, :mod:`kosti.datasets.ncnn_weights`): the Pi's
NCNN reader reads within 0.005 of the ONNX one on byler-d6 test, epanemu-dice val and rune55-dedup val
(``models/README.md``, "NCNN or ONNX on the Pi"); a folder of another model is refused and left as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import ci_guard
import pytest

from kosti.models import CLASSIFIER_NCNN, CLASSIFIER_ONNX, DETECTOR_NCNN, DETECTOR_ONNX

ci_guard.need_module("onnx", "reading the INT8 files' weights needs the onnx package (the train extra)")

from kosti.datasets.ncnn_weights import (  # noqa: E402
    TWIN_TOLERANCE,
    NcnnWeightsError,
    int8_weights_into_ncnn,
)


@pytest.mark.parametrize(("onnx_file", "folder", "layers"),
                         [(DETECTOR_ONNX, DETECTOR_NCNN, 87), (CLASSIFIER_ONNX, CLASSIFIER_NCNN, 40)])
def test_the_shipped_ncnn_folders_are_the_recipes_output(tmp_path: Path, onnx_file: Path, folder: Path,
                                                         layers: int) -> None:
    """Writing the INT8 file's weights into the committed folder again changes no byte: the committed weights are
    that file's, every layer matched to its twin within the 7-bit rounding (1/128 of a channel's largest weight)."""
    report = int8_weights_into_ncnn(onnx_file, folder, tmp_path / "again")
    assert report.layers == layers
    assert report.worst <= 1 / 128 + 1e-3 < TWIN_TOLERANCE
    assert (tmp_path / "again" / "model.ncnn.bin").read_bytes() == (folder / "model.ncnn.bin").read_bytes()
    assert (tmp_path / "again" / "model.ncnn.param").read_bytes() == (folder / "model.ncnn.param").read_bytes()
    assert f"weights: {onnx_file.name} (INT8" in (folder / "metadata.yaml").read_text()


def test_another_models_weights_are_refused_and_the_folder_is_left_as_it_was(tmp_path: Path) -> None:
    folder = tmp_path / "det"
    shutil.copytree(DETECTOR_NCNN, folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(NcnnWeightsError, match=r"dice_cls\.onnx is not the model of .*layer conv_1 .*no twin"):
        int8_weights_into_ncnn(CLASSIFIER_ONNX, folder)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_weights_file_that_does_not_fit_the_graph_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "cls"
    shutil.copytree(CLASSIFIER_NCNN, folder)
    (folder / "model.ncnn.bin").write_bytes((folder / "model.ncnn.bin").read_bytes() + b"\0\0\0\0")
    with pytest.raises(NcnnWeightsError, match="the graph's weighted layers account for"):
        int8_weights_into_ncnn(CLASSIFIER_ONNX, folder)
    (folder / "model.ncnn.bin").write_bytes((CLASSIFIER_NCNN / "model.ncnn.bin").read_bytes()[:1000])
    with pytest.raises(NcnnWeightsError):
        int8_weights_into_ncnn(CLASSIFIER_ONNX, folder)


def test_kosti_export_int8_weights_only_with_ncnn_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from kosti.cli import main

    pt = tmp_path / "dice_det.pt"
    pt.write_bytes(b"not used: refused before any export")
    assert main(["export", str(pt), "--format", "onnx", "--int8-weights", str(DETECTOR_ONNX)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--int8-weights" in err and "only with --format ncnn" in err
    assert main(["export", str(pt), "--format", "ncnn", "--int8-weights", str(tmp_path / "none.onnx")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_the_module_command_writes_a_folder_or_says_why_in_one_line(tmp_path: Path) -> None:
    """``python -m kosti.datasets.ncnn_weights``: a copy written and reported; a missing file or another model's
    folder is one line on stderr and exit 2 (a new user's trial found a traceback and exit 1)."""
    import subprocess
    import sys

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "kosti.datasets.ncnn_weights", *args], capture_output=True,
                              text=True, timeout=120)

    ok = run(str(CLASSIFIER_ONNX), str(CLASSIFIER_NCNN), str(tmp_path / "copy"))
    assert ok.returncode == 0 and "40 layers from dice_cls.onnx" in ok.stdout, ok.stderr
    assert (tmp_path / "copy" / "model.ncnn.bin").read_bytes() == (CLASSIFIER_NCNN / "model.ncnn.bin").read_bytes()
    for args, says in (((str(tmp_path / "none.onnx"), str(CLASSIFIER_NCNN)), "INT8 ONNX file not found"),
                       ((str(CLASSIFIER_ONNX), str(tmp_path / "nodir")), "NCNN folder not found"),
                       ((str(CLASSIFIER_ONNX), str(DETECTOR_NCNN), str(tmp_path / "x")), "is not the model of")):
        r = run(*args)
        assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and says in r.stderr, (args, r.stderr)
    assert not (tmp_path / "x").exists()
