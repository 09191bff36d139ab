"""fio job files on simulated drives, fio-format results, and the same procedures on real devices.

==============  ===================================================================================
module          does
==============  ===================================================================================
`jobfile`       reads job files: sections, ``include``, ``${VAR}``, fio's size and time syntax
`options`       which options the simulator honours, which only matter on real hardware
`translate`     fio jobs -> ssdlab steps (refuses what it cannot honour, notes what it ignores)
`simrun`        runs a job file on a simulated drive
`output`        fio's JSON, normal text and log formats; the ``ssdlab fio`` result directory
`runner`        runs the system fio and reads its JSON and logs back
`safety`        refuses destructive runs on devices and files that hold data
`device`        the review procedures (consistency, HD Tach, torture) on a real device or file
==============  ===================================================================================

See docs/fio.md for the option table and the mapping rules.
"""

from ssdlab.fio.jobfile import JobFile, parse, parse_string
from ssdlab.fio.simrun import FioRun, JobResult, run_jobfile, run_plan
from ssdlab.fio.translate import FioPlan, plan

__all__ = ["FioPlan", "FioRun", "JobFile", "JobResult", "parse", "parse_string", "plan", "run_jobfile", "run_plan"]
