"""Path containment: a name taken from an input (a job file's log prefix, a sweep point's name)
that must stay inside a directory the user chose.

`contained(base, name, what)` is the one rule: the name is relative, holds no NUL, and neither
its ``..`` components nor a symbolic link that already exists inside `base` lead outside `base`.
A `base` that is itself a symbolic link (an ``--out`` the user pointed elsewhere) is followed:
containment is judged against where it leads.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from ssdlab.errors import SsdlabError

__all__ = ["contained"]


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def contained(base: Path, name: str, what: str) -> Path:
    """`base / name`, with `name` checked to stay inside `base`.

    Raises `SsdlabError` (one line naming `what`) when `name` is empty, holds a NUL, is absolute,
    has ``..`` components that climb out of `base`, or would resolve outside `base` through a
    symbolic link that exists inside it. ``a/../b`` is accepted (it stays inside). The returned
    path is `base` joined with the lexically normalised name (links are not replaced by their
    targets, so messages show what the user wrote).
    """
    if not isinstance(name, str) or name == "":
        raise SsdlabError(f"{what}: an empty name; give a file name relative to {base}")
    if "\0" in name:
        raise SsdlabError(f"{what}: {name!r} holds a NUL byte; give a plain file name relative to {base}")
    if name.startswith("/") or os.path.isabs(name):
        raise SsdlabError(f"{what}: {name!r} is an absolute path; give a name relative to {base}, "
                          f"which must stay inside it")
    normal = posixpath.normpath(name)
    if normal == ".." or normal.startswith("../"):
        raise SsdlabError(f"{what}: {name!r} leads outside {base} through '..'; give a name inside it")
    joined = Path(base) / normal
    real_base = os.path.realpath(base)
    real = os.path.realpath(joined)
    if not _inside(real, real_base):
        raise SsdlabError(f"{what}: {name!r} leads outside {base} (to {real}) through a symbolic link; "
                          f"give a name inside it")
    return joined
