"""The fio option registry and fio's job-file rules, without fio: docs/fio.md's support table is the
registry's, and each rule of fio 3.33's reading (init.c, parse.c, options.c) is kept. The values
expected here are fio's own (``fio --showcmd`` / ``fio --debug=parse --parse-only`` on the same
text, as quoted); tests/test_fio_parity.py checks them against the installed fio at large."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.fio import fioread
from ssdlab.fio import jobfile as jf
from ssdlab.fio import options as opts
from ssdlab.fio import planner
from ssdlab.fio.support import with_table

DOC = Path(__file__).resolve().parent.parent / "docs" / "fio.md"
GIB = 2**30


def reading(text: str, env: Optional[Dict[str, str]] = None) -> fioread.FileReading:
    return jf.parse_string(text, env=env or {}).reading


def values(text: str, section: int = 0) -> Dict[str, Any]:
    r = reading(text)
    assert r.complete, [(x.name, x.errors) for s in r.sections for x in s.readings]
    return r.sections[section].values


def refusal(text: str, env: Optional[Dict[str, str]] = None) -> str:
    with pytest.raises(SsdlabError) as e:
        planner.plan(jf.parse_string(text, env=env or {}), GIB)
    assert "\n" not in str(e.value)
    return str(e.value)


# -- the registry and its table ---------------------------------------------------------------------

def test_docs_hold_the_registrys_support_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert with_table(text) == text, "run: python -m ssdlab.fio.support docs/fio.md"


def test_every_option_has_one_declaration_a_status_and_a_reason_to_refuse() -> None:
    names = [o.name for o in opts.OPTIONS.values()]
    aliases = [o.alias for o in opts.OPTIONS.values() if o.alias]
    assert len(set(names + aliases)) == len(names) + len(aliases)
    for o in opts.OPTIONS.values():
        assert o.kind in (opts.SIM, opts.HOST, opts.REFUSED) and o.fio in opts.FIO_TYPES, o
        assert o.kind != opts.REFUSED or o.help, f"{o.name}: a refused option needs its reason"
    # fio 3.33's table has 227 options (228 less the soft-deprecated... counted by fio --cmdhelp);
    # with the engines' and profiles' ones the registry knows them all.
    assert len([o for o in opts.OPTIONS.values() if not (o.engines or o.profile or o.newer)]) == 227


def test_a_refused_option_gives_its_reason() -> None:
    assert ("option 'zonemode' is not supported by the simulator: no zoned model yet" in
            refusal("[j]\nrw=randwrite\nzonemode=zbd\n"))

    assert "GPU memory for IO buffers has no meaning" in refusal("[j]\nrw=read\nmem=cudamalloc\n")
    assert "not a block-IO engine" in refusal("[j]\nrw=read\nioengine=filecreate\n")


def test_wait_for_the_job_just_before_is_a_stonewall_that_keeps_the_group() -> None:
    p = planner.plan(jf.parse_string("[a]\nrw=read\nsize=1m\nnumjobs=2\n[b]\nwait_for=a\nrw=read\nsize=1m\n"), GIB)
    assert p.together == [[0, 1], [2]]  # b runs after both clones of a (fio's examples/waitfor.fio)
    assert [j.groupid for j in p.jobs] == [0, 0, 0]  # unlike stonewall, the reporting group stays
    assert "the simulator starts a job after the job just before it" in \
        refusal("[a]\nrw=read\nsize=1m\n[b]\nrw=read\nsize=1m\n[c]\nwait_for=a\nrw=read\nsize=1m\n")
    assert "no job before it is named so" in refusal("[a]\nrw=read\nsize=1m\n[b]\nwait_for=zz\nrw=read\n")


# -- lines -----------------------------------------------------------------------------------------

def test_inline_comments_end_a_value_as_in_fio() -> None:
    # fio --showcmd: "fio --bs=4k --name=j --numjobs=4 --runtime=3600 --description="a b" "
    text = "[global]\nbs=4k ; c\n[j] ; job\nnumjobs=4 ; 4 threads\nruntime=3600 # Max runtime\ndescription=a b;c\n"
    r = reading(text)
    assert r.showcmd() == 'fio --bs=4k --name=j --numjobs=4 --runtime=3600 --description="a b" \n'
    j = jf.parse_string(text).jobs()[0]
    assert j.get("numjobs").value == "4" and j.get("runtime").value == "3600"
    assert jf.strip_line("  rate=1m,2m\t# per direction ; x") == "rate=1m,2m"


def test_sections_named_global_something_are_global() -> None:
    f = jf.parse_string("[globals]\nbs=8k\n[j]\nrw=read\n")
    assert [j.section for j in f.jobs()] == ["j"] and f.jobs()[0].get("bs").value == "8k"


def test_a_blank_after_the_equals_sign_is_part_of_the_value() -> None:
    # fio --debug=parse on "bs= 4k": "ptr= 4k", "ret=0, out=4"
    assert values("[j]\nbs= 4k\n")["bs"] == (4, 4, 4)
    assert "fio reads the part ' 4k' otherwise than it looks" in refusal("[j]\nrw=read\nbs= 4k\n")
    assert "fio 3.33 refuses it" in refusal("[j]\nrw= read\n")  # no choice matches " read"
    assert values("[j]\nbs =4k\n")["bs"] == (4096, 4096, 4096)  # before the '=': dropped


def test_include_looks_in_the_current_directory_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "part.inc").write_text("bs=8k\n")
    (tmp_path / "part.inc").write_text("bs=16k\n")
    (tmp_path / "jobs" / "j.fio").write_text("[j]\nrw=read\ninclude part.inc\n")
    monkeypatch.chdir(tmp_path)
    assert jf.parse("jobs/j.fio").jobs()[0].get("bs").value == "16k"  # ./part.inc, as fio (init.c access())
    (tmp_path / "part.inc").unlink()
    assert jf.parse("jobs/j.fio").jobs()[0].get("bs").value == "8k"  # next to the job file
    (tmp_path / "jobs" / "k.fio").write_text("[j]\ninclude  part.inc\n")
    with pytest.raises(SsdlabError, match="starts with the blanks"):
        jf.parse("jobs/k.fio")


# -- names ------------------------------------------------------------------------------------------

def test_aliases_and_profile_options_as_fio_reads_them() -> None:
    # fio --showcmd: "fio --name=j --rate_min=100 --threads=1 --bs=8k "
    assert reading("[j]\nratemin=100\nthreads=1\nblocksize=8k\n").showcmd() == \
        "fio --name=j --rate_min=100 --threads=1 --bs=8k \n"
    p = planner.plan(jf.parse_string("[j]\nrw=read\nsize=1m\nthreads=1\n"), GIB)
    assert any("threads" in n for n in p.notes)  # accepted, no effect (a tiobench-profile option)


def test_engine_options_need_their_engine() -> None:
    assert not reading("[j]\nhipri\n").complete  # fio: "Bad option <hipri>" (psync has no options)
    assert reading("[j]\nioengine=pvsync2\nhipri\n").complete
    assert reading("[global]\nioengine=io_uring\n[j]\nhipri\nfixedbufs\n").complete
    assert "belongs to ioengine=pvsync2, io_uring, io_uring_cmd" in refusal("[j]\nrw=read\nhipri\n")


# -- values -----------------------------------------------------------------------------------------

def test_open_ended_zones_take_the_rest() -> None:
    # fio --debug=parse: "0: 50/5", "1: 30/15", "2: 20/80" for each direction
    zones = values("[j]\nrandom_distribution=zoned:50/5:30/15:20/\n")["random_distribution_value"]["zones"]
    assert zones == [((50, 5), (30, 15), (20, 80))] * 3
    p = planner.plan(jf.parse_string("[j]\nrw=randread\nnorandommap\nrandom_distribution=zoned:50/5:30/15:20/\n"), GIB)
    assert [z["size"] for z in p.jobs[0].workload["distribution"]["zones"]] == [5.0, 15.0, 80.0]


def test_a_value_is_accepted_when_any_part_reads() -> None:
    r = reading("[j]\niodepth=-1\n").sections[0]
    assert r.ok and r.values.get("iodepth") is None  # fio: "min value out of range" for -1, then 1 (not kept)
    assert r.readings[0].errors == ["iodepth: min value out of range: -1 (1 min)"]
    assert "iodepth=-1: must be at least 1" in refusal("[j]\nrw=read\niodepth=-1\n")  # ssdlab's own bound first
    assert "fio complains (log_entries: min value out of range" in refusal("[j]\nrw=read\nlog_entries=-2048\n")
    assert values("[j]\nbs=8k,garbage\n")["bs"] == (8192, None, None)  # reads 8k; writes, trims: default
    assert "cannot read the part 'garbage'" in reading("[j]\nbs=8k,garbage\n").sections[0].readings[0].trap
    assert "bs=garbage: not a size" in refusal("[j]\nrw=read\nbs=8k,garbage\n")  # ssdlab's reader says it first
    assert values("[j]\nrate_iops=,300\n")["rate_iops"] == (None, 300, 300)  # empty: read at its default


def test_time_units_fio_does_not_know_are_microseconds() -> None:
    assert values("[j]\nruntime=10sec\n")["runtime"] == 10  # fio: "ret=0, out=10"
    assert values("[j]\nruntime=10s\n")["runtime"] == 10_000_000
    assert values("[j]\nruntime=0x10\n")["runtime"] == 16  # hex, and 'x...' is no unit
    assert "fio would read it as 10 microseconds" in refusal("[j]\nrw=read\nruntime=10sec\n")


def test_sizes_follow_kb_base_of_their_own_section() -> None:
    v = reading("[global]\nbs=4k\nkb_base=1000\n[j]\nsize=4k\n[global]\nkb_base=1024\n[k]\nsize=4KiB\n")
    assert v.sections[0].values["bs"] == (4000, 4000, 4000)  # kb_base first (fio sorts it first)
    assert v.sections[1].values["size"] == 4000
    assert v.sections[3].values["size"] == 4000  # KiB is 1000 with kb_base=1024


def test_fio_keywords_are_this_hosts_values() -> None:
    cpus = os.sysconf("SC_NPROCESSORS_CONF")
    assert values("[j]\niodepth=$ncpus*2\nnumjobs=($ncpus+1)/2\n")["iodepth"] == cpus * 2
    assert values("[j]\nnumjobs=($ncpus+1)/2\n")["numjobs"] == (cpus + 1) // 2


def test_whole_numbers_beyond_32_bits_wrap_in_fio() -> None:
    v = values("[j]\nthinktime_spin=51h\n")["thinktime_spin"]
    assert v == -1083593728  # fio keeps 183600000000 us in an int
    assert "in a 32-bit number, which makes it -1083593728" in refusal("[j]\nrw=read\nthinktime_spin=51h\n")


def test_typed_values_for_the_options_being_simulated() -> None:
    v = values("[j]\nratemin=1m,2m\nrate_process=poisson\nio_submit_mode=offload\nlatency_target=10ms\n"
               "latency_percentile=99.5\nflow=-2\nblockalign=8k\nignore_error=,EIO\nexit_what=all\n"
               "dedupe_percentage=30\nbuffer_compress_percentage=50\n")
    assert v["rate_min"] == (1048576, 2097152, 2097152)
    assert (v["rate_process"], v["io_submit_mode"], v["exit_what"]) == ("poisson", "offload", "all")
    assert v["latency_target"] == 10_000 and v["latency_percentile"] == (99.5,)
    assert v["flow"] == -2  # fio's 32 bits as a C int: the weight fio's unsigned field holds is 4294967294
    assert v["ba"] == (8192, 8192, 8192)
    assert (v["dedupe_percentage"], v["buffer_compress_percentage"]) == (30, 50)
