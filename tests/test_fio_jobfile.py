"""fio job files: syntax, values, includes, environment variables, and the corpus in tests/fio_jobs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.fio import jobfile as jf
from ssdlab.fio import planner

JOBS = Path(__file__).parent / "fio_jobs"
GOOD = sorted(JOBS.glob("*.fio"))
BAD = sorted((JOBS / "bad").glob("*.fio"))
ENV = {"SIZE": "256m", "RUNTIME": "5", "BS": "8k"}
GIB = 2**30


def opt(value, name="size"):
    return jf.RawOption(name, value, jf.Location("job.fio", 3))


@pytest.mark.parametrize(
    "text,kb_base,expected",
    [
        ("4096", 1024, 4096),
        ("4096b", 1024, 4096),
        ("0x1000", 1024, 4096),
        ("4k", 1024, 4096),
        ("4K", 1024, 4096),
        ("4kb", 1024, 4096),
        ("4KB", 1024, 4096),
        ("1m", 1024, 2**20),
        ("1mi", 1024, 2**20),  # fio's parser flips only the three-letter IEC forms
        ("10g", 1024, 10 * GIB),
        ("1t", 1024, 2**40),
        ("4KiB", 1024, 4000),  # fio's kb_base=1024 compatibility: KiB means 1000
        ("1MiB", 1024, 10**6),
        ("4k", 1000, 4000),
        ("4KiB", 1000, 4096),
        ("1GiB", 1000, GIB),
    ],
)
def test_sizes_follow_fio(text, kb_base, expected):
    assert jf.parse_size(opt(text), kb_base) == expected


def test_percent_sizes():
    assert jf.parse_size(opt("20%"), allow_percent=True) == ("%", 20.0)
    with pytest.raises(SsdlabError, match=r"job.fio:3: size=20%: a percentage is not allowed here"):
        jf.parse_size(opt("20%"))
    with pytest.raises(SsdlabError, match="between 1 and 100"):
        jf.parse_size(opt("0%"), allow_percent=True)


@pytest.mark.parametrize("text", ["4x", "k", "-4k", "4 k k", "", "1.5g"])
def test_bad_sizes_are_one_line_errors(text):
    with pytest.raises(SsdlabError) as e:
        jf.parse_size(opt(text))
    assert str(e.value).startswith("job.fio:3: ")
    assert "\n" not in str(e.value)


def test_fractional_size_says_what_fio_would_do():
    with pytest.raises(SsdlabError, match=r"it would take '1.5g' as 1 byte\)"):
        jf.parse_size(opt("1.5g"))


@pytest.mark.parametrize(
    "text,default_us,expected_us",
    [
        ("60", 1_000_000, 60_000_000),
        ("30s", 1_000_000, 30_000_000),
        ("500ms", 1_000_000, 500_000),
        ("500msec", 1_000_000, 500_000),
        ("10m", 1_000_000, 600_000_000),
        ("1h", 1_000_000, 3_600_000_000),
        ("2d", 1_000_000, 2 * 86_400_000_000),
        ("100us", 1_000_000, 100),
        ("250", 1, 250),  # thinktime: microseconds by default
        ("2ms", 1, 2000),
    ],
)
def test_times_follow_fio(text, default_us, expected_us):
    assert jf.parse_time_us(opt(text, "runtime"), default_us) == expected_us


@pytest.mark.parametrize("text,fio_us", [("5min", 5), ("10sec", 10), ("3hours", 3)])
def test_unknown_time_unit(text, fio_us):
    # fio's get_mult_time multiplies by 1 (microsecond) for any word it does not know exactly
    # (fio --debug=parse on runtime=10sec: "ret=0, out=10").
    with pytest.raises(SsdlabError, match=rf"runtime={text}: unknown time unit .*fio would read it as {fio_us} "
                                          rf"microseconds"):
        jf.parse_time_us(opt(text, "runtime"), 1_000_000)


@pytest.mark.parametrize("value,expected", [(None, True), ("1", True), ("0", False), ("0x1", True), ("01", True)])
def test_bools(value, expected):
    assert jf.parse_bool(opt(value, "direct")) is expected


@pytest.mark.parametrize("value", ["true", "off", "2", "-1"])
def test_bools_fio_does_not_read_as_0_or_1_are_refused(value):
    # fio reads a boolean with sscanf("%u"): "true" is no number (fio refuses it), 2 is above its max.
    with pytest.raises(SsdlabError, match=r"expected 0 or 1 \(fio reads booleans as numbers\)"):
        jf.parse_bool(opt(value, "direct"))


def test_sections_comments_and_global_scope():
    text = """; comment
# another comment
[global]
rw=randread
bs=8k

[first]
iodepth=4
  ; indented comment

[global]
bs=16k

