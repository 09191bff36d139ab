"""fio parity: ssdlab reads a job file exactly as the installed fio 3.33 reads it.

The oracle is fio itself, on the same file: ``fio --parse-only`` (does fio accept it?),
``fio --showcmd`` (the options as fio understood them: canonical names, in fio's order, values after
comments, ``${VAR}`` and keywords) and ``fio --debug=parse --parse-only`` (every value part fio read
and the number it made of it). hypothesis writes job files from the option table (valid values,
invalid ones and fio's corner cases; inline comments, aliases, blanks, [global] sections, ${VAR},
include files, keywords) and `fioread` must agree with fio on all three. Where ssdlab's own value
readers (`jobfile.parse_size`, `parse_time_us`, `parse_int`, `parse_bool`) accept a value, they
must read fio's number; and a file the planner accepts is one fio accepts.

scripts/install-test-tools.sh installs fio; without fio 3.33 the tests are skipped.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssdlab.errors import SsdlabError
from ssdlab.fio import fioread
from ssdlab.fio import jobfile as jf
from ssdlab.fio import options as opts
from ssdlab.fio import planner


def _fio_version() -> Optional[str]:
    if shutil.which("fio") is None:
        return None
    out = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    return out


FIO = _fio_version()
pytestmark = pytest.mark.skipif(FIO != f"fio-{opts.FIO_VERSION}",
                                reason=f"needs fio {opts.FIO_VERSION} (scripts/install-test-tools.sh); found {FIO}")
ENV_BASE = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "LC_ALL": "C"}


# -- running fio and ssdlab on one file ----------------------------------------------------------------

def _debug_lines(out: str) -> List[str]:
    """The value lines of ``fio --debug=parse`` ("parse    PID  message", PID padded to 5)."""
    lines = []
    for ln in out.splitlines():
        m = re.match(r"parse    (\d+)", ln)
        if not m:
            continue
        t = ln[m.end() + max(0, 5 - len(m.group(1))) + 1:]
        if t.startswith(("handle_option=", "__handle_option=", "  ret=", "  out=", "zone ddir")) or \
                re.match(r"\t\d+: ", t):
            lines.append(re.sub(r"ret=1, out=.*", "ret=1, out=?", t))  # fio prints garbage after a failure
    return lines


def fio_run(path: Path, env: Dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["fio", *args, path.name], cwd=path.parent, env=dict(ENV_BASE, **env),
                          capture_output=True, text=True, timeout=60)


def compare(tmp: Path, text: str, env: Optional[Dict[str, str]] = None,
            includes: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Writes the job file (and its includes) to `tmp`, reads it with fio and with ssdlab and asserts
    they agree; returns what each said."""
    env = env or {}
    path = tmp / "job.fio"
    path.write_text(text)
    for name, body in (includes or {}).items():
        (tmp / name).write_text(body)
    # fio --parse-only, with its parse debugging on: the exit status says whether fio accepts the
    # file, the debug lines what it read from each value (fio 3.33 crashes printing the zones of a
    # zoned distribution it has just refused: a refusal too).
    parse_only = fio_run(path, env, "--debug=parse", "--parse-only")
    fio_ok = parse_only.returncode == 0
    cwd = os.getcwd()
    os.chdir(tmp)  # fio looks for include files in the current directory first
    try:
        parsed = jf.parse(path, env=env)
    except SsdlabError as e:
        raise AssertionError(f"ssdlab refused the file's syntax, fio rc={parse_only.returncode}: {e}\n{text}")
    finally:
        os.chdir(cwd)
    reading = parsed.reading
    why = f"\n--- job file\n{text}--- env {env}, includes {includes}\n--- fio stderr\n{parse_only.stderr}"
    assert reading.complete == fio_ok, f"fio {'accepts' if fio_ok else 'refuses'} it, ssdlab does not agree{why}"
    if fio_ok:
        assert reading.debug() == _debug_lines(parse_only.stdout), why
        show = fio_run(path, env, "--showcmd")
        assert show.returncode == 0, show.stderr
        assert reading.showcmd() == show.stdout, why
        _ssdlab_readers_agree(parsed)
    try:
        planner.plan(parsed, 64 * 2**30)
        planned = True
    except SsdlabError:
        planned = False
    assert fio_ok or not planned, f"ssdlab would run a job file fio refuses{why}"
    return {"fio": fio_ok, "planned": planned, "reading": reading}


