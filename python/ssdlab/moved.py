"""Names that moved to a scenario module (``ssdlab.scenarios``) and still resolve where they used
to live: a module's ``__getattr__`` (PEP 562) calls `resolve` with its table of moved names, so the
old import paths keep working and the target is imported only when the name is used."""

from __future__ import annotations

import importlib
from typing import Any, Mapping

__all__ = ["resolve"]


def resolve(owner: str, name: str, moved: Mapping[str, str]) -> Any:
    """The object `name` of module `owner` now is: `moved` maps an old name to
    ``"module:attribute"``; any other name is an AttributeError, as for a plain module."""
    target = moved.get(name)
    if target is None:
        raise AttributeError(f"module {owner!r} has no attribute {name!r}")
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)
