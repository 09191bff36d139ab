"""Kept only for ``ssdlab.sweep.scenarios``, which imports `summary`, `save` and `write_logs` from
here (another change is editing that file; drop this module once it imports them from
`resultdir` and `logfiles`).

fio's formats are `jsonout` (the JSON document), `textout` (normal text) and `logfiles` (the log
files), over `windows` (a job's series in fio's windows); `resultdir` writes the ``ssdlab fio``
result directory.
"""

from ssdlab.fio.logfiles import write_logs
from ssdlab.fio.resultdir import save, summary

__all__ = ["save", "summary", "write_logs"]