def _ssdlab_readers_agree(parsed: jf.JobFile) -> None:
    """Where ssdlab's own value readers accept a value fio accepted, they read fio's number."""
    for sec in parsed.reading.sections:
        kb = fioread._kb_base(sec.values)
        for r in sec.readings:
            if not r.ok or r.spec is None or r.typed is None or r.value is None:
                continue
            if sum(line.startswith("__handle_option=") for line in r.debug) != 1 or r.trap is not None:
                continue  # a list (read,write,trim; low-high), read part by part; or refused (trap)
            o, s, v = r.where, r.spec, r.typed
            try:
                if s.fio in ("str_val", "str_val_zone", "ull", "int") and not s.time and s.slots == 1 \
                        and not isinstance(v, tuple) and s.type in ("size", "size%"):
                    mine = jf.parse_size(o, kb, allow_percent=s.type == "size%")
                    assert mine == v, (r.name, r.value, mine, v)
                elif s.time and s.slots == 1 and not isinstance(v, tuple):
                    mine = jf.parse_time_us(o, 1_000_000 if s.seconds else 1)
                    assert mine == v, (r.name, r.value, mine, v)
                elif s.fio == "int" and s.type == "int" and s.slots == 1:
                    mine = jf.parse_int(o)
                    assert mine == v, (r.name, r.value, mine, v)
                elif s.fio == "bool":
                    assert (jf.parse_bool(o) != s.neg) == v, (r.name, r.value, v)
            except SsdlabError:
                pass  # refusing is allowed (its message says how fio would read it); misreading is not


# -- explicit cases: each tricky rule, with fio as the judge --------------------------------------------

CASES = [
    # inline comments, as in fio's own examples
    "[global]\nbs=4k ; comment\n[j]\nnumjobs=4 ; 4 threads for each job\nruntime=3600 # Max runtime\n",
    "[j] ; a comment after the section\nrw=randread\t# tab, then a comment\ndescription=a b;c\n",
    # aliases and fio's own oddities
    "[j]\nratemin=100\nthreads=1\nblocksize=8k\nreadwrite=randrw\nss=iops:10%\nss_dur=30\n",
    "[j]\nrandom_distribution=zoned:50/5:30/15:20/\n",
    "[j]\nrandom_distribution=zoned:50/50,40/60\n",
    "[j]\nrandom_distribution=zoned_abs:60/4k:40/\n",
    "[j]\nbs= 4k\n", "[j]\nbs=4k,\n", "[j]\nbs=garbage,8k\n", "[j]\nbs=8k,garbage\n", "[j]\niodepth=4:x\n", "[j]\nbs=4kxyz\n", "[j]\nbs=-4k\n",
    "[j]\nruntime=10sec\n", "[j]\nruntime=0x10\n", "[j]\nthinktime=10ms\n",
    "[j]\niodepth=-1\n", "[j]\nrwmixread=-1\n", "[j]\ndirect\n", "[j]\ndirect=true\n",
    "[j]\nrw= randread\n", "[j]\nrw=randread:8k\n",
    "[j]\nsize=10%\nio_size=150%\n", "[j]\nsize=3z\n",
    "[j]\nkb_base=1000\nbs=4k\n[k]\nbs=4KiB\n",
    "[globalx]\nbs=8k\n[j]\n",
    "[j]\nhipri\n", "[j]\nioengine=pvsync2\nhipri\n", "[global]\nioengine=io_uring\nhipri\n[j]\nfixedbufs\n",
    "[j]\nioengine=libaio:foo\nuserspace_reap\n",
    "[j]\npercentile_list=1:5:99.5\nbssplit=4k/50:8k/,16k\nrate=1m,2m\nbsrange=4k-8k,16k-32k\n",
    "[j]\nbssplit=4k/60:8k/60:16k:32k\n", "[j]\nss=bw:10m\n", "[j]\nss=iops\n",
    "[j]\npercentage_sequential=50\n", "[j]\nverifysort=1\n", "[j]\nss_interval=1s\n",
    "[j]\niodepth=$ncpus\nnumjobs=($ncpus+1)/2\nsize=$mb_memory/4\n",
]


@pytest.mark.parametrize("text", CASES)
def test_fio_and_ssdlab_read_these_alike(tmp_path: Path, text: str) -> None:
    compare(tmp_path, text)


def test_environment_variables_and_includes_as_fio_reads_them(tmp_path: Path) -> None:
    r = compare(tmp_path, "[j]\nbs=${BS} ; the block size\ninclude part.inc\n",
                env={"BS": "8k", "QD": "16"}, includes={"part.inc": "rw=randwrite # from the include\niodepth=${QD}\n"})
    assert r["fio"] and r["planned"]
    job = r["reading"].sections[0]
    assert job.values["bs"] == (8192, 8192, 8192) and job.values["iodepth"] == 16


