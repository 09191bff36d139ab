"""Hardening of fio job-file inputs: every numeral bounded (sizes, times, whole numbers, per-direction
lists, size mixes and ranges), rwmixread/rwmixwrite as fio bounds them, bssplit's per-direction
syntax as fio reads it, tabs in ${VAR} values, options that would delete a device run's target,
lockfile for jobs that run together, and the bound on the IO a job file plans (docs/fio.md)."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab import cli
from ssdlab.errors import SsdlabError
from ssdlab.fio import devrun
from ssdlab.fio import jobfile as jf
from ssdlab.fio import options as opts
from ssdlab.fio import planner

GIB = 2**30
ROOT = Path(__file__).resolve().parents[1]
HAVE_FIO = shutil.which("fio") is not None
needs_fio = pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed (scripts/install-test-tools.sh)")


def plan(text: str, user_bytes: int = GIB, env: Optional[Dict[str, str]] = None) -> planner.FioPlan:
    return planner.plan(jf.parse_string(text, env=env or {}), user_bytes)


def refusal(text: str, user_bytes: int = GIB, env: Optional[Dict[str, str]] = None) -> str:
    with pytest.raises(SsdlabError) as e:
        plan(text, user_bytes, env)
    message = str(e.value)
    assert "\n" not in message and len(message) < 600, message
    return message


def run_cli(args: List[str]) -> Tuple[Any, str]:
    """`ssdlab ARGS` in-process: (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(args)
    return status, err.getvalue()


def one_error_line(status: Any, err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("ssdlab: error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- every numeral bounded ---------------------------------------------------------------------------

NUMERIC = sorted(name for name, spec in opts.OPTIONS.items() if spec.type in opts.NUMERIC_TYPES)
# Where a numeral sits in each numeric type's value ({n}: the numeral under test).
TEMPLATES = {
    "int": ["{n}"],
    "size": ["{n}", "{n}k"],
    "size%": ["{n}", "{n}m"],
    "time_s": ["{n}", "{n}s"],
    "time_us": ["{n}", "{n}ms"],
    "sizes": ["{n}", "4k,{n}", ",{n}k"],
    "ints": ["{n}", "100,{n}"],
    "pcts": ["{n}", "100,{n}"],
    "split": ["4k/{n}", "{n}k/100", "4k/50:8k/50,{n}k/100"],
    "ranges": ["4k-{n}k", "{n}-8k", "4k-8k,{n}-8k"],
    "ss": ["iops:{n}%", "iops_slope:{n}"],
}
BAD_NUMERALS = ["9" * 400, "9" * 5000, "１２", "٤٥", "۹۹", "inf", "nan", "-inf", "1e999", "0x" + "f" * 60]
OTHER_NUMERALS = ["-0", "0", "1", "9" * 39, "18446744073709551616", "0x10", "4k", "1.5", "+7"]
RWS = ["read", "randwrite", "randrw", "trim", "trimwrite"]
# (extra lines a job needs for an option to be read at all)
CONTEXT = {"thinktime_blocks": "thinktime=10\n", "steadystate": "ss_dur=10\ntime_based\nruntime=20\n",
           "steadystate_ramp_time": "ss_dur=10\n", "steadystate_check_interval": "ss_dur=10\n"}


def job(option: str, value: str, rw: str = "randwrite") -> Tuple[str, int]:
    """A tiny job file with `option=value`, and the line it is on."""
    head = f"[j]\nrw={rw}\nnorandommap=1\nsize=16m\n{CONTEXT.get(option, '')}"
    return f"{head}{option}={value}\n", head.count("\n") + 1


def test_the_numeric_options_come_from_the_option_table() -> None:
    # The property tests below enumerate these; a numeric option added to the table is covered.
    assert {"bs", "offset", "runtime", "thinktime", "startdelay", "ramp_time", "rate", "rate_iops", "log_avg_msec",
            "steadystate_duration", "number_ios", "rwmixread", "rwmixwrite", "percentage_random",
            "buffer_compress_percentage", "thinktime_blocks", "iodepth", "numjobs", "bssplit", "bsrange", "loops",
            "size", "io_size", "nice"} <= set(NUMERIC)
    assert {opts.OPTIONS[n].type for n in NUMERIC} == set(TEMPLATES)


@settings(max_examples=150, deadline=None)
@given(option=st.sampled_from(NUMERIC), numeral=st.sampled_from(BAD_NUMERALS), data=st.data())
def test_huge_unicode_and_infinite_numerals_are_one_line_naming_option_and_line(option: str, numeral: str,
                                                                                 data: Any) -> None:
    template = data.draw(st.sampled_from(TEMPLATES[opts.OPTIONS[option].type]))
    rw = data.draw(st.sampled_from(RWS))
    text, line = job(option, template.format(n=numeral), rw)
    with pytest.raises(SsdlabError) as e:
        plan(text)
    message = str(e.value)
    assert message.startswith(f"job.fio:{line}: ") and option in message, message
    assert "\n" not in message and len(message) < 400, message


@settings(max_examples=150, deadline=None)
@given(option=st.sampled_from(NUMERIC), data=st.data())
def test_any_numeral_is_read_or_refused_never_a_crash(option: str, data: Any) -> None:
    template = data.draw(st.sampled_from(TEMPLATES[opts.OPTIONS[option].type]))
    numeral = data.draw(st.one_of(st.sampled_from(OTHER_NUMERALS + BAD_NUMERALS),
                                  st.integers(min_value=-(10**45), max_value=10**45).map(str),
                                  st.text(alphabet="0123456789.-+xkmgKiB%e ,:/", min_size=1, max_size=12)))
    text, _ = job(option, template.format(n=numeral), data.draw(st.sampled_from(RWS)))
    try:
        plan(text)
    except SsdlabError as e:  # the only way a value may fail: one line
        assert "\n" not in str(e) and str(e).startswith("job.fio:"), str(e)


@pytest.mark.parametrize("option", ["bs", "offset", "runtime", "thinktime", "startdelay", "ramp_time", "rate",
                                    "rate_iops", "log_avg_msec", "ss_dur"])
@pytest.mark.parametrize("digits", [400, 5000])
def test_the_reported_options_refuse_huge_numbers_through_the_cli(tmp_path: Path, option: str, digits: int) -> None:
    path = tmp_path / "job.fio"
    path.write_text(f"[j]\nrw=randwrite\nnorandommap=1\nsize=16m\n{option}={'9' * digits}\n")
    line = one_error_line(*run_cli(["fio", str(path), "--capacity", "1GiB", "-q"]))
    assert f"job.fio:5: {option}: 999999999999... is a {digits}-character number" in line, line


def test_a_huge_number_is_exit_2_and_one_line_in_a_real_process(tmp_path: Path) -> None:
    path = tmp_path / "job.fio"
    path.write_text("[j]\nrw=randwrite\nnorandommap=1\nthinktime=" + "9" * 5000 + "\n")
    r = subprocess.run([sys.executable, "-m", "ssdlab", "fio", str(path), "--capacity", "1GiB", "-q"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("ssdlab: error: ") and "job.fio:4: thinktime" in r.stderr


def test_number_ios_is_refused_at_the_job_file_with_its_bound() -> None:
    assert "job.fio:3: number_ios=99999999999999999999: must be at most 9223372036854775807" in \
        refusal("[j]\nrw=randwrite\nnumber_ios=99999999999999999999\n")
    assert "job.fio:3: number_ios: 999999999999... is a 400-character number" in \
        refusal("[j]\nrw=randwrite\nnumber_ios=" + "9" * 400 + "\n")
    assert plan("[j]\nrw=randwrite\nnorandommap\nsize=1m\nnumber_ios=9223372036854775807\n").jobs[0].workload[
        "io_limit"] == 2**63 - 1


@pytest.mark.parametrize("text,needle", [
    ("[j]\nrw=randwrite\nthinktime=2s\n", "job.fio:3: thinktime=2s: 2e+06 us is more than the simulator's longest"),
    ("[j]\nrw=randwrite\nstartdelay=2000000000\n", "job.fio:3: job 'j': startdelay=2000000000 is 2e+09 s"),
    ("[j]\nrw=randwrite\nruntime=5\nramp_time=100000000\n", "job.fio:4: job 'j': ramp_time=100000000 at log_avg_msec"),
    ("[j]\nrw=randwrite\nruntime=100000000\ntime_based\n", "job.fio:3: job 'j': runtime=100000000 at log_avg_msec"),
    ("[j]\nrw=randwrite\nss_dur=2000000000\n", "job.fio:3: job 'j': ss_dur=2000000000 is 2e+09 s"),
    ("[j]\nrw=randwrite\nrate_iops=4294967296\n", "rate_iops=4294967296: must be at most 4294967295"),
    ("[j]\nrw=randwrite\nlog_avg_msec=4294967296\n", "log_avg_msec=4294967296: must be at most 4294967295"),
    ("[j]\nrw=randwrite\niodepth=0\n", "job.fio:3: iodepth=0: must be at least 1"),
    ("[j]\nrw=randwrite\niodepth=65537\n", "job.fio:3: iodepth=65537: must be at most 65536"),
    ("[j]\nrw=randwrite\nnumjobs=1000000\n", "job.fio:3: numjobs=1000000: must be at most 4096"),
    ("[j]\nrw=write\npercentage_random=101\n", "job.fio:3: percentage_random=101: must be at most 100"),
    ("[j]\nrw=randwrite\nzero_buffers\nbuffer_compress_percentage=101\n",
     "job.fio:4: buffer_compress_percentage=101: must be at most 100"),
    ("[j]\nrw=randwrite\nthinktime_blocks=99999999999999\n", "job.fio:3: thinktime_blocks=99999999999999: must be at most"),
    ("[j]\nrw=randwrite\nbs=4k,99999999999999999999999k\n", "more than 2**64-1 bytes"),
    ("[j]\nrw=randwrite\nbs=１２k\n", "job.fio:3: bs=１２k: not a size"),
    ("[j]\nrw=randwrite\nnorandommap\nrandom_distribution=zipf:inf\n", "job.fio:4: random_distribution: 'inf' is not a number"),
    ("[j]\nrw=randwrite\npercentile_list=99:nan\n", "job.fio:3: percentile_list: 'nan' is not a number"),
    ("[global]\nbs=" + "9" * 400 + "\n[j]\nrw=randwrite\nbs=4k\n", "job.fio:2: bs: 999999999999"),  # overridden: still read
    ("[j]\nrw=randwrite\nnice=20\n", "job.fio:3: nice=20: must be at most 19"),
    ("[j]\nrw=randwrite\nsteadystate=inf\n", "job.fio:3: steadystate=inf: expected CRITERION:LIMIT"),
    ("[j]\nrw=randwrite\nbs=64m\n", "job.fio:3: bs=64m: requests of 64 MiB are larger than the 32 MiB"),
    ("[j]\nrw=randwrite\nnorandommap\nbssplit=4k/50:64m/50\n", "job.fio:4: bssplit=4k/50:64m/50: requests of 64 MiB"),
])
def test_values_beyond_fio_or_the_simulator_are_one_line_naming_the_option(text: str, needle: str) -> None:
    assert needle in refusal(text)


# -- rwmixread / rwmixwrite -----------------------------------------------------------------------------

@pytest.mark.parametrize("rw", ["randwrite", "read", "randrw"])
@pytest.mark.parametrize("option", ["rwmixread", "rwmixwrite"])
def test_rwmix_above_100_is_refused_for_every_rw_as_fio_does(rw: str, option: str) -> None:
    assert f"job.fio:3: {option}=101: must be at most 100" in refusal(f"[j]\nrw={rw}\n{option}=101\nnorandommap\n")
    plan(f"[j]\nrw={rw}\n{option}=100\nnorandommap\n")
    plan(f"[j]\nrw={rw}\n{option}=0\nnorandommap\n")


@needs_fio
@pytest.mark.parametrize("value", ["0", "50", "100", "101", "1000"])
def test_rwmix_acceptance_matches_fio(tmp_path: Path, value: str) -> None:
    for option in ("rwmixread", "rwmixwrite"):
        text = f"[j]\nrw=randwrite\nsize=1m\n{option}={value}\n"
        (tmp_path / "j.fio").write_text(f"[global]\nfilename={tmp_path / 'x'}\n" + text)
        fio_ok = subprocess.run(["fio", "--parse-only", "j.fio"], cwd=tmp_path, capture_output=True,
                                timeout=60).returncode == 0
        try:
            plan(text + "norandommap\n")
            ours = True
        except SsdlabError:
            ours = False
        assert ours == fio_ok, (option, value)


# -- bssplit per direction --------------------------------------------------------------------------------

def sizes_of(text: str) -> List[Tuple[int, float]]:
    w = plan(text).jobs[0].workload
    if "block_sizes" in w:
        return [(b["bytes"], b["pct"]) for b in w["block_sizes"]]
    return [(w["block_bytes"], 100.0)]


@pytest.mark.parametrize("rw,value,expected", [
    ("randwrite", "8k/50:16k/50,32k/100", [(32768, 100.0)]),     # after the comma: writes
    ("randread", "8k/50:16k/50,32k/100", [(8192, 50.0), (16384, 50.0)]),
    ("randtrim", "8k/50:16k/50,32k/100", [(32768, 100.0)]),      # no third entry: trims as writes
    ("randwrite", "8k/50:16k/50,", [(4096, 100.0)]),              # an empty entry: fio's default bs
    ("randwrite", "8k/50:16k/50,\nbs=64k", [(65536, 100.0)]),     # ... or the job's bs
    ("randread", ",32k/100", [(4096, 100.0)]),
    ("randwrite", "8k/50:16k/50,,32k/100", [(4096, 100.0)]),
    ("randtrim", "8k/50:16k/50,,32k/100", [(32768, 100.0)]),
    ("randtrim", "8k,16k/100,", [(4096, 100.0)]),
    ("randwrite", "8k/50:16k/", [(8192, 50.0), (16384, 50.0)]),   # a blank share: the rest, split
    ("randwrite", "8k:16k:32k/50", [(8192, 25.0), (16384, 25.0), (32768, 50.0)]),
    ("randwrite", "8k/50:16k/50:", [(8192, 50.0), (16384, 50.0)]),  # a trailing ':' ends the list
    ("randrw", "8k/50:16k/50", [(8192, 50.0), (16384, 50.0)]),
    ("randrw", "8k/50:16k/50,8k/50:16k/50", [(8192, 50.0), (16384, 50.0)]),
])
def test_bssplit_directions_are_read_as_fio_reads_them(rw: str, value: str, expected: List[Tuple[int, float]]) -> None:
    assert sizes_of(f"[j]\nrw={rw}\nnorandommap\nbssplit={value}\n") == expected


MIX = [{"bytes": 8192, "pct": 50.0}, {"bytes": 16384, "pct": 50.0}]
ONE = lambda n: [{"bytes": n, "pct": 100.0}]  # noqa: E731


@pytest.mark.parametrize("value,reads,writes", [
    ("8k/50:16k/50,", MIX, ONE(4096)),  # an empty entry: fio's default bs (options.c str_split_parse)
    (",16k/100", ONE(4096), ONE(16384)),
    ("8k/50:16k/50,,16k/100", MIX, ONE(4096)),
    ("8k/100,16k/100", ONE(8192), ONE(16384)),
])
def test_bssplit_per_direction_as_fio_reads_it(value: str, reads, writes) -> None:
    w = plan(f"[j]\nrw=randrw\nnorandommap\nbssplit={value}\n").jobs[0].workload
    assert w["direction_block_sizes"][:2] == [reads, writes]
    assert w["block_bytes"] == min(m["bytes"] for m in reads + writes)


@pytest.mark.parametrize("rw,value,needle", [
    ("randwrite", "8k/50::16k/50", "an empty entry ('::'); fio stops reading the list there"),
    ("randwrite", "8k/0:16k/", "a 0 share for 8k: fio reads it as blank"),
    ("randwrite", "8k/50.5:16k/", "share '50.5' of 8k is not a whole percentage"),
    ("randwrite", "8k/50:16k/30", "the shares add up to 80 %, not 100 %"),
    ("randwrite", "8k/150", "share 150 of 8k is more than 100 %"),
    ("randwrite", ":".join(f"{4 * (i + 1)}k" for i in range(65)), "65 entries; fio reads at most 64"),
    ("randwrite", "4k/50:8k/50,4k/" + "9" * 400, "bssplit: 999999999999... is a 400-character number"),
])
def test_bssplit_forms_fio_reads_otherwise_are_refused_with_the_reason(rw: str, value: str, needle: str) -> None:
    message = refusal(f"[j]\nrw={rw}\nnorandommap\nbssplit={value}\n")
    assert message.startswith("job.fio:4: bssplit") and needle in message, message


def test_bsrange_and_ba_empty_entries_mean_bs_too() -> None:
    assert plan("[j]\nrw=randwrite\nnorandommap\nbsrange=8k-16k,\n").jobs[0].workload["block_bytes"] == 4096
    assert "different values per direction" in refusal("[j]\nrw=randrw\nnorandommap\nbsrange=8k-16k,\n")
    plan("[j]\nrw=randrw\nnorandommap\nbs=8k\nba=,8k\n")


def _fio_sizes(tmp_path: Path, rw: str, value: str) -> Dict[str, Dict[int, int]]:
    """The request sizes fio issues, per direction (null engine, its own iolog)."""
    log = tmp_path / "io.log"
    (tmp_path / "o.fio").write_text(f"[j]\nioengine=null\nrw={rw}\nsize=64m\nnumber_ios=2000\nnorandommap\n"
                                    f"filename={tmp_path / 'nullf'}\nwrite_iolog={log}\nbssplit={value}\n")
    subprocess.run(["fio", "o.fio", "--output=/dev/null"], cwd=tmp_path, check=True, capture_output=True, timeout=120)
    out: Dict[str, Dict[int, int]] = {}
    for line in log.read_text().splitlines():
        f = line.split()  # iolog v3: time file action offset length
        if len(f) == 5 and f[2] in ("read", "write", "trim"):
            out.setdefault(f[2], {}).setdefault(int(f[4]), 0)
            out[f[2]][int(f[4])] += 1
    return out


@needs_fio
@pytest.mark.parametrize("rw,value", [
    ("randwrite", "8k/50:16k/50,"), ("randread", ",16k/100"), ("randwrite", "8k/50:16k/50,,32k/100"),
    ("randwrite", "8k/50:16k/"), ("randread", "8k/50:16k/50,32k/100"), ("randwrite", "8k/50:16k/50,32k/100"),
    ("randwrite", "8k:16k:32k/50"),
])
def test_bssplit_sizes_match_what_fio_issues(tmp_path: Path, rw: str, value: str) -> None:
    issued = _fio_sizes(tmp_path, rw, value)
    direction = {"randwrite": "write", "randread": "read"}[rw]
    assert set(issued) == {direction}
    ours = dict(sizes_of(f"[j]\nrw={rw}\nnorandommap\nbssplit={value}\n"))
    counts = issued[direction]
    assert set(counts) == set(ours)
    total = sum(counts.values())
    for size, pct in ours.items():
        assert abs(100 * counts[size] / total - pct) < 6, (counts, ours)


# -- ${VAR} values ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["4k\t", "4\tk", "\t/tmp/x", "a\tb"])
def test_a_tab_in_an_expanded_value_is_refused_naming_the_variable(value: str) -> None:
    with pytest.raises(SsdlabError) as e:
        jf.parse_string("[w]\nrw=write\nbs=${B}\n", env={"B": value})
    assert str(e.value).startswith("job.fio:3: environment variable 'B' holds a control character ('\\t')")
    assert "without tabs" in str(e.value)


def test_tabs_in_the_job_files_own_lines_are_still_whitespace() -> None:
    p = plan("[w]\n\trw=write\t\nbs\t=8k\t\n")
    assert p.jobs[0].workload["block_bytes"] == 8192
    # After the '=' a tab is part of the value, as in fio, which reads "\t8k" as 8 bytes
    # (fio --debug=parse: "ret=0, out=8"): refused, not read as 8k.
    assert "fio reads the part '\t8k' otherwise than it looks" in refusal("[w]\nrw=write\nbs\t=\t8k\n")


def test_a_tab_in_a_variable_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "job.fio").write_text("[w]\nrw=write\nwrite_iops_log=${P}\nruntime=1\n")
    monkeypatch.setenv("P", "log\tname")
    line = one_error_line(*run_cli(["fio", str(tmp_path / "job.fio"), "--capacity", "1GiB", "-q",
                                    "--out", str(tmp_path / "o")]))
    assert "job.fio:3: environment variable 'P' holds a control character" in line
    assert not (tmp_path / "o").exists()


# -- device-only options ---------------------------------------------------------------------------------

@pytest.mark.parametrize("option", ["unlink=1", "unlink", "unlink_each_loop=1", "unlink_each_loop=0x1"])
def test_options_that_delete_the_target_are_refused_for_device_runs(option: str) -> None:
    parsed = jf.parse_string(f"[global]\n{option}\n[w]\nrw=write\nsize=1m\n")
    with pytest.raises(SsdlabError, match=r"job.fio:2: unlink.*: fio would delete the target file after "
                                          r".*a device run overwrites the target but never deletes it"):
        devrun.refuse_deleting_options(parsed)
    devrun.refuse_deleting_options(jf.parse_string(f"[global]\n{option}\n[w]\nrw=write\nunlink=0\n"
                                                   f"unlink_each_loop=0\n"))
    if option != "unlink":
        plan(f"[global]\n{option}\n[w]\nrw=write\nsize=1m\n")  # simulated: nothing to delete, no effect (noted)
    else:  # fio itself refuses a bare boolean ("Option unlink requires an argument")
        assert "fio 3.33 refuses it" in refusal(f"[global]\n{option}\n[w]\nrw=write\nsize=1m\n")


def test_the_last_check_before_fio_refuses_unlink_too(tmp_path: Path) -> None:
    from ssdlab.fio.safety import Target

    target = Target(tmp_path / "t.img", "file", 64 * 2**20)
    text = f"[global]\nfilename={target.path.resolve()}\n[w]\nrw=write\nunlink=1\n"
    with pytest.raises(SsdlabError, match="fio would delete the target file"):
        devrun._only_target(text, target)


@needs_fio
def test_unlink_is_refused_before_the_device_run_creates_or_writes_anything(tmp_path: Path) -> None:
    (tmp_path / "job.fio").write_text("[w]\nrw=write\nbs=64k\nunlink=1\n")
    target = tmp_path / "t.img"
    line = one_error_line(*run_cli(["fio", str(tmp_path / "job.fio"), "--device", str(target), "--capacity", "64MiB",
                                    "-q", "--out", str(tmp_path / "o")]))
    assert "job.fio:4: unlink=1: fio would delete the target file after job 'w'" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.fio"]  # no target, no result


def test_create_on_open_and_file_service_type_are_accepted_with_no_effect() -> None:
    p = plan("[w]\nrw=write\nsize=1m\ncreate_on_open=1\nfile_service_type=random\n")
    assert any("create_on_open" in n and "file_service_type" in n for n in p.notes)


def test_lockfile_for_jobs_that_run_together_is_refused() -> None:
    assert "job.fio:3: lockfile=exclusive: fio would serialize the IO of the jobs that run at the same time" in \
        refusal("[w]\nrw=write\nlockfile=exclusive\nnumjobs=2\nsize=1m\n")
    assert "lockfile=readwrite: fio would serialize" in \
        refusal("[a]\nrw=write\nsize=1m\nlockfile=readwrite\n[b]\nrw=read\nsize=1m\n")
    plan("[w]\nrw=write\nsize=1m\nlockfile=exclusive\n[r]\nstonewall\nrw=read\nsize=1m\nlockfile=readwrite\n")
    plan("[w]\nrw=write\nsize=1m\nlockfile=none\nnumjobs=2\n")
    assert "job.fio:3: lockfile=shared: expected one of none, exclusive, readwrite" in \
        refusal("[w]\nrw=write\nlockfile=shared\n")


# -- planned work ----------------------------------------------------------------------------------------

def test_a_job_file_may_plan_at_most_100_drive_capacities_without_runtime() -> None:
    message = refusal("[w]\nrw=write\nsize=1g\nloops=100000\n")
    assert message.startswith("job.fio:4: loops=100000: job 'w' plans 97.66 TiB of IO: more than the 100 GiB "
                              "(100 x the drive's 1 GiB)"), message
    assert "lower loops, io_size, number_ios or numjobs, or add runtime=" in message
    plan("[w]\nrw=write\nsize=1g\nloops=100\n")  # exactly 100 capacities
    plan("[w]\nrw=write\nsize=1g\nloops=100000\nruntime=10\n")  # bounded by time
    assert "numjobs=200: job 'w' plans 1 GiB of IO in each of 200 clones" in \
        refusal("[w]\nrw=write\nsize=1g\nnumjobs=200\n")
    assert "io_size=101g: job 'w' plans 101 GiB" in refusal("[w]\nrw=write\nio_size=101g\n")
    assert "job.fio:8: loops=50: job 'k' plans 50 GiB of IO, 110 GiB with the jobs before it" in \
        refusal("[w]\nrw=write\nsize=1g\nloops=60\n[k]\nstonewall\nrw=write\nloops=50\n")
    # number_ios bounds the work as fio does: the smaller of the two limits counts
    plan("[w]\nrw=randwrite\nnorandommap\nloops=1000\nnumber_ios=1000\n")


def test_jobs_that_run_together_and_jobs_in_a_file_are_bounded() -> None:
    # numjobs=4096 (the former bound) ran 4096 members together and took 6.6 GB for a 1 s run
    assert "job.fio:4: job 'j' makes 257 jobs run at the same time" in \
        refusal("[j]\nrw=randwrite\nnorandommap\nnumjobs=257\nruntime=1\n")
    assert len(plan("[j]\nrw=randwrite\nnorandommap\nnumjobs=256\nruntime=1\n").jobs) == 256
    many = "[global]\nrw=randwrite\nnorandommap\nruntime=1\n" + "".join(f"[j{i}]\n" for i in range(257))
    assert refusal(many).startswith("job.fio:261: job 'j256' makes 257 jobs run at the same time")
    many = ("[global]\nrw=randwrite\nnorandommap\nruntime=1\nstonewall\n" +
            "".join(f"[j{i}]\nnumjobs=64\n" for i in range(65)))
    assert "job.fio:135: job 'j64' makes 4160 jobs in the file (numjobs clones included); fio runs at most 4096" \
        in refusal(many)


def test_requests_in_flight_over_jobs_that_run_together_are_bounded() -> None:
    # numjobs=256 at iodepth=65536 kept 16.7 million requests in flight: 1.9 GB for a 1 s run
    assert "job.fio:5: job 'j': the jobs that run at the same time would keep 16777216 requests in flight" in \
        refusal("[j]\nrw=randwrite\nnorandommap\nioengine=libaio\niodepth=65536\nnumjobs=256\nruntime=1\n")
    plan("[j]\nrw=randwrite\nnorandommap\nioengine=libaio\niodepth=256\nnumjobs=256\nruntime=1\n")
    plan("[j]\nrw=randwrite\nnorandommap\niodepth=65536\nnumjobs=256\nruntime=1\n")  # psync: depth 1
    assert "job.fio:9: job 'b': the jobs that run at the same time would keep 65537 requests" in refusal(
        "[a]\nrw=randwrite\nnorandommap\nioengine=libaio\niodepth=65536\n[b]\nrw=randread\nnorandommap\n"
        "iodepth=4\n")


def test_the_work_bound_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / "job.fio").write_text("[w]\nrw=write\nsize=1g\nloops=100000\n")
    # A process with a timeout: without the bound this job would run for hours.
    r = subprocess.run([sys.executable, "-m", "ssdlab", "fio", str(tmp_path / "job.fio"), "--capacity", "1GiB", "-q"],
                       capture_output=True, text=True, timeout=60)
    line = one_error_line(r.returncode, r.stderr)
    assert "job.fio:4: loops=100000" in line and "add runtime=" in line


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "jobs").glob("*.fio")) +
                         sorted((ROOT / "tests" / "fio_jobs").glob("*.fio")), ids=lambda p: p.name)
