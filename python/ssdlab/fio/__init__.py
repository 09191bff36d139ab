"""fio job files on simulated drives, fio-format results, and the same procedures on real devices.

==============  ===================================================================================
module          does
==============  ===================================================================================
`jobfile`       reads job files: sections, ``include``, ``${VAR}``, fio's size and time syntax
`options`       which options the simulator honours, which only matter on real hardware
`jobopts`       reads one job's options (flags, ``read,write,trim`` lists, ``kb_base``)
`validate`      checks every option a job writes, used or not (known, well formed, fio's bounds)
`access`        rw, request sizes (bs, bssplit, bsrange), the region, random_distribution
`jobplan`       one job -> its workload and steps (refuses what it cannot honour, notes the rest)
`planner`       the job file -> `FioPlan`: numjobs clones, stonewall groups, limits, steps
`simrun`        runs a job file on a simulated drive
`windows`       a job's series in fio's windows (the directions, window lengths, whole windows)
`jsonout`       fio's JSON document
`textout`       fio's normal text output
`logfiles`      fio's log files: names, writing, reading back
`resultdir`     the ``ssdlab fio`` result directory (JSON, text, summary, CSVs, charts)
`runner`        runs the system fio and reads its JSON and logs back
`safety`        refuses destructive runs on devices and files that hold data
`session`       what every device run shares: erase and TRIM, SMART, the safe staging, fio runs
`device`        the review procedures (consistency, HD Tach, torture) on a real device or file
`devrun`        a job file on a real device or file
==============  ===================================================================================

See docs/fio.md for the option table and the mapping rules.
"""

from ssdlab.fio.jobfile import JobFile, parse, parse_string
from ssdlab.fio.simrun import FioRun, JobResult, run_jobfile, run_plan
from ssdlab.fio.planner import FioPlan, plan

__all__ = ["FioPlan", "FioRun", "JobFile", "JobResult", "parse", "parse_string", "plan", "run_jobfile", "run_plan"]
