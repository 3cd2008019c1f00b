"""NCNN folders that hold the INT8 ONNX reader's own weights, so the Pi's NCNN reader reads as the shipped one.

``kosti export --format ncnn`` makes the NCNN folders from the float ``.pt`` weights (pnnx, float16 weights), while the
shipped reader is the INT8 ONNX file quantised from them (:mod:`kosti.datasets.quantize`: weights rounded to 7 bits
per output channel). The two read a little differently: boxes near a threshold fall on the other side (epanemu-dice
val precision 0.850 against 0.859, recall 0.775 against 0.782). :func:`int8_weights_into_ncnn` writes into an NCNN
folder the INT8 file's weights, dequantized (``(q − zero_point) · scale``, ONNX ``DequantizeLinear``), each layer of
the NCNN graph matched to its ONNX twin; NCNN still computes on float activations (float32 on x86, float16 on ARM).
With them the NCNN reader is within 0.005 of the ONNX one on the three shared sets the issue names (``models/
README.md``, "NCNN or ONNX on the Pi").

Only the weights change: the graph (``model.ncnn.param``), the file's layout and size and the float16 storage stay
as pnnx wrote them. Needs the ``onnx`` package (the ``train`` extra); the result runs on the ``ncnn`` package alone.
"""

from __future__ import annotations

import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: NCNN's tag before a float16 weight blob in ``model.ncnn.bin`` (ncnn ``ModelBinFromDataReader``); 0 = raw float32.
FP16_TAG = 0x01306B47
#: Layers whose weights ``model.ncnn.bin`` holds, with the param ids of ``(num_output, bias_term, weight_data_size)``
#: (ncnn's operators documentation).
WEIGHTED = {"Convolution": (0, 5, 6), "ConvolutionDepthWise": (0, 5, 6), "InnerProduct": (0, 1, 2)}
#: Largest difference allowed between a layer's NCNN weights and its ONNX twin, as a share of the output channel's
#: largest weight: 7-bit rounding moves a weight by at most 1/128 ≈ 0.008 of it, float16 by 0.001; another layer's
#: weights differ by far more (≈ 1).
TWIN_TOLERANCE = 0.02


class NcnnWeightsError(ValueError):
    """The INT8 weights cannot be written into the NCNN folder (another model, an unknown layout): one line, exit 2
    on the command line; the folder is left as it was."""

    exit_code = 2


@dataclass(frozen=True)
class WeightsReport:
    """What :func:`int8_weights_into_ncnn` wrote.

    Attributes:
        folder: the NCNN folder written.
        layers: weighted layers replaced (all of the graph's).
        worst: the largest difference between a layer's old and new weights, as a share of its output channel's
            largest weight (≤ :data:`TWIN_TOLERANCE`).
    """

    folder: Path
    layers: int
    worst: float


def onnx_layer_weights(onnx_file: Path) -> list[tuple[str, np.ndarray, np.ndarray | None]]:
    """Every convolution and linear layer of an ONNX model in graph order: ``(node name, weights float32 (out, …),
    bias float32 (out,) or None)``; quantised (QDQ) weights and biases are dequantized.

    Raises:
        NcnnWeightsError: a weight that is neither a constant nor a ``DequantizeLinear`` of one (not a plain export).
    """
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_file))
    init = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    made_by = {out: node for node in model.graph.node for out in node.output}

    def value(name: str) -> np.ndarray:
        if name in init:
            return np.asarray(init[name], np.float32)
        node = made_by.get(name)
        if node is None or node.op_type != "DequantizeLinear" or node.input[0] not in init:
            raise NcnnWeightsError(f"{onnx_file}: weight {name!r} is not a constant or a DequantizeLinear of one")
        q = np.asarray(init[node.input[0]], np.float32)
        scale = np.asarray(init[node.input[1]], np.float32)
        zero = (np.asarray(init[node.input[2]], np.float32) if len(node.input) > 2 and node.input[2]
                else np.zeros_like(scale))
        if scale.size > 1:  # per channel, along the node's axis (ONNX's default: 1)
            axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
            shape = [1] * q.ndim
            shape[axis] = -1
            scale, zero = scale.reshape(shape), zero.reshape(shape)
        return np.asarray((q - zero) * scale, np.float32)

    layers = []
    for node in model.graph.node:
        if node.op_type in ("Conv", "Gemm"):
            bias = value(node.input[2]) if len(node.input) > 2 and node.input[2] else None
            layers.append((node.name, value(node.input[1]), bias))
    return layers