def test_every_shipped_job_file_stays_within_the_bounds(path: Path) -> None:
    env = {"RUNTIME": "60", "SIZE": "256m", "BS": "4k", "DEPTH": "4", "RW": "randwrite"}
    env.update({k: v for k, v in os.environ.items() if k not in env})
    for capacity in (GIB, 4 * GIB):
        planner.plan(jf.parse(path, env=env), capacity)


# -- a device run's queue depth: every documented --qd runs (issue 22, re-probe) -------------------


@needs_fio
def test_the_engine_is_chosen_for_the_runs_deepest_queue(tmp_path: Path) -> None:
    """io_uring holds at most 32768 requests in flight (the kernel's IORING_MAX_ENTRIES): probed at
    the run's depth, a deeper queue goes to the next engine instead of failing in fio's set-up."""
    from ssdlab.fio import runner

    target = tmp_path / "f"
    target.write_bytes(b"\0" * (1 << 20))
    shallow = runner.probe_io(target, depth=32)
    deep = runner.probe_io(target, depth=32769)
    if shallow.engine == "io_uring":  # where io_uring works at all, it cannot take 32769
        assert deep.engine != "io_uring"
        assert any("io_uring did not work here at QD32769" in n for n in deep.notes), deep.notes


@needs_fio
def test_a_device_run_at_the_largest_documented_queue_depth_runs(tmp_path: Path) -> None:
    """``--qd 65536`` (the documented maximum) on a device: a result, not ``fio failed: ...
    io_uring.c ... io_queue_init, error=Invalid argument`` after the target was erased."""
    out = tmp_path / "D"
    status, err = run_cli(["consistency", "--device", str(tmp_path / "F"), "--capacity", "64MiB", "--qd", "65536",
                           "--duration", "1", "--yes-destroy-data", "--out", str(out), "-q"])
    assert status == 0, err
    assert "Traceback" not in err
    import json

    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["qd"] == 65536
