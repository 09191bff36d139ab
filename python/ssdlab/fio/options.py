"""Every fio job option ssdlab knows: one declaration per option, with how fio 3.33 reads it and
what ssdlab does with it.

How fio reads it: the option's type in fio's option table (options.c, ``FIO_OPT_*``), its alias,
range, choices, number of per-direction values, priority and the callback that reads it further
(`ssdlab.fio.fioread` does exactly what fio's parse.c does with these). The table holds all of
fio 3.33's own options (``fio --cmdhelp=all``), the options of the block-IO engines ssdlab stands in
for (pvsync2, libaio, io_uring: ``fio --enghelp=ENGINE``) and those of fio's two built-in profiles,
which fio accepts in every job.

What ssdlab does with it (`OptionSpec.kind`):

* ``SIM`` -- the simulator acts on it (``rw``, ``bs``, ``iodepth``, ``size``, ``runtime``, ...);
  `jobplan` and `access` turn it into workload fields and reject values they cannot honour.
* ``HOST`` -- it changes nothing on a simulated block device (``ioengine``, ``direct``,
  ``filename``, CPU placement, ...); it is accepted and listed as a note in the output.
* ``REFUSED`` -- a job that writes it is refused with a one-line error giving `OptionSpec.help`
  (the reason): silently ignoring it would give results that do not mean what the job file says.

An option fio does not know is refused too (fio refuses it: "Bad option"). docs/fio.md's support
table is made from this table (``python -m ssdlab.fio.support docs/fio.md``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

SIM = "sim"
HOST = "host"
REFUSED = "refused"

FIO_VERSION = "3.33"
"""The fio whose job-file syntax ssdlab reads (the one scripts/install-test-tools.sh installs)."""

PENDING = "not simulated yet (issue 24)"
"""The reason of the options whose simulation is being built (issue 24)."""

NO_ZONES = "no zoned model yet: the simulated drive is a conventional block device"

# fio's option types (parse.h, enum fio_opt_type), as `OptionSpec.fio` names them.
FIO_TYPES = ("str", "str_ull", "str_multi", "str_val", "str_val_time", "str_store", "range", "int", "ull",
             "bool", "float_list", "str_set", "str_val_zone", "deprecated", "soft_deprecated")


@dataclass(frozen=True)
class OptionSpec:
    """One option: ssdlab's status and value type, and fio's declaration of it."""

    name: str
    fio: str  # fio's type (FIO_TYPES)
    kind: str = REFUSED  # SIM, HOST or REFUSED
    type: str = "str"  # ssdlab's value type (TYPES): how `validate` checks a value it reads
    help: str = ""  # SIM: what the simulator makes of it; HOST: why it has no effect; REFUSED: why
    alias: Optional[str] = None
    lo: Optional[int] = None  # fio's minval (None: none)
    hi: Optional[int] = None  # fio's maxval (None: none; fio then bounds int at 2**32-1, ull at 2**64-1)
    choices: Tuple[str, ...] = ()  # fio's posval strings
    slots: int = 1  # values a list may set: 3 per direction (read,write,trim), 2 a low-high pair
    seconds: bool = False  # a bare time number is seconds (else microseconds)
    time: bool = False  # read as a time (else as a size)
    prio: int = 0  # fio parses a section's options in descending prio order
    cb: str = ""  # the fio callback `fioread` emulates (options.c), "" for none
    neg: bool = False  # fio stores the negated boolean (buffered)
    pow2: bool = False
    maxlen: int = 0  # float lists: most values; strings: longest value + 1
    fp: Optional[Tuple[float, float]] = None  # float lists: the range of each value
    engines: Tuple[str, ...] = ()  # an engine's option: only with these ioengines
    profile: str = ""  # an option of fio's built-in profile of that name
    newer: bool = False  # a later fio's option: fio 3.33 refuses it (ssdlab accepts it)
    default: str = ""  # an engine option's default, which fio reads when it loads the engine
    absent: bool = False  # compiled out of the tested fio build (Debian's fio 3.33): fio refuses it


TYPES = {
    "str": "text, read where it is used",
    "bool": "0 or 1 (fio reads booleans as numbers)",
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
"""ssdlab's value types (`OptionSpec.type`). Every value of a numeric type is checked (ASCII numerals of
at most 40 characters, sizes and times below 2**64) wherever it is written, also when the job does
not use it, because a device run hands it to fio."""
NUMERIC_TYPES = frozenset({"int", "size", "size%", "time_s", "time_us", "sizes", "ints", "pcts", "split",
                           "ranges", "ss"})

_ALL: list = []


def _o(name: str, fio: str, kind: str = REFUSED, type: str = "str", help: str = "", **kw: Any) -> None:
    _ALL.append(OptionSpec(name, fio, kind, type, help, **kw))


_RW = "read write trim randread randwrite randtrim rw readwrite randrw trimwrite randtrimwrite"
_ENGINES = ("sync psync vsync pvsync pvsync2 libaio io_uring posixaio solarisaio windowsaio rbd mmap splice "
            "netsplice sg null net cpuio rdma librpma_apm librpma_gpspm e4defrag falloc gfapi gfapi_async "
            "libhdfs pmemblk ime_psync ime_psyncv ime_aio dev-dax filecreate external libpmem http nbd dfs nfs "
            "xnvme")
_VERIFY = ("0 md5 crc64 crc32 crc32c-intel crc32c crc16 crc7 sha1 sha256 sha512 sha3-224 sha3-256 sha3-384 "
           "sha3-512 xxhash meta pattern null")
_CPU = "where fio's threads run on the host; the simulated drive does not see it"
_FILES = "about files on a filesystem; the simulated drive is one block device"
_LOG_HOST = "how fio keeps or writes its records on the host"
_ERRORS = "the simulated drive returns no IO errors"

# -- job description and sequencing ------------------------------------------------------------------
_o("description", "str_store", SIM, help="free text shown in the output")
_o("name", "str_store", SIM, help="job name shown in the output")
_o("wait_for", "str_store", SIM, help="start when the named job has ended: the job just before it, running "
   "alone (a stonewall that keeps the reporting group)")
_o("stonewall", "str_set", SIM, "set", "wait for the preceding jobs; starts a new reporting group",
   alias="wait_for_previous")
_o("new_group", "str_set", SIM, "set", "starts a new reporting group")
_o("numjobs", "int", SIM, "int", "clones of the job, run at the same time on the drive")
_o("loops", "int", SIM, "int", "repeat the job's IO this many times")
_o("startdelay", "str_val_time", SIM, "time_s", "the job starts this long after fio's start, each job at its own "
   "time; a job of a later stonewall group once the group before has ended, if its delay is over by then (fio's "
   "run_threads); where fio's start loop would reorder the groups, a note says so; a LOW-HIGH range is drawn as "
   "fio draws it (its generator, randseed and the job's number)",
   slots=2, seconds=True, time=True)
_o("ramp_time", "str_val_time", SIM, "time_s", "warm-up at the job's start, left out of its figures (fio's "
   "ramp_time_over): the requests that complete in it are not reported and count towards its size, as in fio; a "
   "job alone with latency_target or verify runs it as an unreported phase of its own", seconds=True, time=True)
_o("runtime", "str_val_time", SIM, "time_s", "time limit", alias="timeout", seconds=True, time=True)
_o("time_based", "str_set", SIM, "set", "run for runtime even when the region is done")
_o("kb_base", "str", SIM, "int", "1024 (default) or 1000: how k/m/g/KiB are read", prio=1,
   choices=("1024", "1000"))
_o("unit_base", "str", HOST, "str", "bits or bytes in the normal output", prio=1, choices=("0", "8", "1"))
_o("exitall", "str_set", SIM, "set", "global, as in fio: every job's end stops the jobs its exit_what names "
   "(they issue nothing more; what is in flight completes)", cb="exitall")
_o("exit_what", "str", SIM, "str", "which jobs exitall stops: group (its reporting group), stonewall (every job "
   "running), all (also the groups not started, which then never run)", choices=("group", "stonewall", "all"))
_o("exitall_on_error", "str_set", SIM, "set", "a job that ends in error (a rate floor missed, a latency target "
   "missed at depth 1, a failed verify) stops the jobs its exit_what names")
_o("thread", "str_set", HOST, "set", "threads instead of processes on the host")
_o("profile", "str_store", help="fio's built-in profiles (tiobench, act) are not simulated")
_o("read_iolog", "str_store", SIM, help="replay an fio iolog (v2, v3; plain or compressed) instead of rw/bs/size")
_o("read_iolog_chunked", "bool", HOST, "bool", "how fio reads the iolog into memory")
_o("replay_no_stall", "bool", SIM, "bool", "replay the iolog as fast as possible at iodepth, ignoring its times")
_o("replay_redirect", "str_store", help="the simulated drive is the only device an iolog replays on")
_o("replay_scale", "int", help="scaling an iolog's offsets is not simulated")
_o("replay_align", "int", help="aligning an iolog's offsets is not simulated", pow2=True)
_o("replay_time_scale", "int", help="scaling an iolog's times is not simulated", lo=1)
_o("replay_skip", "str", help="skipping IO types of an iolog is not simulated", cb="dryrun")
_o("write_iolog", "str_store", help="ssdlab does not write iologs")
_o("merge_blktrace_file", "str_store", help="merging blktraces is not simulated; replay each (docs/traces.md)")
_o("merge_blktrace_scalars", "float_list", help="merging blktraces is not simulated", maxlen=20)
_o("merge_blktrace_iters", "float_list", help="merging blktraces is not simulated", maxlen=20)
_o("exec_prerun", "str_store", help="fio would run a host command")
_o("exec_postrun", "str_store", help="fio would run a host command")

# -- IO pattern --------------------------------------------------------------------------------------
_o("rw", "str", SIM, "str", "read, write, trim, randread, randwrite, randtrim, rw, randrw, trimwrite, randtrimwrite",
   alias="readwrite", choices=tuple(_RW.split()), cb="rw")
_o("rw_sequencer", "str", SIM, "str", "with rw=randX:N, the requests between random offsets follow on "
   "(sequential) or repeat the offset (identical)", choices=("sequential", "identical"))
_o("rwmixread", "int", SIM, "int", "percent of reads in a mixed job", hi=100, cb="rwmix")
_o("rwmixwrite", "int", SIM, "int", "percent of writes in a mixed job", hi=100, cb="rwmix")
_o("rwmixcycle", "deprecated", help="fio 3.33 refuses it (deprecated)")
_o("bs", "ull", SIM, "sizes", "request size (one value, or read,write,trim values: each direction its own)", alias="blocksize",
   lo=1, slots=3)
_o("ba", "ull", SIM, "sizes", "random offsets align to it (a multiple of 512) over the region less the smallest "
   "request, as fio's last_block; turns the random map off, as in fio; no effect on sequential jobs",
   alias="blockalign", lo=1, slots=3)
_o("bsrange", "range", SIM, "ranges", "request sizes MIN-MAX, uniform, aligned to MIN (one range for every "
   "direction used)", alias="blocksize_range", lo=1, slots=3)
_o("bssplit", "str_ull", SIM, "split", "request size mix SIZE/PCT:... (READS,WRITES,TRIMS: each direction its own "
   "mix, the size drawn after the direction, as fio's get_next_buflen)",
   cb="bssplit")
_o("bs_unaligned", "str_set", help="unaligned block sizes are not simulated", alias="blocksize_unaligned")
_o("bs_is_seq_rand", "bool", help="block sizes per sequential/random IO are not simulated")
_o("iodepth", "int", SIM, "int", "requests kept in flight", lo=1)
_o("iodepth_batch", "int", HOST, "int", "how fio batches submissions", alias="iodepth_batch_submit")
_o("iodepth_batch_complete_min", "int", HOST, "int", "how fio reaps completions", alias="iodepth_batch_complete")
_o("iodepth_batch_complete_max", "int", HOST, "int", "how fio reaps completions")
_o("iodepth_low", "int", HOST, "int", "how fio refills its queue")
_o("serialize_overlap", "bool", help="serializing overlapping IO is not simulated")
_o("io_submit_mode", "str", HOST, "str", "offload moves submission to a pool of iodepth fio threads; the "
   "simulated drive sees the same requests at the same times (the simulator's rate cap issues on schedule, "
   "as offload does)", choices=("inline", "offload"))
_o("size", "str_val_zone", SIM, "size%", "region (and default amount) of IO", cb="percent")
_o("io_size", "str_val_zone", SIM, "size%", "amount of IO", alias="io_limit", cb="io_size")
_o("fill_device", "bool", HOST, "bool", "on a block device fio's region is the same with it or without it: to "
   "the device's end unless size= is given (init.c)", alias="fill_fs")
_o("filesize", "str_val", SIM, "size", "region size (a low-high range is refused)", lo=1, slots=2)
_o("file_append", "bool", help=_FILES)
_o("offset", "str_val_zone", SIM, "size%", "start of the region", alias="fileoffset", cb="percent")
_o("offset_align", "int", SIM, "size", "alignment of a percentage offset")
_o("offset_increment", "str_val_zone", SIM, "size%", "clone N of numjobs starts at offset + N x this (a "
   "percentage: of the device, aligned up to offset_align or bs), its region to the end of the device", cb="percent")
_o("number_ios", "str_val", SIM, "int", "stop after this many IOs")
_o("randrepeat", "bool", SIM, "bool", "repeatable random offsets (ssdlab is always repeatable)")
_o("allrandrepeat", "bool", HOST, "bool", "simulated runs are always repeatable")
_o("randseed", "str_val", SIM, "int", "seed of the job's random offsets")
_o("norandommap", "str_set", SIM, "set", "draw random offsets with replacement")
_o("softrandommap", "bool", HOST, "bool", "the random map never fails to allocate")
_o("random_generator", "str", HOST, "str", "ssdlab draws offsets with its own generator",
   choices=("tausworthe", "lfsr", "tausworthe64"))
_o("random_distribution", "str", SIM, "str", "random, zipf:θ, pareto:h, normal:σ, zoned:A/S:..., "
   "zoned_abs:A/SIZE:...", choices=("random", "zipf", "pareto", "normal", "zoned", "zoned_abs"),
   cb="distribution")
_o("percentage_random", "int", SIM, "pcts", "100 for rand*, 0 for sequential only", hi=100, slots=3)
_o("percentage_sequential", "deprecated", help="fio 3.33 refuses it (deprecated)")
_o("nrfiles", "int", SIM, "int", "1 only", alias="nr_files")
_o("openfiles", "int", HOST, "int", _FILES)
_o("file_service_type", "str", HOST, "str", "a job has one file", cb="fst",
   choices=("random", "zipf", "pareto", "normal", "gauss", "roundrobin", "sequential"))
_o("max_latency", "ull", help="failing a job over a latency is not simulated yet", slots=3, time=True)
_o("latency_target", "str_val_time", SIM, "time_us", "fio's search for the deepest queue (up to iodepth) that "
   "keeps this latency (io_u.c lat_target_*); reported as latency_depth", time=True)
_o("latency_window", "str_val_time", SIM, "time_us", "how long each depth of the latency search is tried",
   time=True)
_o("latency_percentile", "float_list", SIM, "str", "share of requests that must meet latency_target (100: a "
   "single slow request backs off, and at depth 1 ends the job with ETIMEDOUT)", maxlen=1, fp=(0.0, 100.0))
_o("latency_run", "bool", SIM, "bool", "keep adjusting the depth for the whole job instead of ending once found")
_o("thinktime", "int", SIM, "time_us", "host time between a completion and the next submission", time=True)
_o("thinktime_spin", "int", HOST, "time_us", "the part of thinktime fio spends spinning; the pause is thinktime",
   time=True)
_o("thinktime_blocks", "int", SIM, "int", "1 only")
_o("thinktime_blocks_type", "str", help="only the default thinktime_blocks are simulated",
   choices=("complete", "issue"))
_o("thinktime_iotime", "int", help="thinktime after an IO time is not simulated", seconds=True, time=True)
_o("rate", "ull", SIM, "sizes", "cap on bandwidth (bytes/s, per direction with read,write,trim), turned into an "
   "IOPS cap (rate / the mean size; below one request per second too, down to 1e-6 IOPS)", slots=3)
_o("rate_iops", "int", SIM, "ints", "cap on IOPS (read,write,trim values: per direction)", slots=3)
_o("rate_min", "ull", SIM, "sizes", "bandwidth floor per direction: below it over rate_cycle (after 2 s) the "
   "job ends with EIO, as fio (backend.c __check_min_rate)", alias="ratemin", slots=3)
_o("rate_iops_min", "int", SIM, "ints", "IOPS floor per direction, checked as rate_min", slots=3)
_o("rate_process", "str", SIM, "str", "linear, or poisson: exponential gaps at the rate (fio's usec_for_io)",
   choices=("linear", "poisson"))
_o("rate_cycle", "int", SIM, "int", "milliseconds a rate floor is averaged over (1000)", alias="ratecycle")
_o("rate_ignore_thinktime", "bool", help="rates that ignore thinktime are not simulated")
_o("flow_id", "int", SIM, "int", "the flow a job's flow weight counts in")
_o("flow", "int", SIM, "int", "weight: the jobs of a flow, run together, keep their IO counts in the ratio of "
   "their weights (flow.c)", hi=1000)
_o("flow_watermark", "soft_deprecated", HOST, help="fio ignores it (deprecated)")
_o("flow_sleep", "int", SIM, "int", "microseconds a job held back by its flow waits (after its IO in flight) "
   "before asking again")

# -- data content (compressibility for compressing controllers) --------------------------------------
_o("buffer_compress_percentage", "int", SIM, "int", "written data compresses by this percent", hi=100, cb="last")
_o("buffer_compress_chunk", "int", SIM, "size", "granularity of the compressible data: a chunk over 4 KiB "
   "leaves some units incompressible and some all zeros, which a compressing drive stores at more than the mean")
_o("refill_buffers", "str_set", SIM, "set", "fresh random data on every write (incompressible)")
_o("zero_buffers", "str_set", SIM, "set", "all-zero data (maximally compressible)")
_o("scramble_buffers", "bool", HOST, "bool", "defeats dedupe only; no effect on compression")
_o("buffer_pattern", "str", help="data patterns are not simulated (the compressing drive reads "
   "buffer_compress_percentage)", cb="pattern")
_DEDUPE = ("the drive model compresses each 4 KiB unit on its own and keeps no index of content, so a repeated "
           "buffer costs what a fresh one does")
_o("dedupe_percentage", "int", HOST, "int", _DEDUPE, hi=100, cb="last")
_o("dedupe_global", "bool", HOST, "bool", _DEDUPE)
_o("dedupe_mode", "str", HOST, "str", _DEDUPE, choices=("repeat", "working_set"))
_o("dedupe_working_set_percentage", "int", HOST, "int", _DEDUPE, hi=100)

# -- verification ------------------------------------------------------------------------------------
_o("verify", "str", SIM, "str", "every block written is read back and checked against the drive's checksum "
   "of each 512-byte sector written, with fio's checks and messages (docs/fio.md, Verify); the checksum "
   "stands in for each type's algorithm", choices=tuple(_VERIFY.split()))
_o("do_verify", "bool", SIM, "bool", "run the verify phase after the writes (default 1)")
_o("verify_only", "str_set", SIM, "set", "log the writes without issuing them (phantom writes), then verify")
_o("verifysort", "soft_deprecated", HOST, help="fio ignores it (deprecated)")
_o("verifysort_nr", "soft_deprecated", HOST, help="fio ignores it (deprecated)")
_o("verify_interval", "int", SIM, "size", "a header every N bytes of a block, after fio's adjustments; a multiple "
   "of 512 (the simulator checks whole sectors)", lo=80)
_o("verify_offset", "int", help="moves fio's header elsewhere in the block; the simulator checks headers where "
   "fio writes them by default", lo=40)
_o("verify_pattern", "str", SIM, "str", "the data written and checked: hex, decimal and \"string\" parts (not "
   "%o or 'file')", cb="pattern")
_o("verify_fatal", "bool", SIM, "bool", "stop checking a block at its first bad chunk")
_o("verify_dump", "bool", HOST, "bool", "the simulated drive keeps checksums, not bytes: there is nothing to dump")
_o("verify_async", "int", HOST, "int", "verification threads on the host; the simulated checks take no host time")
_o("verify_backlog", "str_val", SIM, "size", "verify the pieces waiting every N blocks written, while writing")
_o("verify_backlog_batch", "int", SIM, "size", "pieces each backlog verify reads (default: verify_backlog)")
_o("verify_async_cpus", "str", HOST, help=_CPU, cb="dryrun")
_o("experimental_verify", "bool", help="replays the writes instead of logging them; not simulated")
_o("verify_state_load", "bool", help="reads the state file of an earlier fio run; the simulated drive starts "
   "fresh")
_o("verify_state_save", "bool", HOST, "bool", "fio saves state only for a job stopped in its write phase; a "
   "simulated run leaves no state to load")
_o("trim_percentage", "int", help="trimming part of a verifying job's writes is not simulated yet", hi=100)
_o("trim_verify_zero", "bool", help="trimming part of a verifying job's writes is not simulated yet "
   "(trimmed sectors do read zeros)")
_o("trim_backlog", "str_val", help="trimming part of a verifying job's writes is not simulated yet")
_o("trim_backlog_batch", "int", help="trimming part of a verifying job's writes is not simulated yet")

# -- zones -------------------------------------------------------------------------------------------
_o("zonemode", "str", help=NO_ZONES + " (zonemode=zbd), and zonemode=strided's zone skipping is not simulated",
   choices=("none", "strided", "zbd"))
for _name, _fio in (("zonesize", "str_val"), ("zonecapacity", "str_val"), ("zonerange", "str_val"),
                    ("zoneskip", "str_val_zone"), ("read_beyond_wp", "bool"), ("max_open_zones", "int"),
                    ("job_max_open_zones", "int"), ("ignore_zone_limits", "bool"),
                    ("zone_reset_threshold", "float_list"), ("zone_reset_frequency", "float_list")):
    _extra: Dict[str, Any] = {"hi": 4096} if _name.endswith("open_zones") else {}
    _extra.update({"maxlen": 1, "fp": (0.0, 1.0)} if _fio == "float_list" else {})
    _extra.update({"cb": "zone"} if _fio == "str_val_zone" else {})
    _o(_name, _fio, help=NO_ZONES, **_extra)

# -- steady state ------------------------------------------------------------------------------------
_o("steadystate", "str", SIM, "ss", "iops|iops_slope|bw|bw_slope:LIMIT[%]", alias="ss",
   choices=("iops", "iops_slope", "bw", "bw_slope"), cb="steadystate")
_o("steadystate_duration", "str_val_time", SIM, "time_s", "rolling window (0 disables)", alias="ss_dur",
   seconds=True, time=True)
_o("steadystate_ramp_time", "str_val_time", SIM, "time_s", "time before steady-state data is collected",
   alias="ss_ramp", seconds=True, time=True)
_o("steadystate_check_interval", "str_val_time", help=f"a later fio's option (fio 3.35): fio {FIO_VERSION}, "
   "whose job files ssdlab reads, refuses it", alias="ss_interval", seconds=True, time=True, newer=True)

# -- logs and reporting ------------------------------------------------------------------------------
_o("write_iops_log", "str", SIM, "str", "IOPS log prefix", cb="log")
_o("write_bw_log", "str", SIM, "str", "bandwidth log prefix", cb="log")
_o("write_lat_log", "str", SIM, "str", "latency logs prefix (slat, clat, lat)", cb="log")
_o("log_avg_msec", "int", SIM, "int", "log window in milliseconds")
_o("log_offset", "bool", SIM, "bool", "add the offset column to logs (0 in windowed logs)")
_o("log_prio", "bool", SIM, "bool", "priority column as hex")
_o("log_max_value", "bool", SIM, "bool", "0 only: logs hold window averages")
_o("log_window_value", "str", help=f"a later fio's option (fio 3.37, for log_max_value): fio {FIO_VERSION}, "
   "whose job files ssdlab reads, refuses it", newer=True)
_o("per_job_logs", "bool", SIM, "bool", "add the .N job index to log names")
_o("log_entries", "int", HOST, "int", _LOG_HOST, lo=1024, hi=1048576)
_o("log_compression", "int", HOST, "int", _LOG_HOST, lo=1024, hi=536870912)
_o("log_compression_cpus", "str", HOST, "str", _CPU, cb="dryrun")
_o("log_store_compressed", "bool", help="ssdlab writes plain-text logs")
_o("log_unix_epoch", "bool", help="log times count from the job's start in ssdlab")
_o("log_alternate_epoch", "bool", help="log times count from the job's start in ssdlab")
_o("log_alternate_epoch_clock_id", "int", help="log times count from the job's start in ssdlab")
_o("log_hist_msec", "int", help="latency histogram logs are not written")
_o("log_hist_coarseness", "int", help="latency histogram logs are not written")
_o("write_hist_log", "str", help="latency histogram logs are not written", cb="log")
_o("block_error_percentiles", "bool", help="trim error histograms are not simulated")
_o("clat_percentiles", "bool", SIM, "bool", "report completion latency percentiles")
_o("lat_percentiles", "bool", SIM, "bool", "report total latency percentiles")
_o("slat_percentiles", "bool", SIM, "bool", "report submission latency percentiles")
_o("percentile_list", "float_list", SIM, "str", "a subset of fio's default list", maxlen=20, fp=(0.0, 100.0))
_o("unified_rw_reporting", "str", SIM, "str", "none only", choices=("none", "mixed", "both", "0", "1", "2"))
_o("group_reporting", "str_set", SIM, "set", "report the jobs of a group (and numjobs clones) as one")
_o("significant_figures", "int", HOST, "int", "normal output precision", lo=1, hi=10)
_o("stats", "bool", HOST, "bool", "the simulator always collects them")
_o("disable_lat", "bool", HOST, "bool", "the simulator always measures latency")
_o("disable_clat", "bool", HOST, "bool", "the simulator always measures latency")
_o("disable_slat", "bool", HOST, "bool", "the simulator always measures latency")
_o("disable_bw_measurement", "bool", HOST, "bool", "the simulator always measures bandwidth", alias="disable_bw")
_o("gtod_reduce", "bool", HOST, "bool", "how often fio reads the host clock", cb="noop")
_o("gtod_cpu", "int", HOST, "int", _CPU)
_o("clocksource", "str", HOST, "str", "the simulator keeps its own time",
   choices=("gettimeofday", "clock_gettime", "cpu"), cb="noop")
_o("bwavgtime", "int", HOST, "int", "the simulator reports its own windows")
_o("iopsavgtime", "int", HOST, "int", "the simulator reports its own windows")
_o("disk_util", "bool", HOST, "bool", "host disk statistics")
_o("continue_on_error", "str", SIM, "str", "which errors a job goes on after (counted as total_err, "
   "first_error): with ignore_error, a latency target missed at depth 1; verify's EILSEQ",
   choices=("none", "read", "write", "io", "verify", "all", "0", "1"))
_o("ignore_error", "str", SIM, "str", "errors continue_on_error goes on after; a simulated drive's IO errors "
   "are a latency target missed at depth 1 (ETIMEDOUT, give 110: fio names only EPERM..ERANGE) and a failed "
   "verify (EILSEQ)", cb="dryrun")
_o("error_dump", "bool", HOST, "bool", _ERRORS)

# -- target, files and host --------------------------------------------------------------------------
_o("ioengine", "str_store", HOST, "str", "how IO is issued; synchronous engines keep one IO in flight",
   choices=tuple(_ENGINES.split()), cb="ioengine")
_o("direct", "bool", HOST, "bool", "O_DIRECT; the simulator always sends IO to the drive")
_o("buffered", "bool", HOST, "bool", "page cache; the simulator always sends IO to the drive", neg=True)
_o("atomic", "bool", help="atomic writes are not simulated")
_o("filename", "str_store", HOST, "str", "target file or device", prio=-1, maxlen=4096, cb="noop")
_o("directory", "str_store", HOST, "str", "target directory", cb="dryrun")
_o("filename_format", "str_store", HOST, "str", _FILES, prio=-1)
_o("unique_filename", "bool", HOST, "bool", _FILES)
_o("opendir", "str_store", help="a directory tree of files: the simulated drive is one block device",
   cb="dryrun")
_o("lockfile", "str", HOST, "lock", "fio's lock around IO to the job's file; refused for jobs that run together",
   prio=1, choices=("none", "exclusive", "readwrite"))
_o("invalidate", "bool", HOST, "bool", "page cache")
_o("overwrite", "bool", HOST, "bool", _FILES)
_o("fallocate", "str", HOST, "str", _FILES, choices=("none", "native", "posix", "keep", "truncate", "0", "1"))
_o("fadvise_hint", "str", HOST, "str", "page cache", choices=("0", "1", "random", "sequential"))
_o("create_serialize", "bool", HOST, "bool", _FILES)
_o("create_fsync", "bool", HOST, "bool", _FILES)
_o("create_on_open", "bool", HOST, "bool", _FILES)
_o("create_only", "bool", help="a job that only creates files does no IO")
_o("allow_file_create", "bool", HOST, "bool", _FILES)
_o("allow_mounted_write", "bool", HOST, "bool", "a host safety check")
_o("pre_read", "bool", help="pre-reading into the page cache is not simulated")
_o("unlink", "bool", HOST, "bool", "nothing to delete; refused for device runs")
_o("unlink_each_loop", "bool", HOST, "bool", "nothing to delete; refused for device runs")
_o("end_fsync", "bool", HOST, "bool", "the simulated drive has no volatile cache to flush")
_o("fsync_on_close", "bool", HOST, "bool", "the simulated drive has no volatile cache to flush")
_o("fsync", "int", help="flushes are not simulated (no volatile write cache model)")
_o("fdatasync", "int", help="flushes are not simulated (no volatile write cache model)")
_o("write_barrier", "int", help="barrier writes are not simulated")
_o("sync_file_range", "str_multi", help="flushes are not simulated (no volatile write cache model)",
   choices=("wait_before", "write", "wait_after"), cb="noop")
_o("sync", "str", help="synchronous (FUA) writes are not simulated (no volatile write cache model)",
   choices=("none", "0", "sync", "1", "dsync"))
_o("write_hint", "str", help="write lifetime hints are not simulated",
   choices=("none", "short", "medium", "long", "extreme"))
_o("ioscheduler", "str_store", HOST, "str", "the host's IO scheduler")
_o("mem", "str", HOST, "str", "host memory for IO buffers (cudamalloc, a GPU path, is refused)", alias="iomem",
   choices=("malloc", "shm", "shmhuge", "mmap", "mmapshared", "mmaphuge", "cudamalloc"), cb="noop")
_o("iomem_align", "int", HOST, "size", "host memory for IO buffers", alias="mem_align")
_o("hugepage-size", "int", HOST, "size", "host memory for IO buffers")
_o("lockmem", "str_val", HOST, "size", "host memory")
_o("cpumask", "int", HOST, "str", _CPU, cb="dryrun")
_o("cpus_allowed", "str", HOST, "str", _CPU, cb="dryrun")
_o("cpus_allowed_policy", "str", HOST, "str", _CPU, prio=1, choices=("shared", "split"))
_o("numa_cpu_nodes", "str", HOST, "str", _CPU, cb="dryrun")
_o("numa_mem_policy", "str", HOST, "str", _CPU, cb="dryrun")
_o("nice", "int", HOST, "int", "host CPU priority", lo=-20, hi=19)
_o("prio", "int", HOST, "int", "the simulated drive does not prioritise IO", hi=7)
_o("prioclass", "int", HOST, "int", "the simulated drive does not prioritise IO", hi=3)
_o("cgroup", "str_store", HOST, "str", "host cgroups")
_o("cgroup_nodelete", "bool", HOST, "bool", "host cgroups")
_o("cgroup_weight", "int", HOST, "int", "host cgroups", lo=100, hi=1000)
_o("uid", "int", HOST, "int", "host user")
_o("gid", "int", HOST, "int", "host group")
_o("gpu_dev_id", "int", help="GPU paths have no meaning on a simulated block device", absent=True)

# -- the options of the block-IO engines (fio --enghelp=ENGINE) --------------------------------------
_URING = ("io_uring", "io_uring_cmd")
_PRIO = "the simulated drive does not prioritise IO"
_o("hipri", "str_set", HOST, "set", "polled completions on the host", engines=("pvsync2",) + _URING)
_o("hipri_percentage", "int", HOST, "int", "polled completions on the host", hi=100, engines=("pvsync2",),
   default="100")
_o("uncached", "int", HOST, "int", "page cache", engines=("pvsync2",) + _URING)
_o("nowait", "bool", HOST, "bool", "how the host submits IO", engines=("pvsync2", "libaio") + _URING)
_o("userspace_reap", "str_set", HOST, "set", "how the host reaps completions", engines=("libaio",))
_o("cmdprio_percentage", "int", HOST, "int", _PRIO, hi=100, slots=3, engines=("libaio",) + _URING)
_o("cmdprio_class", "int", HOST, "int", _PRIO, lo=1, hi=3, slots=3, engines=("libaio",) + _URING)
_o("cmdprio", "int", HOST, "int", _PRIO, hi=7, slots=3, engines=("libaio",) + _URING)
_o("cmdprio_bssplit", "str_store", HOST, "str", _PRIO, engines=("libaio",) + _URING)
_o("fixedbufs", "str_set", HOST, "set", "how the host submits IO", engines=_URING)
_o("registerfiles", "str_set", HOST, "set", "how the host submits IO", engines=_URING)
_o("sqthread_poll", "str_set", HOST, "set", "how the host submits IO", engines=_URING)
_o("sqthread_poll_cpu", "int", HOST, "int", _CPU, engines=_URING, cb="noop")
_o("nonvectored", "int", HOST, "int", "how the host submits IO", engines=_URING, default="-1")
_o("force_async", "int", HOST, "int", "how the host submits IO", engines=_URING)
_o("cmd_type", "str", HOST, "str", "how the host submits IO", choices=("nvme",), engines=_URING, default="nvme")

# -- the options of fio's built-in profiles, which fio reads in every job ----------------------------
_TIOBENCH = "a tiobench-profile option; without profile=tiobench fio ignores it"
_ACT = "an act-profile option; without profile=act fio ignores it"
_o("block", "int", HOST, "int", _TIOBENCH, profile="tiobench")
_o("numruns", "int", HOST, "int", _TIOBENCH, profile="tiobench")
_o("dir", "str_store", HOST, "str", _TIOBENCH, profile="tiobench")
_o("threads", "int", HOST, "int", _TIOBENCH, profile="tiobench")
_o("device-names", "str_store", HOST, "str", _ACT, profile="act")
_o("load", "int", HOST, "int", _ACT, profile="act")
_o("test-duration", "str_val_time", HOST, "time_us", _ACT, profile="act", time=True)
_o("threads-per-queue", "int", HOST, "int", _ACT, profile="act")
_o("read-req-num-512-blocks", "int", HOST, "int", _ACT, profile="act")
_o("large-block-op-kbytes", "int", HOST, "int", _ACT, profile="act")
_o("prep", "str_set", HOST, "set", _ACT, profile="act")

OPTIONS: Dict[str, OptionSpec] = {o.name: o for o in _ALL}
"""Every option ssdlab knows, by canonical name."""
assert len(OPTIONS) == len(_ALL), "an option is declared twice"

ALIASES: Dict[str, str] = {o.alias: o.name for o in _ALL if o.alias}
"""fio's aliases (options.c ``.alias``) -> canonical names."""