def test_an_unset_variable_is_refused_where_fio_would_substitute_nothing(tmp_path: Path) -> None:
    (tmp_path / "job.fio").write_text("[j]\nfilename=/tmp/${SSDLAB_PARITY_UNSET}x\n")
    assert fio_run(tmp_path / "job.fio", {}, "--showcmd").stdout == "fio --name=j --filename=/tmp/x \n"
    with pytest.raises(SsdlabError, match="environment variable 'SSDLAB_PARITY_UNSET' is not set"):
        jf.parse(tmp_path / "job.fio", env={})


# -- generated job files --------------------------------------------------------------------------------

NUMS = st.one_of(st.integers(-3, 130).map(str), st.sampled_from(["0", "1", "4096", "65536", "0x10", "0x1000",
                                                                  "99999999999999999999", "1.5", "+7", "007"]))
SIZE_UNITS = ["", "", "k", "K", "m", "g", "kb", "KiB", "MiB", "b", "x", "%", "z", "kxyz", "ki", " k"]
TIME_UNITS = ["", "", "s", "ms", "us", "m", "h", "d", "sec", "min", "usec", "msec"]


def _number(draw, units: List[str]) -> str:
    n = draw(NUMS)
    unit = draw(st.sampled_from(units))
    if n.startswith("0x") and unit:
        unit = draw(st.sampled_from(["", unit]))
    return n + unit


@st.composite
def numeric_value(draw, spec: opts.OptionSpec) -> str:
    if draw(st.integers(0, 9)) < 5:  # a plain value, usually one fio accepts
        unit = draw(st.sampled_from(["", "", "s", "ms", "m"] if spec.time else ["", "", "k", "m", "KiB", "%"]))
        return str(draw(st.integers(max(spec.lo or 0, 0), min(spec.hi or 4096, 4096)))) + unit
    units = TIME_UNITS if spec.time else SIZE_UNITS
    parts = [_number(draw, units) for _ in range(draw(st.integers(1, 3 if spec.slots > 1 else 2)))]
    if draw(st.integers(0, 9)) == 0:
        parts[0] = ""
    if draw(st.integers(0, 9)) == 0:
        parts[-1] = draw(st.sampled_from(["abc", "x1", "k"]))
    sep = draw(st.sampled_from([",", ",", ":", "-"]))
    text = sep.join(parts)
    if draw(st.integers(0, 9)) == 0:
        text = " " + text
    if draw(st.integers(0, 19)) == 0:
        text += ","
    return text


@st.composite
def bool_value(draw, spec: opts.OptionSpec) -> Optional[str]:
    return draw(st.sampled_from([None, "0", "1", "1", "2", "-1", "0x1", "true", "", " 1", "1abc", "1,0", "0-1"]))


@st.composite
def choice_value(draw, spec: opts.OptionSpec) -> Optional[str]:
    c = draw(st.sampled_from(spec.choices))
    return draw(st.sampled_from([c, c, c, c + ":8k", " " + c, c.upper(), c[:-1] or "x", c + ",x", c + "x", "nonsense",
                                 None]))


RANDOM_DISTRIBUTIONS = ["random", "zipf:1.2", "zipf", "zipf:1", "zipf:1.2:0.5", "zipf:1.2:2", "pareto:0.5",
                        "pareto:1.5", "normal:5", "normal:150", "normal:nan", "zoned:50/5:30/15:20/",
                        "zoned:60/40:40/", "zoned:50/50:40/50", "zoned:60/10:40/90", "zoned:100/", "zoned:",
                        "zoned_abs:60/4k:40/8k", "zoned_abs:50/1m:50/", "random:x", "zoned:r:50/50",
                        "zoned:300/50:56/50", "zipf:abc", "zoned:50/50:50/50,60/50:40/50"]
BSSPLITS = ["4k/50:8k/50", "4k/50:8k/", "4k:8k", "4k/10:64k/50:32k/40,4k/100", ",4k/100", "4k/0", "4k/150:8k:16k",
            "abc/50", "4k/50::8k/50", "512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10", "4k/50:8k/50,", " 4k/100"]