[second]
name=renamed
"""
    f = jf.parse_string(text)
    jobs = f.jobs()
    assert [j.section for j in jobs] == ["first", "second"]
    assert [j.index for j in jobs] == [1, 2]
    assert jobs[0].get("bs").value == "8k"  # a [global] below a job does not reach it
    assert jobs[1].get("bs").value == "16k"
    assert jobs[1].name == "renamed"
    assert jobs[0].get("iodepth").where.line == 8
    assert [o.name for o in f.global_options] == ["rw", "bs", "bs"]


def test_aliases_resolve_to_canonical_names():
    f = jf.parse_string("[j]\nreadwrite=randwrite\nblocksize=8k\nss=iops:5%\nss_dur=30\n")
    j = f.jobs()[0]
    assert j.get("rw").value == "randwrite"
    assert j.get("bs").value == "8k"
    assert j.get("steadystate").name == "ss"
    assert j.get("steadystate_duration").value == "30"


def test_flags_without_values():
    j = jf.parse_string("[j]\ntime_based\nnorandommap\n").jobs()[0]
    assert j.get("time_based").value is None


def test_environment_variables():
    f = jf.parse_string("[j]\nsize=${SIZE}\nfilename=/tmp/${NAME}.bin\n", env={"SIZE": "64m", "NAME": "x"})
    j = f.jobs()[0]
    assert j.get("size").value == "64m"
    assert j.get("filename").value == "/tmp/x.bin"
    with pytest.raises(SsdlabError, match=r"job.fio:2: environment variable 'SIZE' is not set"):
        jf.parse_string("[j]\nsize=${SIZE}\n", env={})


def test_host_keywords_are_this_hosts_values_computed_as_fio_computes_them():
    kw = jf.host_keywords()
    j = jf.parse_string("[j]\nsize=8*$mb_memory\niodepth=$ncpus\nbs=$pagesize\nnumjobs=($ncpus+1)/2\n", env={}).jobs()[0]
    assert j.get("size").value == str(8 * kw["$mb_memory"])
    assert j.get("iodepth").value == str(kw["$ncpus"])
    assert j.get("bs").value == str(kw["$pagesize"])
    assert j.get("numjobs").value == str((kw["$ncpus"] + 1) // 2)  # bc: whole numbers, division truncates
    with pytest.raises(SsdlabError, match=r"job.fio:2: .*bc"):
        jf.parse_string("[j]\nsize=$mb_memory/2m\n", env={})  # bc cannot read "2m": fio drops the option


def test_arithmetic_is_refused():
    with pytest.raises(SsdlabError, match="arithmetic expressions are not supported"):
        jf.parse_size(opt("(4k*2)"))


def test_include_nested_and_located(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "a.inc").write_text("iodepth=8\ninclude b.inc\n")
    (tmp_path / "inc" / "b.inc").write_text("bs=64k\nbogus=1\n")
    main = tmp_path / "main.fio"
    main.write_text("[j]\ninclude inc/a.inc\nrw=write\n")
    j = jf.parse(main).jobs()[0]
    assert j.get("iodepth").value == "8"
    assert j.get("bs").value == "64k"
    where = j.get("bogus").where
    assert where.path.endswith("inc/b.inc") and where.line == 2


def test_include_may_not_hold_sections(tmp_path):
    (tmp_path / "x.inc").write_text("[oops]\n")
    (tmp_path / "m.fio").write_text("[j]\ninclude x.inc\n")
    with pytest.raises(SsdlabError, match=r"x.inc:1: an included file may not contain \[sections\]"):
        jf.parse(tmp_path / "m.fio")


def test_include_loop_is_caught(tmp_path):
    (tmp_path / "self.inc").write_text("include self.inc\n")
    (tmp_path / "m.fio").write_text("[j]\ninclude self.inc\n")
    with pytest.raises(SsdlabError, match="nested more than"):
        jf.parse(tmp_path / "m.fio")


def test_missing_file_and_empty_file(tmp_path):
    with pytest.raises(SsdlabError, match=r"job file '.*nope.fio': no such file"):
        jf.parse(tmp_path / "nope.fio")
    (tmp_path / "g.fio").write_text("[global]\nrw=read\n")
    with pytest.raises(SsdlabError, match=r"no job sections \(only \[global\]\)"):
        jf.parse(tmp_path / "g.fio")


def test_garbage_line():
    with pytest.raises(SsdlabError, match=r"job.fio:2: cannot read 'rw read please'"):
        jf.parse_string("[j]\nrw read please\n")


# -- the corpus --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_corpus_parses_and_plans(path):
    f = jf.parse(path, env=ENV)
    p = planner.plan(f, 4 * GIB)
    assert len({j.job.index for j in p.jobs}) == len(f.jobs()) >= 1  # numjobs clones share their job
    for job in p.jobs:
        w = job.workload
        assert w["block_bytes"] % 4096 == 0
        assert w["offset_bytes"] + w["span_bytes"] <= 4 * GIB
        assert w["span_bytes"] >= w["block_bytes"]


def _expected(path):
    first = path.read_text().splitlines()[0]
    m = re.match(r"; expect: (\d+): (.*)$", first)
    assert m, f"{path.name} has no '; expect: LINE: MESSAGE' first line"
    return int(m.group(1)), m.group(2)


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_corpus_names_file_line_and_problem(path, monkeypatch):
    line, message = _expected(path)
    with pytest.raises(SsdlabError) as e:
        planner.plan(jf.parse(path, env=ENV), 4 * GIB)
    text = str(e.value)
    assert text.startswith(f"{path}:{line}: "), text
    assert message in text, text
    assert "\n" not in text


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (scripts/install-test-tools.sh)")
@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_real_fio_accepts_the_good_corpus(path):
    env = dict(ENV, PATH="/usr/bin:/bin:/usr/sbin:/sbin")
    r = subprocess.run(["fio", "--parse-only", path.name], cwd=path.parent, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "configs" / "jobs").glob("*.fio"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_job_files_plan_on_an_8gib_drive(path):
    p = planner.plan(jf.parse(path, env={"RUNTIME": "60"}), 8 * GIB)
    assert p.jobs and all(j.workload["span_bytes"] == 8 * GIB for j in p.jobs)


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (scripts/install-test-tools.sh)")
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_real_fio_accepts_the_examples(path):
    r = subprocess.run(["fio", "--parse-only", str(path)], env={"RUNTIME": "60", "PATH": "/usr/bin:/bin"},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
