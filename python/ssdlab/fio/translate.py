"""Kept only for ``ssdlab.sweep.scenarios``, which imports `plan` from here (another change is
editing that file; drop this module once it imports ``from ssdlab.fio import plan``).

The translation of fio jobs into ssdlab steps is `jobopts` (reading a job's options), `validate`
(checking every written option), `access` (rw, request sizes, region, random_distribution),
`jobplan` (one job -> its workload and steps) and `planner` (the job file -> `FioPlan`).
"""

from ssdlab.fio.planner import plan

__all__ = ["plan"]