STEADY = ["iops:10%", "iops_slope:0.1", "bw:10m", "bw", "lat:5%", "iops: 10 %", "bw_slope:1%", "iops:abc"]
FLOATS = ["1:5:99.5", "50", "nan", "1e", "50::99", "150", "-1", "99.9999", "1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17:"
                                                                  "18:19:20:21"]
RANGES = ["4k-8k", "8k-4k", "4k:8k", "4k", "4k-8k,16k-32k", ",4k-8k", "4k-8k,", "1k-x", " 4k-8k"]
WORDS = ["name1", "a b", "x", "", "/dev/null", "file-1.dat"]


@st.composite
def value_for(draw, spec: opts.OptionSpec) -> Optional[str]:
    if spec.cb == "distribution":
        return draw(st.sampled_from(RANDOM_DISTRIBUTIONS))
    if spec.cb == "bssplit":
        return draw(st.sampled_from(BSSPLITS))
    if spec.cb == "steadystate":
        return draw(st.sampled_from(STEADY))
    if spec.fio == "float_list":
        return draw(st.sampled_from(FLOATS))
    if spec.fio == "range":
        return draw(st.sampled_from(RANGES))
    if spec.fio in ("bool", "str_set"):
        return draw(bool_value(spec))
    if spec.choices and spec.fio != "str_store":
        return draw(choice_value(spec))
    if spec.fio in ("int", "ull", "str_val", "str_val_time", "str_val_zone"):
        return draw(numeric_value(spec))
    return draw(st.sampled_from(WORDS))


# Left out: options whose values fio checks in ways `fioread` does not model (data patterns), or
# answers with its list of choices on stdout while accepting the option (sync_file_range, the one
# choice list fio splits at ','), and ioengine (drawn below, without external:PATH).
POOL = sorted(n for n, s in opts.OPTIONS.items()
              if s.cb not in ("pattern",) and n not in ("ioengine", "sync_file_range") and not s.engines)
ENGINE_POOL = sorted(n for n, s in opts.OPTIONS.items() if s.engines)


@st.composite
def option_line(draw, env: Dict[str, str]) -> str:
    name = draw(st.sampled_from(POOL + ["ioengine"] + ENGINE_POOL + ["bogus_option"]))
    spec = opts.spec(name)
    if name == "ioengine":
        value: Optional[str] = draw(st.sampled_from(["psync", "libaio", "io_uring", "pvsync2", "null", "foo", "sync"]))
    elif spec is None:
        value = "1"
    else:
        value = draw(value_for(spec))
        if spec.alias and draw(st.booleans()):
            name = spec.alias
    if value is not None and draw(st.integers(0, 7)) == 0:
        var = f"SSDLAB_PARITY_{len(env)}"
        env[var] = value.strip(" ") or "x"
        value = "${" + var + "}"
    if value is not None and draw(st.integers(0, 19)) == 0 and name in ("iodepth", "numjobs", "bs", "size"):
        value = draw(st.sampled_from(["$ncpus", "$ncpus*2", "$pagesize", "($ncpus+1)/2"]))
    line = name if value is None else name + draw(st.sampled_from(["=", "=", " =", "\t="])) + value
    comment = draw(st.sampled_from(["", "", "", " ; a comment", " # note", "\t;x", ";", " #", " ; ; #"]))
    return draw(st.sampled_from(["", "  ", "\t"])) + line + comment


@st.composite
def job_file(draw) -> Tuple[str, Dict[str, str], Dict[str, str]]:
    env: Dict[str, str] = {}
    includes: Dict[str, str] = {}
    lines: List[str] = []
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from(["[global]", "[global] ; defaults", "[globalx]"])))
        lines += [draw(option_line(env)) for _ in range(draw(st.integers(0, 3)))]
    for k in range(draw(st.integers(1, 2))):
        lines.append(f"[job{k}]" + draw(st.sampled_from(["", " # job"])))
        lines += [draw(option_line(env)) for _ in range(draw(st.integers(0, 4)))]
        if draw(st.integers(0, 5)) == 0:
            inc = f"part{k}.inc"
            includes[inc] = "\n".join(draw(option_line(env)) for _ in range(draw(st.integers(1, 2)))) + "\n"
            lines.append(f"include {inc}")
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["; a comment line", "# another", "", "   "])))
    return "\n".join(lines) + "\n", env, includes


@settings(max_examples=100, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=job_file())
def test_generated_job_files_are_read_as_fio_reads_them(tmp_path: Path, case) -> None:
    text, env, includes = case
    for f in tmp_path.iterdir():
        f.unlink()
    compare(tmp_path, text, env, includes)
