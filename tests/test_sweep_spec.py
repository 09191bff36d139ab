"""Sweep specs: reading, checking, points and their names, the spec's hash (no cluster here)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ssdlab
from ssdlab.errors import SsdlabError
from ssdlab.sweep import load_spec
from ssdlab.sweep.points import MAX_NAME

ISSUE_SPEC = """\
scenario = "consistency"
[base]
capacity = "16GiB"
duration = 600
[grid]
drive = ["mlc-256", "active-gc"]
spare_area = [0, 25, 99.99999]
gc = ["greedy", "fifo"]
"""


def write(tmp_path: Path, text: str, name: str = "spec.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_issue_spec_gives_twelve_named_points_in_grid_order(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, ISSUE_SPEC))
    assert len(spec.points) == 12
    assert spec.varying == ["drive", "spare_area", "gc"]
    assert spec.points[0].name == "drive=mlc-256,spare_area=0,gc=greedy"
    assert spec.points[1].name == "drive=mlc-256,spare_area=0,gc=fifo"  # the last key varies fastest
    assert spec.points[-1].name == "drive=active-gc,spare_area=99.99999,gc=fifo"
    assert len({p.name for p in spec.points}) == 12
    p = spec.points[3]
    assert p.values == {"drive": "mlc-256", "spare_area": 25, "gc": "fifo"}
    assert p.options == {"capacity": "16GiB", "duration": 600, "drive": "mlc-256", "spare_area": 25, "gc": "fifo"}
    # what the run gets: sizes in bytes, numbers as floats
    assert p.prepared["capacity"] == 16 * 2**30 and p.prepared["duration"] == 600.0
    assert p.label == "gc fifo"  # drive and spare area are in the consistency label already


def test_a_dict_spec_is_the_same_spec(tmp_path: Path) -> None:
    from_file = load_spec(write(tmp_path, ISSUE_SPEC))
    from_dict = load_spec({
        "scenario": "consistency",
        "base": {"capacity": "16GiB", "duration": 600},
        "grid": {"drive": ["mlc-256", "active-gc"], "spare_area": [0, 25, 99.99999], "gc": ["greedy", "fifo"]},
    })
    assert from_dict.hash == from_file.hash
    assert [p.name for p in from_dict.points] == [p.name for p in from_file.points]


def test_the_hash_follows_meaning_not_layout(tmp_path: Path) -> None:
    h = load_spec(write(tmp_path, ISSUE_SPEC)).hash
    relaid = ISSUE_SPEC.replace('capacity = "16GiB"\nduration = 600', "# a comment\nduration = 600\ncapacity  =  \"16GiB\"")
    assert relaid != ISSUE_SPEC
    assert load_spec(write(tmp_path, relaid, "b.toml")).hash == h
    assert load_spec(write(tmp_path, ISSUE_SPEC.replace("600", "601"), "c.toml")).hash != h
    assert load_spec(write(tmp_path, ISSUE_SPEC.replace('"greedy", "fifo"', '"fifo", "greedy"'), "d.toml")).hash != h


def test_an_edited_drive_file_changes_the_hash(tmp_path: Path) -> None:
    drive = tmp_path / "d.toml"
    drive.write_text('name = "mine"\n[ftl]\ngc_policy = "greedy"\n', encoding="utf-8")
    text = 'scenario = "wa"\n[base]\ndrive_file = "d.toml"\n[grid]\ncompressibility = [1.0]\n'
    spec = write(tmp_path, text)
    before = load_spec(spec)
    assert before.points[0].prepared["drive_file"]["name"] == "mine"
    drive.write_text('name = "mine"\n[ftl]\ngc_policy = "fifo"\n', encoding="utf-8")
    assert load_spec(spec).hash != before.hash


def test_points_entries_times_the_grid_over_the_base(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, """\
scenario = "wa"
[base]
compressibility = 1.0
[grid]
gc = ["greedy", "fifo"]
[[points]]
drive = "mlc-256"
[[points]]
drive = "compressing"
compressibility = 0.3
"""))
    assert [p.name for p in spec.points] == [
        "gc=greedy,drive=mlc-256,compressibility=1",
        "gc=greedy,drive=compressing,compressibility=0.3",
        "gc=fifo,drive=mlc-256,compressibility=1",
        "gc=fifo,drive=compressing,compressibility=0.3",
    ]
    assert spec.points[1].prepared["compressibility"] == 0.3  # an entry overrides [base]
    assert spec.points[0].prepared["compressibility"] == 1.0


def test_names_stay_unique_and_short(tmp_path: Path) -> None:
    # two drive files with the same stem would give the same name: both get their own hash
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d, policy in (("a", "greedy"), ("b", "fifo")):
        (tmp_path / d / "x.toml").write_text(f'name = "x"\n[ftl]\ngc_policy = "{policy}"\n', encoding="utf-8")
    spec = load_spec(write(tmp_path, 'scenario = "wa"\n[grid]\ndrive_file = ["a/x.toml", "b/x.toml"]\n'))
    names = [p.name for p in spec.points]
    assert len(set(names)) == 2 and all(n.startswith("drive_file=x~") for n in names)
    long = load_spec({"scenario": "torture", "grid": {"then": [["pass"] * 80]}})
    assert len(long.points[0].name) == MAX_NAME and "~" in long.points[0].name


def test_fio_job_files_are_read_with_the_specs_env(tmp_path: Path) -> None:
    (tmp_path / "job.fio").write_text("[w]\nrw=randwrite\nbs=4k\ntime_based\nruntime=${RUNTIME}\n", encoding="utf-8")
    spec = load_spec(write(tmp_path, 'scenario = "fio"\n[base]\njobfile = "job.fio"\nenv = { RUNTIME = "7" }\n'
                                     '[grid]\ngc = ["fifo"]\n'))
    job = spec.points[0].prepared["jobfile"]
    assert [o.value for o in job.sections[0].options if o.name == "runtime"] == ["7"]
    with pytest.raises(SsdlabError, match="RUNTIME"):
        load_spec(write(tmp_path, 'scenario = "fio"\n[base]\njobfile = "job.fio"\n[grid]\ngc = ["fifo"]\n', "b.toml"))


BAD = [
    ('scenario = "consistency"\n[base]\nspare_aera = 5\n[grid]\ngc = ["fifo"]\n',
     r"\[base\]: consistency has no option 'spare_aera' \(did you mean spare_area\?\)"),
    ('scenario = "consistency"\n[grid]\nspare-area = [5]\n', r"write it spare_area"),
    ('scenario = "consistncy"\n[grid]\ngc = ["fifo"]\n', r"unknown scenario 'consistncy'; choose one of consistency"),
    ('[grid]\ngc = ["fifo"]\n', r"no scenario; start the spec with"),
    ('scenario = "consistency"\n[grid]\ngc = []\n', r"\[grid\] gc is an empty list"),
    ('scenario = "consistency"\n[grid]\ngc = "fifo"\n', r"a grid key takes a list, e\.g\. gc = \[\"fifo\"\]"),
    ('scenario = "consistency"\n[grid]\ngc = ["lru"]\n', r"\[grid\] gc\[0\] = \"lru\": not a GC policy; choose one of"),
    ('scenario = "consistency"\n[base]\ncapacity = "16Gx"\n[grid]\ngc = ["fifo"]\n',
     r"\[base\] capacity = \"16Gx\": .*cannot read '16Gx' as a size"),
    ('scenario = "consistency"\n[base]\nduration = "long"\n[grid]\ngc = ["fifo"]\n',
     r"\[base\] duration = \"long\": must be a number"),
    ('scenario = "consistency"\n[base]\ngc = "fifo"\n[grid]\ngc = ["fifo"]\n', r"gc is in both \[base\] and \[grid\]"),
    ('scenario = "consistency"\n[base]\nduration = 5\n', r"nothing to sweep"),
    ('scenario = "consistency"\n[gird]\ngc = ["fifo"]\n', r"unknown key 'gird' \(did you mean grid\?\)"),
    ('scenario = "consistency"\n[grid]\ngc = ["fifo", "fifo"]\n', r"\[grid\] gc lists \"fifo\" twice"),
    ('scenario = "fio"\n[grid]\ngc = ["fifo"]\n', r"the fio scenario needs jobfile"),
    ('scenario = "fio"\n[base]\njobfile = "nope.fio"\n[grid]\ngc = ["fifo"]\n', r"no such job file"),
    ('scenario = "wa"\n[base]\ndrive_file = "nope.toml"\n[grid]\ngc = ["fifo"]\n', r"drive file .*no such file"),
    ('scenario = "wa"\n[grid]\nseed = [-1]\n', r"\[grid\] seed\[0\] = -1: must be a whole number from 0"),
    ('scenario = "wa"\n[grid]\ndrive = ["mlc-256", "nope"]\n', r"\[grid\] drive\[1\] = \"nope\": not a drive preset"),
    ('scenario = "consistency"\n[grid]\ndrive = ["mlc-256"]\ndrive_file = ["x.toml"]\n', r"drive file .*no such file"),
    ('scenario = "wa"\n[base]\ndrive = "mlc-256"\n[[points]]\ndrive_file = "d.toml"\n',
     r"point drive_file=d: give either drive or drive_file, not both"),
    ('scenario = "wa"\n[grid]\ntorture_minutes = [true]\n', r"must be a number"),
    ('scenario = "wa"\n[[points]]\n', r"\[\[points\]\] number 1 is empty"),
    ('scenario = "wa"\n[grid]\ngc = ["fifo"]\n[[points]]\ngc = "greedy"\n', r"gc is in both \[grid\] and \[\[points\]\]"),
    ('scenario = consistency\n', r"not valid TOML"),
]


@pytest.mark.parametrize("text, message", BAD)
def test_mistakes_are_one_line_naming_the_key(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "d.toml").write_text('name = "d"\n', encoding="utf-8")
    with pytest.raises(SsdlabError, match=message) as err:
        load_spec(write(tmp_path, text))
    assert "\n" not in str(err.value)
    assert str(err.value).startswith(str(tmp_path / "spec.toml"))


def test_a_missing_spec_file() -> None:
    with pytest.raises(SsdlabError, match="sweep spec 'nope.toml': no such file"):
        load_spec("nope.toml")


def test_a_spec_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path) -> None:
    import os

    fifo = tmp_path / "spec.toml"
    os.mkfifo(fifo)
    with pytest.raises(SsdlabError, match="regular file|FIFO|fifo"):
        load_spec(str(fifo))


def test_ssdlab_sweep_is_the_package_and_a_function() -> None:
    import subprocess
    import sys

    assert callable(ssdlab.sweep) and ssdlab.sweep.load_spec is load_spec
    # importing ssdlab does not import Dask: only running a sweep does
    code = "import sys, ssdlab; print('distributed' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
