"""Model registry: versioned dice-reader weights with an atomically switched ``active`` pointer.

Retraining produces a new detector + face classifier pair; the registry keeps every pair as a
*version*, records its evaluation metrics, and lets a running dashboard switch to a new version
without a restart and without ever reading a half-written state.

Layout (``root`` defaults to ``default_data_dir() / "models"``: ``$XDG_DATA_HOME/kosti/models``, else the
service's ``/var/lib/kosti/models`` when readable, else ``~/.local/share/kosti/models``; the systemd unit
sets ``XDG_DATA_HOME=/var/lib`` so the service uses ``/var/lib/kosti/models``)::

    <root>/
      active.json                 pointer: {"version", "previous", "serial", "activated_at"}
      .lock                       flock(2) lock serialising writers (readers never lock)
      <version>/
        det.onnx                  YOLO detector, one class ``die`` (see kosti.models)
        cls.onnx                  YOLO-cls face classifier, classes 1..6 and x
        det_ncnn/  cls_ncnn/      optional Ultralytics NCNN exports (model.ncnn.param/.bin)
        reader.json               optional reader settings beside the classifier ({"temperature": T, "views": …})
        metrics.json              the ``kosti eval --json`` document of this version
        card.md                   optional model card
        version.json              {"version", "created", "source"}

The shipped weights in :data:`kosti.models.MODELS_DIR` are always available as version
``shipped`` (files ``dice_det.onnx``, ``dice_cls.onnx``, optional ``dice_det_ncnn_model/``,
``dice_cls_ncnn_model/``, ``metrics.json``, ``README.md``). With no pointer file, ``shipped`` is active.

Atomicity: the pointer is written to a temporary file in the same folder, flushed and fsync'ed, then
moved over ``active.json`` with :func:`os.replace`, which POSIX guarantees to be atomic on one file
system — a reader sees the old pointer or the new one, never a mix. New versions are copied into a
hidden temporary folder and renamed into place, so a half-copied version is never listed.

Change detection: :meth:`Registry.change_token` is one ``os.stat`` of the pointer (inode and
mtime in ns; ``os.replace`` always gives a new inode), cheap enough to poll once per frame or second.

"Worse" (refusing to activate): metrics are compared on :data:`COMPARE_METRICS` in order; the first
metric that both versions report and that differs by more than ``tolerance`` decides. The order puts
what the player sees first: ``image_exact`` (every die on the table found and read right), then
``die_accuracy``, then detection quality (``mAP50_95``, ``mAP50``, ``recall``, ``precision``).
Metrics measured on different data (``"data"`` keys differ) are not comparable and are refused too.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kosti.common.data_dir import default_data_dir

SHIPPED = "shipped"
POINTER_NAME = "active.json"
#: Metrics compared (higher is better), most important first; keys as in ``kosti eval --json``.
COMPARE_METRICS: tuple[str, ...] = (
    "image_exact", "die_accuracy", "mAP50_95", "mAP50", "recall", "precision",
)
#: File names inside a registry version folder.
DET_ONNX, CLS_ONNX, DET_NCNN, CLS_NCNN = "det.onnx", "cls.onnx", "det_ncnn", "cls_ncnn"
METRICS_JSON, CARD_MD, VERSION_JSON, READER_JSON = "metrics.json", "card.md", "version.json", "reader.json"
_VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_RESERVED = {SHIPPED, "active", "latest"}


class RegistryError(Exception):
    """A registry request that cannot be honoured (unknown version, worse metrics, bad files).

    ``exit_code`` 2 = bad input, per ``shared/docs/cli.md``.
    """

    exit_code = 2


@dataclass(frozen=True)
class ModelPaths:
    """Files of one model version. Paths are absolute; NCNN folders are ``None`` when not exported.

    ``detector``/``classifier`` are ONNX files; ``detector_ncnn``/``classifier_ncnn`` are
    Ultralytics NCNN export folders (``model.ncnn.param`` + ``model.ncnn.bin``). ``reader_settings`` is
    the ``reader.json`` beside the classifier (calibrated temperature and test-time views, read by
    :class:`kosti.vision.reader.DiceReader`), ``None`` when absent.
    """

    version: str
    detector: Path
    classifier: Path
    detector_ncnn: Path | None = None
    classifier_ncnn: Path | None = None
    metrics_file: Path | None = None
    card: Path | None = None
    reader_settings: Path | None = None

    @property
    def has_ncnn(self) -> bool:
        """True when both the detector and the classifier have an NCNN export."""
        return self.detector_ncnn is not None and self.classifier_ncnn is not None

    def for_backend(self, backend: str) -> tuple[Path, Path]:
        """Return ``(detector, classifier)`` for ``backend`` (``onnx``, ``ncnn`` or ``ultralytics``).

        ``ultralytics`` loads the ONNX files through Ultralytics' AutoBackend.
        Raises :class:`RegistryError` when ``ncnn`` is asked for and this version has no NCNN export.
        """
        if backend == "ncnn":
            if not self.has_ncnn:
                raise RegistryError(f"model version {self.version!r} has no NCNN export")
            assert self.detector_ncnn is not None and self.classifier_ncnn is not None
            return self.detector_ncnn, self.classifier_ncnn
        if backend in ("onnx", "ultralytics"):
            return self.detector, self.classifier
        raise RegistryError(f"unknown backend {backend!r}; expected onnx, ncnn or ultralytics")


@dataclass(frozen=True)
class VersionInfo:
    """One entry of :meth:`Registry.list_versions`.

    ``created`` is an ISO-8601 UTC timestamp (``None`` for ``shipped``); ``metrics`` is the version's
    ``metrics.json`` (empty when absent); ``backends`` lists the runtimes it can be served with.
    """

    version: str
    path: Path
    created: str | None
    active: bool
    metrics: dict[str, Any] = field(default_factory=dict)
    backends: tuple[str, ...] = ("onnx",)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (paths as strings)."""
        return {"version": self.version, "path": str(self.path), "created": self.created,
                "active": self.active, "backends": list(self.backends), "metrics": self.metrics}


