"""Imports the chart module (matplotlib) in a background thread while a simulation runs.

The core simulates without holding the GIL, so on a machine with a second core the ~0.7 s
matplotlib import overlaps the simulation instead of following it. Nothing else changes: if the
import fails here, the import where the charts are drawn fails the same way and reports it.
"""

from __future__ import annotations

import importlib
import threading

_MODULES = ("ssdlab.plots",)


def _import_all() -> None:
    for name in _MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the import where the charts are drawn reports it
            return


def start() -> threading.Thread:
    """Starts importing the chart modules; returns the (daemon) thread doing it."""
    thread = threading.Thread(target=_import_all, name="ssdlab-preload", daemon=True)
    thread.start()
    return thread
