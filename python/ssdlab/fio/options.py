"""Which fio job options ssdlab understands, and how.

Every option a job file may carry falls in one of three groups:

* ``SIM`` -- the simulator acts on it (``rw``, ``bs``, ``iodepth``, ``size``, ``runtime``, ...);
  `jobplan` and `access` turn it into workload fields and reject values they cannot honour.
* ``HOST`` -- it only matters on a real host or device (``ioengine``, ``direct``, ``filename``,
  ``group_reporting``, ...); it is accepted and listed as a note in the output.
* anything else -- rejected with a one-line error naming the option and its line, because
  silently ignoring it would give results that do not mean what the job file says.

Aliases are fio's own (``readwrite`` = ``rw``, ``blocksize`` = ``bs``, ``ss`` = ``steadystate``, ...);
every option is looked up under its canonical name.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Dict, Optional

SIM = "sim"
HOST = "host"


@dataclass(frozen=True)
class OptionSpec:
    kind: str  # SIM or HOST
    type: str  # see TYPES
    help: str = ""


TYPES = {
    "str": "text, read where it is used",
    "bool": "0 or 1 (also true/false, yes/no, on/off)",
    "set": "a flag: no value (or 0/1)",
    "int": "a whole number (decimal or 0x hexadecimal)",
    "size": "a size (4096, 4k, 1m, 128KiB, ...)",
    "size%": "a size, or a percentage of the drive",
    "time_s": "a time, seconds unless a unit is given",
    "time_us": "a time, microseconds unless a unit is given",
    "sizes": "sizes per direction: read[,write[,trim]]",
    "ints": "whole numbers per direction: read[,write[,trim]]",
    "pcts": "percentages per direction: read[,write[,trim]]",
    "split": "size mixes per direction: SIZE/PCT:...[,...[,...]]",
    "ranges": "size ranges per direction: MIN-MAX[,...[,...]]",
    "ss": "CRITERION:LIMIT[%]",
    "lock": "none, exclusive or readwrite",
}
"""The value types of `OPTIONS`. Every value of a numeric type is checked (ASCII numerals of at
most 40 characters, sizes and times below 2**64) wherever it is written, also when the job does not
use it, because a device run hands it to fio."""
NUMERIC_TYPES = frozenset({"int", "size", "size%", "time_s", "time_us", "sizes", "ints", "pcts", "split",
                           "ranges", "ss"})


# fio's aliases -> canonical names (options.c `.alias`).
ALIASES: Dict[str, str] = {
    "readwrite": "rw",
    "blocksize": "bs",
    "io_limit": "io_size",
    "fileoffset": "offset",
    "timeout": "runtime",
    "wait_for_previous": "stonewall",
    "blocksize_range": "bsrange",
    "blocksize_split": "bssplit",
    "ss": "steadystate",
    "ss_dur": "steadystate_duration",
    "ss_ramp": "steadystate_ramp_time",
    "ss_interval": "steadystate_check_interval",
    "log_max_value": "log_window_value",
    "iodepth_batch_submit": "iodepth_batch",
    "iodepth_batch_complete": "iodepth_batch_complete_min",
    "nr_files": "nrfiles",
    "iomem": "mem",
    "mem_align": "iomem_align",
    "disable_bw": "disable_bw_measurement",
    "allrandrepeat": "randrepeat",
}

_S = OptionSpec

OPTIONS: Dict[str, OptionSpec] = {
    # -- job description and sequencing
    "name": _S(SIM, "str", "job name shown in the output"),
    "description": _S(SIM, "str", "free text shown in the output"),
    "stonewall": _S(SIM, "set", "wait for the preceding jobs; starts a new reporting group"),
    "new_group": _S(SIM, "set", "starts a new reporting group"),
    "numjobs": _S(SIM, "int", "clones of the job, run at the same time on the drive"),
    "read_iolog": _S(SIM, "str", "replay an fio iolog (v2, v3; plain or compressed) instead of rw/bs/size"),
    "replay_no_stall": _S(SIM, "bool", "replay the iolog as fast as possible at iodepth, ignoring its times"),
    "loops": _S(SIM, "int", "repeat the job's IO this many times"),
    "startdelay": _S(SIM, "time_s", "idle time before the job starts"),
    "ramp_time": _S(SIM, "time_s", "unreported warm-up before the job"),
    "runtime": _S(SIM, "time_s", "time limit"),
    "time_based": _S(SIM, "set", "run for runtime even when the region is done"),
    "kb_base": _S(SIM, "int", "1024 (default) or 1000: how k/m/g/KiB are read"),
    # -- IO pattern
    "rw": _S(SIM, "str", "read, write, trim, randread, randwrite, randtrim, rw, randrw, trimwrite, randtrimwrite"),
    "rwmixread": _S(SIM, "int", "percent of reads in a mixed job"),
    "rwmixwrite": _S(SIM, "int", "percent of writes in a mixed job"),
    "rw_sequencer": _S(SIM, "str", "sequential only (no offset modifiers)"),
    "bs": _S(SIM, "sizes", "request size (one value, or read,write,trim values that agree)"),
    "bssplit": _S(SIM, "split", "request size mix SIZE/PCT:... (one mix for every direction used)"),
    "bsrange": _S(SIM, "ranges", "request sizes MIN-MAX, uniform, aligned to MIN (one range for every direction used)"),
    "ba": _S(SIM, "sizes", "block alignment (must equal bs)"),
    "iodepth": _S(SIM, "int", "requests kept in flight"),
    "size": _S(SIM, "size%", "region (and default amount) of IO"),
    "io_size": _S(SIM, "size%", "amount of IO"),
    "filesize": _S(SIM, "size", "region size"),
    "offset": _S(SIM, "size%", "start of the region"),
    "offset_align": _S(SIM, "size", "alignment of a percentage offset"),
    "number_ios": _S(SIM, "int", "stop after this many IOs"),
    "thinktime": _S(SIM, "time_us", "host time between a completion and the next submission"),
    "thinktime_blocks": _S(SIM, "int", "1 only"),
    "rate_iops": _S(SIM, "ints", "cap on IOPS (read,write,trim values: per direction)"),
    "rate": _S(SIM, "sizes", "cap on bandwidth (bytes/s, per direction with read,write,trim), turned into an IOPS cap"),
    "rate_process": _S(SIM, "str", "linear only"),
    "randrepeat": _S(SIM, "bool", "repeatable random offsets (ssdlab is always repeatable)"),
    "randseed": _S(SIM, "int", "seed of the job's random offsets"),
    "norandommap": _S(SIM, "set", "draw random offsets with replacement"),
    "random_distribution": _S(SIM, "str", "random, zipf:θ, pareto:h, normal:σ, zoned:A/S:..., zoned_abs:A/SIZE:..."),
    "percentage_random": _S(SIM, "pcts", "100 for rand*, 0 for sequential only"),
    "nrfiles": _S(SIM, "int", "1 only"),
    # -- data content (compressibility for compressing controllers)
    "buffer_compress_percentage": _S(SIM, "int", "written data compresses by this percent"),
    "refill_buffers": _S(SIM, "set", "fresh random data on every write (incompressible)"),
    "zero_buffers": _S(SIM, "set", "all-zero data (maximally compressible)"),
    "scramble_buffers": _S(HOST, "bool", "defeats dedupe only; no effect on compression"),
    "buffer_compress_chunk": _S(HOST, "size", "granularity of the compressible region"),
    # -- steady state
    "steadystate": _S(SIM, "ss", "iops|iops_slope|bw|bw_slope:LIMIT[%]"),
    "steadystate_duration": _S(SIM, "time_s", "rolling window (0 disables)"),
    "steadystate_ramp_time": _S(SIM, "time_s", "time before steady-state data is collected"),
    "steadystate_check_interval": _S(SIM, "time_s", "1s only"),
    # -- logs and reporting
    "write_iops_log": _S(SIM, "str", "IOPS log prefix"),
    "write_bw_log": _S(SIM, "str", "bandwidth log prefix"),
    "write_lat_log": _S(SIM, "str", "latency logs prefix (slat, clat, lat)"),
    "log_avg_msec": _S(SIM, "int", "log window in milliseconds"),
    "log_offset": _S(SIM, "bool", "add the offset column to logs (0 in windowed logs)"),
    "log_prio": _S(SIM, "bool", "priority column as hex"),
    "log_window_value": _S(SIM, "str", "avg only"),
    "per_job_logs": _S(SIM, "bool", "add the .N job index to log names"),
    "clat_percentiles": _S(SIM, "bool", "report completion latency percentiles"),
    "lat_percentiles": _S(SIM, "bool", "report total latency percentiles"),
    "slat_percentiles": _S(SIM, "bool", "report submission latency percentiles"),
    "percentile_list": _S(SIM, "str", "a subset of fio's default list"),
    "unified_rw_reporting": _S(SIM, "str", "none only"),
    "group_reporting": _S(SIM, "set", "report the jobs of a group (and numjobs clones) as one"),
    "significant_figures": _S(HOST, "int", "normal output precision"),
    "unit_base": _S(HOST, "int", "bits or bytes in normal output"),
    "stats": _S(HOST, "bool", ""),
    "disable_lat": _S(HOST, "bool", ""),
    "disable_clat": _S(HOST, "bool", ""),
    "disable_slat": _S(HOST, "bool", ""),
    "disable_bw_measurement": _S(HOST, "bool", ""),
    "gtod_reduce": _S(HOST, "bool", ""),
    "clocksource": _S(HOST, "str", ""),
    "log_entries": _S(HOST, "int", ""),
    # -- target and host: only meaningful on real hardware
    "ioengine": _S(HOST, "str", "how IO is issued; synchronous engines keep one IO in flight"),
    "direct": _S(HOST, "bool", "O_DIRECT; the simulator always sends IO to the drive"),
    "buffered": _S(HOST, "bool", "page cache; the simulator always sends IO to the drive"),
    "filename": _S(HOST, "str", "target file or device"),
    "directory": _S(HOST, "str", "target directory"),
    "filename_format": _S(HOST, "str", ""),
    "unique_filename": _S(HOST, "bool", ""),
    "thread": _S(HOST, "set", "threads instead of processes"),
    "iodepth_batch": _S(HOST, "int", ""),
    "iodepth_batch_complete_min": _S(HOST, "int", ""),
    "iodepth_batch_complete_max": _S(HOST, "int", ""),
    "iodepth_low": _S(HOST, "int", ""),
    "invalidate": _S(HOST, "bool", ""),
    "end_fsync": _S(HOST, "bool", ""),
    "fallocate": _S(HOST, "str", ""),
    "fadvise_hint": _S(HOST, "str", ""),
    "create_serialize": _S(HOST, "bool", ""),
    "create_fsync": _S(HOST, "bool", ""),
    "create_on_open": _S(HOST, "bool", ""),
    "allow_file_create": _S(HOST, "bool", ""),
    "allow_mounted_write": _S(HOST, "bool", ""),
    "overwrite": _S(HOST, "bool", ""),
    "unlink": _S(HOST, "bool", ""),
    "unlink_each_loop": _S(HOST, "bool", ""),
    "openfiles": _S(HOST, "int", ""),
    "file_service_type": _S(HOST, "str", ""),
    "lockfile": _S(HOST, "lock", ""),
    "ioscheduler": _S(HOST, "str", ""),
    "cpus_allowed": _S(HOST, "str", ""),
    "cpus_allowed_policy": _S(HOST, "str", ""),
    "cpumask": _S(HOST, "str", ""),
    "numa_cpu_nodes": _S(HOST, "str", ""),
    "numa_mem_policy": _S(HOST, "str", ""),
    "nice": _S(HOST, "int", ""),
    "prio": _S(HOST, "int", ""),
    "prioclass": _S(HOST, "int", ""),
    "mem": _S(HOST, "str", ""),
    "iomem_align": _S(HOST, "size", ""),
    "hugepage-size": _S(HOST, "size", ""),
    "lockmem": _S(HOST, "size", ""),
    "random_generator": _S(HOST, "str", "ssdlab draws offsets with its own generator"),
    "softrandommap": _S(HOST, "bool", ""),
    "continue_on_error": _S(HOST, "str", ""),
    "exitall": _S(HOST, "set", ""),
    "exitall_on_error": _S(HOST, "set", ""),
    "hipri": _S(HOST, "set", ""),
    "fixedbufs": _S(HOST, "set", ""),
    "registerfiles": _S(HOST, "set", ""),
    "sqthread_poll": _S(HOST, "set", ""),
    "nonvectored": _S(HOST, "int", ""),
    "force_async": _S(HOST, "int", ""),
    "userspace_reap": _S(HOST, "set", ""),
    "uid": _S(HOST, "int", ""),
    "gid": _S(HOST, "int", ""),
}

# Engines that move blocks to a file or block device; anything else (net, cpuio, http, ...) is
# not storage IO and is rejected.
BLOCK_ENGINES = frozenset(
    "sync psync vsync pvsync pvsync2 io_uring io_uring_cmd libaio posixaio solarisaio windowsaio "
    "mmap splice sg libzbc null xnvme libblkio".split()
)
# Engines that keep one IO in flight whatever iodepth says (fio's HOWTO, iodepth).
SYNC_ENGINES = frozenset("sync psync vsync pvsync pvsync2 mmap splice".split())
DEFAULT_ENGINE = "psync"


def canonical(name: str) -> str:
    """The canonical option name for `name` (aliases resolved)."""
    return ALIASES.get(name, name)


def spec(name: str) -> Optional[OptionSpec]:
    return OPTIONS.get(canonical(name))


def suggestion(name: str) -> str:
    """`` (did you mean 'x'?)`` for a near miss, else an empty string."""
    known = list(OPTIONS) + list(ALIASES)
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
    return f" (did you mean '{close[0]}'?)" if close else ""