def float_activations(onnx_file: Path, out_file: Path) -> Path:
    """The INT8 (QDQ) ONNX model ``onnx_file`` computing on float activations: every activation's
    ``QuantizeLinear → DequantizeLinear`` pair removed, the weights' ``DequantizeLinear`` kept — what an NCNN folder
    written by :func:`int8_weights_into_ncnn` computes (up to float16 storage), so the reference it is checked
    against (``tests/vision/test_reader_ncnn.py``). Written to ``out_file``, which is returned.

    Raises:
        OSError: unreadable or unwritable files.
    """
    import onnx

    model = onnx.load(str(onnx_file))
    g = model.graph
    made_by = {out: node for node in g.node for out in node.output}
    rename: dict[str, str] = {}
    drop = set()
    for node in g.node:
        q = made_by.get(node.input[0]) if node.op_type == "DequantizeLinear" else None
        if q is not None and q.op_type == "QuantizeLinear":
            rename[node.output[0]] = q.input[0]
            drop.update({id(node), id(q)})
    outputs = {o.name for o in g.output}
    kept = []
    for node in g.node:
        if id(node) in drop:
            continue
        for i, name in enumerate(node.input):
            if name in rename:
                node.input[i] = rename[name]
        kept.append(node)
    for name in outputs & set(rename):  # a graph output made by a removed pair: passed through
        kept.append(onnx.helper.make_node("Identity", [rename[name]], [name]))
    del g.node[:]
    g.node.extend(kept)
    used = {name for node in kept for name in node.input}
    inits = [i for i in g.initializer if i.name in used]  # the removed pairs' scales and zero points
    del g.initializer[:]
    g.initializer.extend(inits)
    onnx.save(model, str(out_file))
    return out_file


def _layers(param: Path) -> list[tuple[str, str, int, int, bool]]:
    """The weighted layers of ``model.ncnn.param`` in file order: ``(type, name, num_output, weight_data_size,
    bias_term)``. Raises NcnnWeightsError for a layer type that stores weights this module does not know."""
    out = []
    for line in param.read_text().splitlines()[2:]:
        parts = line.split()
        if len(parts) < 4:
            continue
        kind, name, n_in, n_out = parts[0], parts[1], int(parts[2]), int(parts[3])
        if kind in ("MemoryData", "BatchNorm", "Scale", "PReLU", "Deconvolution", "DeconvolutionDepthWise",
                    "Embed", "LayerNorm", "MultiHeadAttention", "RNN", "LSTM", "GRU", "Gemm"):
            raise NcnnWeightsError(f"{param}: layer {name} ({kind}) may store weights; only {sorted(WEIGHTED)} are known")
        if kind not in WEIGHTED:
            continue
        values = dict(p.split("=", 1) for p in parts[4 + n_in + n_out:])
        i_out, i_bias, i_size = WEIGHTED[kind]
        out.append((kind, name, int(values[str(i_out)]), int(values[str(i_size)]),
                    values.get(str(i_bias), "0") == "1"))
    return out


