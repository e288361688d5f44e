"""Every place a command will write, checked before the first call: a run is paid for first,
and a path that cannot be written found only at its end loses the report.

A file's path may not be a folder; the folders on its way may not be files; and the nearest one
that exists must take a new file (tried with a probe file, removed at once: permissions, a
read-only disk and `/proc` all answer that one question). Folders that do not exist yet are made
when the file is written, as before.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from deep_research.service.bad_input import BadInput


def _nearest_folder(path: Path, flag: str) -> Path:
    """The nearest existing folder on the way to `path` (its parent, or further up); BadInput
    when a file stands where a folder must be."""
    for folder in [path.parent, *path.parent.parents]:  # as written: named as the user wrote it
        if folder.is_dir():
            return folder
        if folder.exists():
            raise BadInput(f"{flag} {path}: {folder} is a file, not a folder")
    return Path.cwd()  # not reached: "." or "/" ends every path


def _takes_a_file(folder: Path, flag: str, path: Path) -> None:
    """A new file can be made in `folder` (made and removed at once), or BadInput."""
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".deep-research-probe-")
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise BadInput(f"{flag} {path}: cannot write in {folder} ({reason})") from None
    os.close(handle)
    os.unlink(probe)


def check_output_file(path: Path, flag: str) -> None:
    """`path` can be written as a file (by `--output`, `--json`), or BadInput naming why."""
    target = path.expanduser()
    if target.is_dir():
        raise BadInput(f"{flag} {path}: is a folder; name a file (e.g. {path / 'report.md'})")
    _takes_a_file(_nearest_folder(target, flag), flag, path)  # a file there is replaced whole


def check_output_folder(path: Path, flag: str) -> None:
    """`path` is, or can be made, a folder that takes files (`batch --out-dir`), or BadInput."""
    target = path.expanduser()
    if target.exists() and not target.is_dir():
        raise BadInput(f"{flag} {path}: is a file, not a folder")
    folder = target if target.is_dir() else _nearest_folder(target, flag)
    _takes_a_file(folder, flag, path)