# Engines that move blocks to a file or block device; anything else (net, cpuio, http, ...) is
# not storage IO and is rejected.
BLOCK_ENGINES = frozenset(
    "sync psync vsync pvsync pvsync2 io_uring io_uring_cmd libaio posixaio solarisaio windowsaio "
    "mmap splice sg libzbc null xnvme libblkio".split()
)
# Engines that keep one IO in flight whatever iodepth says (fio's HOWTO, iodepth).
SYNC_ENGINES = frozenset("sync psync vsync pvsync pvsync2 mmap splice".split())
DEFAULT_ENGINE = "psync"
"""fio's default ioengine on Linux (os.h, FIO_PREFERRED_ENGINE)."""


def canonical(name: str) -> str:
    """The canonical option name for `name` (aliases resolved)."""
    return ALIASES.get(name, name)


def spec(name: str) -> Optional[OptionSpec]:
    return OPTIONS.get(canonical(name))


def suggestion(name: str) -> str:
    """`` (did you mean 'x'?)`` for a near miss, else an empty string."""
    known = [n for n, o in OPTIONS.items() if o.kind != REFUSED] + [a for a, n in ALIASES.items()
                                                                     if OPTIONS[n].kind != REFUSED]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
    return f" (did you mean '{close[0]}'?)" if close else ""


def refusal(name: str) -> str:
    """Why option `name` (as written) is refused: the one-line message's text after the location."""
    s = spec(name)
    if s is None:
        return f"option '{name}' is not supported by the simulator{suggestion(name)}"
    return f"option '{name}' is not supported by the simulator: {s.help}" if s.help else \
        f"option '{name}' is not supported by the simulator"