def default_root() -> Path:
    """Default registry root: ``default_data_dir() / "models"``."""
    return default_data_dir() / "models"


def compare_metrics(candidate: Mapping[str, Any], reference: Mapping[str, Any],
                    tolerance: float = 0.0) -> tuple[int, str]:
    """Compare two ``kosti eval`` metric dicts; return ``(sign, reason)``.

    ``sign`` is -1 when ``candidate`` is worse, +1 better, 0 equal within ``tolerance`` or not
    comparable on any shared metric. The first metric of :data:`COMPARE_METRICS` present (as a
    number) in both and differing by more than ``tolerance`` decides. ``reason`` names it.
    """
    for key in COMPARE_METRICS:
        a, b = candidate.get(key), reference.get(key)
        if not isinstance(a, int | float) or not isinstance(b, int | float):
            continue
        if isinstance(a, bool) or isinstance(b, bool):
            continue
        if abs(a - b) > tolerance:
            sign = 1 if a > b else -1
            return sign, f"{key} {a:.4g} {'>' if sign > 0 else '<'} {b:.4g}"
    return 0, "no metric differs"


class Registry:
    """Versioned model store rooted at ``root`` (default :func:`default_root`).

    Readers (``active_version``, ``active_paths``, ``change_token``, ``list_versions``) never lock and
    never create files; writers (``add_version``, ``use``, ``rollback``) take an exclusive flock.
    ``shipped_dir`` is the folder of the shipped weights (default :data:`kosti.models.MODELS_DIR`).
    """

    def __init__(self, root: str | os.PathLike[str] | None = None,
                 shipped_dir: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()
        if shipped_dir is None:
            from kosti.models import MODELS_DIR

            shipped_dir = MODELS_DIR
        self.shipped_dir = Path(shipped_dir)

    # ------------------------------------------------------------------ reading
    @property
    def pointer(self) -> Path:
        """Path of the ``active.json`` pointer file."""
        return self.root / POINTER_NAME

    def _read_pointer(self) -> dict[str, Any]:
        try:
            data = json.loads(self.pointer.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise RegistryError(f"{self.pointer}: unreadable pointer ({exc})") from exc
        if not isinstance(data, dict) or not isinstance(data.get("version"), str):
            raise RegistryError(f"{self.pointer}: malformed pointer (no 'version')")
        return data

    def active_version(self) -> str:
        """Name of the active version (``"shipped"`` when nothing was ever activated)."""
        return self._read_pointer().get("version", SHIPPED)

    def previous_version(self) -> str | None:
        """The version that was active before the current one (the :meth:`rollback` target)."""
        prev = self._read_pointer().get("previous")
        return prev if isinstance(prev, str) else None

    def change_token(self) -> tuple[int, int] | None:
        """Cheap token that changes whenever the active version changes: ``(st_ino, st_mtime_ns)``.

        ``None`` while no pointer exists (``shipped`` active). One ``stat`` call, no file read; poll it
        and re-read :meth:`active_paths` when it differs from the last value seen.
        """
        try:
            st = os.stat(self.pointer)
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_mtime_ns

    def version_dir(self, version: str) -> Path:
        """Folder of ``version`` (the shipped folder for ``"shipped"``); does not check existence."""
        return self.shipped_dir if version == SHIPPED else self.root / version

    def paths(self, version: str) -> ModelPaths:
        """Files of ``version``. Raises :class:`RegistryError` if it is unknown or lacks an ONNX file."""
        if version == SHIPPED:
            d = self.shipped_dir
            det, cls = d / "dice_det.onnx", d / "dice_cls.onnx"
            det_n, cls_n = d / "dice_det_ncnn_model", d / "dice_cls_ncnn_model"
            metrics, card = d / "metrics.json", d / "README.md"
        else:
            if not _VERSION_RE.match(version) or version in _RESERVED:
                raise RegistryError(f"invalid model version name {version!r}")
            d = self.root / version
            if not d.is_dir():
                raise RegistryError(
                    f"unknown model version {version!r}; known: {', '.join(self.version_names())}")
            det, cls = d / DET_ONNX, d / CLS_ONNX
            det_n, cls_n = d / DET_NCNN, d / CLS_NCNN
            metrics, card = d / METRICS_JSON, d / CARD_MD
        return ModelPaths(
            version=version, detector=det, classifier=cls,
            detector_ncnn=det_n if _is_ncnn_dir(det_n) else None,
            classifier_ncnn=cls_n if _is_ncnn_dir(cls_n) else None,
            metrics_file=metrics if metrics.is_file() else None,
            card=card if card.is_file() else None,
            reader_settings=d / READER_JSON if (d / READER_JSON).is_file() else None,
        )

    def active_paths(self) -> ModelPaths:
        """Files of the active version (see :meth:`paths`)."""
        return self.paths(self.active_version())

    def metrics(self, version: str) -> dict[str, Any]:
        """The ``metrics.json`` of ``version`` as a dict (empty when it has none)."""
        mf = self.paths(version).metrics_file
        if mf is None:
            return {}
        try:
            data = json.loads(mf.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RegistryError(f"{mf}: unreadable metrics ({exc})") from exc
        return data if isinstance(data, dict) else {}

    def version_names(self) -> list[str]:
        """``["shipped", <registered versions sorted by name>]``; hidden/temporary folders excluded."""
        names: list[str] = []
        if self.root.is_dir():
            names = sorted(p.name for p in self.root.iterdir()
                           if p.is_dir() and _VERSION_RE.match(p.name) and p.name not in _RESERVED)
        return [SHIPPED, *names]

    def list_versions(self) -> list[VersionInfo]:
        """Every version, ``shipped`` first, then registered ones by name (time-stamped names sort by age)."""
        active = self.active_version()
        out: list[VersionInfo] = []
        for name in self.version_names():
            p = self.paths(name)
            created = None
            if name != SHIPPED:
                with contextlib.suppress(OSError, ValueError):
                    created = json.loads((self.root / name / VERSION_JSON).read_text()).get("created")
            out.append(VersionInfo(
                version=name, path=self.version_dir(name), created=created, active=name == active,
                metrics=self.metrics(name),
                backends=("onnx", "ultralytics", "ncnn") if p.has_ncnn else ("onnx", "ultralytics"),
            ))
        return out

    # ------------------------------------------------------------------ writing
    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        # read-only open: flock needs no write permission, so any user who may write the folder can lock
        fd = os.open(self.root / ".lock", os.O_RDONLY | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _write_pointer(self, data: Mapping[str, Any]) -> None:
        """Atomically replace ``active.json`` (temp file in the same folder + fsync + os.replace)."""
        fd, tmp = tempfile.mkstemp(prefix=".active-", suffix=".json.tmp", dir=self.root)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(dict(data), fh, indent=2, sort_keys=True)
                fh.write("\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, self.pointer)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        with contextlib.suppress(OSError):  # make the rename itself durable
            dfd = os.open(self.root, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)

    def _check_usable(self, version: str) -> ModelPaths:
        p = self.paths(version)
        missing = [str(f) for f in (p.detector, p.classifier) if not f.is_file()]
        if missing:
            raise RegistryError(f"model version {version!r} is incomplete: missing {', '.join(missing)}")
        return p

    def use(self, version: str, *, force: bool = False, tolerance: float = 0.0) -> str:
        """Make ``version`` active; returns the previously active version.

        Refuses (:class:`RegistryError`) an unknown or incomplete version, and — unless ``force`` — one
        whose metrics are worse than the active version's (see :func:`compare_metrics`), one without
        metrics when the active version has some, or one evaluated on different data.
        Activating the version that is already active is a no-op.
        """
        with self._locked():
            self._check_usable(version)
            current_ptr = self._read_pointer()
            current = current_ptr.get("version", SHIPPED)
            if version == current:
                return current
            if not force:
                self._refuse_if_worse(version, current, tolerance)
            self._write_pointer({
                "version": version,
                "previous": current,
                "serial": int(current_ptr.get("serial", 0)) + 1,
                "activated_at": _now(),
            })
            return current

    def _refuse_if_worse(self, version: str, current: str, tolerance: float) -> None:
        new_m, cur_m = self.metrics(version), self.metrics(current)
        if not cur_m:
            return
        if not new_m:
            raise RegistryError(
                f"model version {version!r} has no metrics.json while the active {current!r} has; "
                "evaluate it (kosti eval --json) or force")
        nd, cd = new_m.get("data"), cur_m.get("data")
        if nd is not None and cd is not None and nd != cd:
            raise RegistryError(
                f"metrics of {version!r} and {current!r} were measured on different data "
                f"({nd!r} vs {cd!r}); re-evaluate on the same data or force")
        sign, reason = compare_metrics(new_m, cur_m, tolerance)
        if sign < 0:
            raise RegistryError(
                f"model version {version!r} is worse than the active {current!r} ({reason}); "
                "use --force to activate it anyway")

    def rollback(self) -> str:
        """Re-activate the previously active version (no metric check); returns it.

        Raises :class:`RegistryError` when there is nothing to roll back to or it was deleted.
        Two rollbacks in a row return to where you started (the previous pointer swaps).
        """
        with self._locked():
            ptr = self._read_pointer()
            prev = ptr.get("previous")
            if not isinstance(prev, str):
                raise RegistryError("nothing to roll back to: no model version was active before this one")
            self._check_usable(prev)
            self._write_pointer({
                "version": prev,
                "previous": ptr.get("version", SHIPPED),
                "serial": int(ptr.get("serial", 0)) + 1,
                "activated_at": _now(),
            })
            return prev

    def add_version(self, files: Mapping[str, str | os.PathLike[str]],
                    metrics: Mapping[str, Any] | str | os.PathLike[str] | None = None, *,
                    version: str | None = None, card: str | None = None, source: str | None = None,
                    activate: bool = False, force: bool = False, check: bool = True) -> str:
        """Copy a trained model pair into the registry as a new version; returns its name.

        ``files`` maps ``"det"`` and ``"cls"`` to ONNX files (required), optionally ``"det_ncnn"``
        / ``"cls_ncnn"`` to Ultralytics NCNN export folders and ``"reader_json"`` to the reader settings
        (default: the ``reader.json`` beside the ``cls`` file, when there is one). ``metrics`` is the
        ``kosti eval --json`` dict or a path to it. ``version`` defaults to the UTC time ``YYYYmmdd-HHMMSS`` (with a
        ``-2``, ``-3``… suffix on collision). ``card`` is model-card Markdown text. With ``check`` each
        ONNX file is opened with onnxruntime so a corrupt export is refused before it is stored.
        With ``activate`` the new version is then made active through :meth:`use` (metric check
        unless ``force``); the version stays registered even when activation is refused.

        Raises :class:`RegistryError` for missing/invalid files, a bad or taken version name, or
        unreadable metrics.
        """
        unknown = set(files) - {"det", "cls", "det_ncnn", "cls_ncnn", "reader_json"}
        if unknown:
            raise RegistryError(f"unknown model file role(s): {', '.join(sorted(unknown))}")
        for role in ("det", "cls"):
            if role not in files:
                raise RegistryError(f"missing the {role!r} ONNX file")
            f = Path(files[role])
            if not f.is_file():
                raise RegistryError(f"{f}: no such file ({role})")
            if check:
                _check_onnx(f)
        ncnn_roles = [r for r in ("det_ncnn", "cls_ncnn") if r in files]
        if len(ncnn_roles) == 1:
            raise RegistryError("give both det_ncnn and cls_ncnn, or neither")
        for role in ncnn_roles:
            if not _is_ncnn_dir(Path(files[role])):
                raise RegistryError(f"{files[role]}: not an NCNN export folder (needs *.param and *.bin)")
        metrics_dict = _load_metrics(metrics)
        reader_json = (Path(files["reader_json"]) if "reader_json" in files
                       else Path(files["cls"]).parent / READER_JSON)
        if "reader_json" in files and not reader_json.is_file():
            raise RegistryError(f"{reader_json}: no such file (reader_json)")
        if version is not None and (not _VERSION_RE.match(version) or version in _RESERVED):
            raise RegistryError(
                f"invalid model version name {version!r}: use letters, digits, '.', '_', '-' "
                f"(at most 64), not {', '.join(sorted(_RESERVED))}")
        with self._locked():
            name = version or _fresh_name(self.root)
            if (self.root / name).exists():
                raise RegistryError(f"model version {name!r} already exists")
            tmp = Path(tempfile.mkdtemp(prefix=f".add-{name}-", dir=self.root))
            try:
                shutil.copy2(files["det"], tmp / DET_ONNX)
                shutil.copy2(files["cls"], tmp / CLS_ONNX)
                if ncnn_roles:
                    shutil.copytree(files["det_ncnn"], tmp / DET_NCNN)
                    shutil.copytree(files["cls_ncnn"], tmp / CLS_NCNN)
                if reader_json.is_file():
                    shutil.copy2(reader_json, tmp / READER_JSON)
                if metrics_dict:
                    (tmp / METRICS_JSON).write_text(json.dumps(metrics_dict, indent=2) + "\n")
                if card:
                    (tmp / CARD_MD).write_text(card if card.endswith("\n") else card + "\n")
                (tmp / VERSION_JSON).write_text(json.dumps(
                    {"version": name, "created": _now(), "source": source}, indent=2) + "\n")
                os.chmod(tmp, 0o755)
                os.rename(tmp, self.root / name)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        if activate:
            self.use(name, force=force)
        return name


class ActiveModelWatcher:
    """Notices when the registry's active version changes, for hot-swapping a running reader.

    ``poll()`` costs one ``os.stat`` at most every ``min_interval_s`` seconds (default 1 s), so it can be
    called on every frame. It returns the new :class:`ModelPaths` once per change, else ``None``::

        watcher = ActiveModelWatcher(Registry())
        reader = DiceReader(*watcher.current.for_backend("onnx"))
        ...  # per frame
        if (new := watcher.poll()) is not None:
            reader = DiceReader(*new.for_backend("onnx"))   # build first, then swap

    A pointer naming a version that cannot be used (deleted, incomplete, malformed pointer) is reported
    through ``last_error`` and otherwise ignored: the running reader keeps its models.
    """

    def __init__(self, registry: Registry | None = None, min_interval_s: float = 1.0) -> None:
        self.registry = registry or Registry()
        self.min_interval_s = float(min_interval_s)
        self._token = self.registry.change_token()
        self.current: ModelPaths = self.registry.active_paths()
        self.last_error: str | None = None
        self._next_check = 0.0

    def poll(self, now: float | None = None) -> ModelPaths | None:
        """New paths if the active version changed since the last call that returned paths, else None.

        ``now``: a monotonic time in seconds (default :func:`time.monotonic`), for tests and replays.
        """
        import time

        t = time.monotonic() if now is None else now
        if t < self._next_check:
            return None
        self._next_check = t + self.min_interval_s
        token = self.registry.change_token()
        if token == self._token:
            return None
        try:
            paths = self.registry.active_paths()
            for f in (paths.detector, paths.classifier):
                if not f.is_file():
                    raise RegistryError(f"model version {paths.version!r} is incomplete: missing {f}")
        except RegistryError as exc:
            self.last_error = str(exc)
            return None
        self._token, self.last_error = token, None
        if paths == self.current:
            return None
        self.current = paths
        return paths


def _is_ncnn_dir(p: Path) -> bool:
    return p.is_dir() and any(p.glob("*.param")) and any(p.glob("*.bin"))


def _check_onnx(path: Path) -> None:
    try:
        import onnxruntime as ort
    except ImportError:  # pragma: no cover - onnxruntime is a base dependency
        return
    try:
        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises several private types
        raise RegistryError(f"{path}: not a loadable ONNX model ({str(exc).splitlines()[0]})") from exc


def _load_metrics(metrics: Mapping[str, Any] | str | os.PathLike[str] | None) -> dict[str, Any]:
    if metrics is None:
        return {}
    if isinstance(metrics, Mapping):
        return dict(metrics)
    try:
        data = json.loads(Path(metrics).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RegistryError(f"{metrics}: unreadable metrics JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise RegistryError(f"{metrics}: metrics must be a JSON object (kosti eval --json output)")
    return data


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _fresh_name(root: Path) -> str:
    base = _dt.datetime.now(_dt.UTC).strftime("%Y%m%d-%H%M%S")
    name, n = base, 1
    while (root / name).exists():
        n += 1
        name = f"{base}-{n}"
    return name


def reader_files(detector: str | os.PathLike[str] | None = None,
                 classifier: str | os.PathLike[str] | None = None,
                 registry: Registry | None = None,
                 backend: str = "onnx") -> tuple[Path | None, Path | None, str]:
    """The model files a command reads with: ``(detector, classifier, version)``.

    With neither path given, the registry's **active** version (``kosti models use``; ``shipped`` when
    nothing was activated), as ``../shared/docs/cli.md`` says for ``read``, ``eval``, ``watch`` and
    ``capture``; its ``reader.json`` (calibrated temperature) lies beside its classifier and is read by
    :class:`kosti.vision.reader.DiceReader`. With either path given (``--model`` / ``--cls-model``), the paths
    are returned unchanged and ``version`` is ``"custom"`` (the reader then fills a missing classifier with
    its own default). ``registry`` defaults to :class:`Registry` at :func:`default_root`. ``backend``
    (``onnx``, ``ncnn`` or ``ultralytics``) picks the active version's files for that runtime
    (:meth:`ModelPaths.for_backend`: the NCNN export folders for ``ncnn``, else the ONNX files).

    Raises:
        RegistryError: the pointer names a version that is unknown, malformed or lacks an ONNX file, or
            ``backend`` is ``ncnn`` and the version has no NCNN export (exit code 2; the command then reads
            nothing rather than silently another model).
    """
    if detector is not None or classifier is not None:
        return (Path(detector) if detector is not None else None,
                Path(classifier) if classifier is not None else None, "custom")
    reg = registry or Registry()
    paths = reg._check_usable(reg.active_version())
    det, cls = paths.for_backend(backend)
    return det, cls, paths.version
