"""Block-trace replay (docs/traces.md): ``ssdlab.replay(trace, drive, ...)`` plays a trace (MSR
Cambridge, FIU, SPC, Alibaba, Tencent CBS, blkparse, fio iolog, DiskSim, SYSTOR '17) on a simulated
drive and returns a `ReplayResult`; ``ssdlab.replay.FORMATS`` describes the formats.

    >>> import ssdlab
    >>> result = ssdlab.replay("hm_0.csv.gz", "mlc-256", fit="wrap", precondition="fill")
    >>> result.summary["write_amplification"]
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from ssdlab.replay.formats import FORMATS, Format
from ssdlab.replay.result import REPLAY_FILES, ReplayResult
from ssdlab.replay.run import FITS, PRECONDITIONS, TIMINGS, precondition_steps, replay

__all__ = ["FITS", "FORMATS", "Format", "PRECONDITIONS", "REPLAY_FILES", "ReplayResult", "TIMINGS",
           "precondition_steps", "replay"]


class _CallableModule(types.ModuleType):
    """``ssdlab.replay(...)`` replays a trace while ``ssdlab.replay.FORMATS`` and friends stay this
    package's names."""

    def __call__(self, *args: Any, **kwargs: Any) -> ReplayResult:
        return replay(*args, **kwargs)

    def __reduce__(self) -> Any:
        return importlib.import_module, (self.__name__,)


sys.modules[__name__].__class__ = _CallableModule
