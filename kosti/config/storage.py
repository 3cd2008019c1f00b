"""``[storage]``: where games and frames are kept."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator

from kosti.common.data_dir import default_data_dir
from kosti.config.base import Section, doc


class StorageSettings(Section):
    """Where games and frames are kept (``[storage]``)."""

    dir: Path | None = Field(None, json_schema_extra={"example": "/var/lib/kosti"}, description=doc("""
        Data folder. Default: $XDG_DATA_HOME/kosti (~/.local/share/kosti); the service uses /var/lib/kosti."""))
    db: Path = Field(Path("kosti.db"), description=doc("""
        SQLite database of games, throws and corrections (relative to dir)."""))
    frames_dir: Path = Field(Path("frames"), description=doc("""
        Frames of uncertain or corrected throws, kept for retraining (relative to dir)."""))

    @property
    def data_dir(self) -> Path:
        """``dir``, or :func:`kosti.common.data_dir.default_data_dir` when unset."""
        return (self.dir or default_data_dir()).expanduser()

    @property
    def db_path(self) -> Path:
        """Absolute path of the SQLite database."""
        return self.data_dir / self.db.expanduser()

    @property
    def frames_path(self) -> Path:
        """Absolute path of the frames folder."""
        return self.data_dir / self.frames_dir.expanduser()

    @model_validator(mode="after")
    def _paths_ok(self) -> StorageSettings:
        for d in (self.data_dir, *self.data_dir.parents):  # `kosti run` must be able to create the folders
            if d.exists():
                if not d.is_dir():
                    raise ValueError(f"storage.dir: {str(d)!r} is a file, not a folder")
                break
        if self.db_path.is_dir():
            raise ValueError(f"storage.db: {str(self.db_path)!r} is a folder, not a database file")
        if self.frames_path.exists() and not self.frames_path.is_dir():
            raise ValueError(f"storage.frames_dir: {str(self.frames_path)!r} exists and is not a folder")
        return self

    def ensure_dirs(self) -> None:
        """Create the data folder, the database's folder and the frames folder (mode 0750)."""
        for d in (self.data_dir, self.db_path.parent, self.frames_path):
            d.mkdir(mode=0o750, parents=True, exist_ok=True)
