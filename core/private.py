"""The data directory is private: it holds the SQLite database, the generated seal key and
the dev server's state, and only its owner may read them. Directories are made 0700 and
files 0600; one made before this rule is tightened when a process that owns it starts."""

import os
import stat
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
# A SQLite database file's companions: SQLite's own (made with the database file's mode)
# and the lock of store/db/migrate.py.
SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal", ".migrate-lock")


def private_dir(path: Path) -> Path:
    """Create `path` (its parents as usual) as 0700, or tighten it when it exists."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    tighten(path, DIR_MODE)
    return path


def tighten(path: Path, mode: int) -> None:
    """Drop every permission bit outside `mode` from `path`, when it exists and is this
    user's (another user's file is left as it is: chmod would fail, and it is not ours)."""
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return
    current = stat.S_IMODE(st.st_mode)
    if current & ~mode:
        os.chmod(path, current & mode)


def tighten_sqlite(database: Path) -> None:
    """A SQLite database file and its -wal/-shm/-journal to 0600 (the ones that exist)."""
    for suffix in SQLITE_SUFFIXES:
        tighten(database.with_name(database.name + suffix), FILE_MODE)