def int8_weights_into_ncnn(onnx_file: Path, ncnn_dir: Path, out_dir: Path | None = None) -> WeightsReport:
    """Write into the NCNN folder ``ncnn_dir`` (or a copy of it, ``out_dir``) the weights of the INT8 ONNX model
    ``onnx_file`` exported from the same ``.pt``.

    Each weighted NCNN layer (convolution, depth-wise convolution, linear) is matched to the not yet used ONNX layer
    of the same shape whose weights are closest, and must lie within :data:`TWIN_TOLERANCE` of it (else this is not
    the same model); its weights (float16, as pnnx stored them) and bias (float32) are replaced by the ONNX ones.
    ``metadata.yaml`` records the source (``weights: <onnx file name> (INT8, dequantized)``).

    Returns:
        :class:`WeightsReport`.

    Raises:
        NcnnWeightsError: a layer without an ONNX twin, a weight format other than float16 / float32, or a ``.bin``
            whose size does not match the graph (the folder is then left as it was).
        OSError: unreadable or unwritable files.
    """
    ncnn_dir = Path(ncnn_dir)
    param, weights = ncnn_dir / "model.ncnn.param", ncnn_dir / "model.ncnn.bin"
    raw = weights.read_bytes()
    twins = onnx_layer_weights(onnx_file)
    used: set[int] = set()
    out = bytearray()
    pos, worst = 0, 0.0
    layers = _layers(param)
    for kind, name, n_out, size, has_bias in layers:
        if pos + 4 > len(raw):
            raise NcnnWeightsError(f"{weights}: ends before layer {name}'s weights")
        tag = struct.unpack_from("<I", raw, pos)[0]
        if tag not in (FP16_TAG, 0):
            raise NcnnWeightsError(f"{weights}: layer {name}: weight format tag {tag:#x} (float16 or float32 expected)")
        stored = 4 + ((size * 2 + 3) // 4 * 4 if tag == FP16_TAG else size * 4)
        if pos + stored + (4 * n_out if has_bias else 0) > len(raw):
            raise NcnnWeightsError(f"{weights}: ends inside layer {name}'s weights ({len(raw)} bytes)")
        old = np.frombuffer(raw, np.float16 if tag == FP16_TAG else np.float32, size, pos + 4).astype(np.float32)
        old_bias = np.frombuffer(raw, np.float32, n_out, pos + stored) if has_bias else None
        pos += stored + (4 * n_out if has_bias else 0)
        best: tuple[float, int] | None = None
        per_channel = old.reshape(n_out, -1)
        peak = np.abs(per_channel).max(axis=1) + 1e-12
        for i, (_, w, _) in enumerate(twins):
            if i in used or w.size != size or w.shape[0] != n_out:
                continue
            d = float((np.abs(w.reshape(n_out, -1) - per_channel).max(axis=1) / peak).max())
            if best is None or d < best[0]:
                best = (d, i)
        if best is None or best[0] > TWIN_TOLERANCE:
            near = "no layer of its shape" if best is None else f"the closest differs by {best[0]:.3f} of a channel"
            raise NcnnWeightsError(f"{onnx_file.name} is not the model of {ncnn_dir}: layer {name} ({kind}, {n_out} outputs, "
                             f"{size} weights) has no twin ({near})")
        used.add(best[1])
        worst = max(worst, best[0])
        _, w, b = twins[best[1]]
        flat = w.reshape(-1)
        if tag == FP16_TAG:
            data = flat.astype(np.float16).tobytes()
            out += struct.pack("<I", FP16_TAG) + data + b"\0" * (stored - 4 - len(data))
        else:
            out += struct.pack("<I", 0) + flat.astype(np.float32).tobytes()
        if has_bias:
            bias = b if b is not None else old_bias
            out += np.asarray(bias, np.float32).reshape(n_out).tobytes()
    if pos != len(raw):
        raise NcnnWeightsError(f"{weights}: {len(raw)} bytes, the graph's weighted layers account for {pos}")
    target = Path(out_dir) if out_dir is not None else ncnn_dir
    if target != ncnn_dir:
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(ncnn_dir, target)
    tmp = target / "model.ncnn.bin.tmp"
    tmp.write_bytes(bytes(out))
    tmp.replace(target / "model.ncnn.bin")
    _note_source(target / "metadata.yaml", onnx_file.name)
    return WeightsReport(target, len(layers), worst)


def _note_source(meta: Path, onnx_name: str) -> None:
    """Record in ``metadata.yaml`` where the weights came from (one ``weights:`` line, replaced if there)."""
    if not meta.is_file():
        return
    lines = [ln for ln in meta.read_text().splitlines() if not ln.startswith("weights:")]
    lines.append(f"weights: {onnx_name} (INT8, dequantized; kosti.datasets.ncnn_weights)")
    meta.write_text("\n".join(lines) + "\n")


def _main(argv: list[str] | None = None) -> None:
    """``python -m kosti.datasets.ncnn_weights INT8.onnx NCNN_DIR [OUT_DIR]``: write one folder, print what was done;
    bad input (a missing file, another model, no ``onnx`` package) is one line on stderr and exit 2."""
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m kosti.datasets.ncnn_weights",
        description="Write the weights of an INT8 ONNX reader model into the NCNN folder exported from the same .pt "
                    "weights, so the NCNN reader (the Raspberry Pi's lean runtime) reads as the ONNX one "
                    "(models/README.md, 'NCNN or ONNX on the Pi'). Needs the train extra (bash scripts/setup --train).")
    ap.add_argument("onnx", type=Path, metavar="INT8.onnx", help="the INT8 ONNX file (e.g. models/dice_det.onnx)")
    ap.add_argument("ncnn_dir", type=Path, metavar="NCNN_DIR",
                    help="the NCNN folder exported from the same .pt (kosti export --format ncnn)")
    ap.add_argument("out_dir", type=Path, nargs="?", metavar="OUT_DIR",
                    help="where to write a copy with the new weights (default: NCNN_DIR itself)")
    a = ap.parse_args(argv)
    try:
        for path, what in ((a.onnx, "INT8 ONNX file"), (a.ncnn_dir / "model.ncnn.param", "NCNN folder")):
            if not path.is_file():
                raise NcnnWeightsError(f"{what} not found: {path}")
        import onnx  # noqa: F401 - the train extra, checked before any work
    except ModuleNotFoundError:
        ap.exit(2, "error: the onnx package is missing: install the train extra (bash scripts/setup --train)\n")
    except NcnnWeightsError as exc:
        ap.exit(2, f"error: {exc}\n")
    try:
        r = int8_weights_into_ncnn(a.onnx, a.ncnn_dir, a.out_dir)
    except (NcnnWeightsError, OSError) as exc:
        ap.exit(2, f"error: {exc}\n")
    print(f"{r.folder}: {r.layers} layers from {a.onnx.name}, largest change {r.worst:.4f} of a channel's weight")


if __name__ == "__main__":
    _main()
