"""Imports pandas and the chart module (matplotlib) in a background thread while a simulation runs.

The core simulates without holding the GIL, so on a machine with a second core the ~0.3 s pandas
import (pyarrow with it) and the ~0.7 s matplotlib import overlap the simulation instead of
preceding or following it: the modules the CLI imports before the run do not import pandas (it is
imported where a frame is made, after the core returns). Nothing else changes: if an import fails
here, the import where the frame or the charts are made fails the same way and reports it.
"""

from __future__ import annotations

import importlib
import threading

_MODULES = ("pandas", "ssdlab.plots")  # pandas first: the results need it before the charts


def _import_all() -> None:
    for name in _MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the import where the frame or charts are made reports it
            return


_started: list = []  # the thread start() began, until wait() has joined it


def start() -> threading.Thread:
    """Starts importing pandas and the chart modules; returns the (daemon) thread doing it."""
    thread = threading.Thread(target=_import_all, name="ssdlab-preload", daemon=True)
    thread.start()
    _started.append(thread)
    return thread


def wait() -> None:
    """Waits for the imports start() began (nothing if none is under way). Called when the core
    returns, before the calling thread makes frames or charts: two threads importing matplotlib at
    once can each meet the other's half-initialised module (its ticker, scale and colors modules
    import one another), and the import machinery then hands one of them a partial module
    ("cannot import name 'NullFormatter' from partially initialized module") on short runs."""
    while _started:
        thread = _started.pop()
        if thread is not threading.current_thread():
            thread.join()
