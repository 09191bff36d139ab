"""``ssdlab fio JOBFILE --device PATH``: one job file on a simulated drive and, through the system fio,
on a 64 MiB temporary file -- the same result directory, fio-style JSON and logs, and the refusals."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from ssdlab.cli import main
from ssdlab.fio import logfiles, windows

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = str(REPO / "configs/jobs/readme-example.fio")
RESULT_FILES = {"fio.json", "fio.txt", "summary.json", "iops.csv", "series.csv", "job1-fill_iops.png",
                "job2-random-write_iops.png", "random-write_iops.2.log"}

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (scripts/install-test-tools.sh)")


def run(argv, capsys):
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@needs_fio
def test_readme_example_on_a_simulated_drive_and_on_a_file(tmp_path, capsys):
    sim, dev = tmp_path / "sim", tmp_path / "dev"
    status, sim_out, err = run(["fio", EXAMPLE, "--capacity", "2GiB", "--output-format=json", "--out", str(sim), "-q"],
                               capsys)
    assert status == 0, err
    target = tmp_path / "disk.img"
    status, dev_out, err = run(["fio", EXAMPLE, "--device", str(target), "--capacity", "64MiB",
                                "--output-format=json", "--out", str(dev)], capsys)
    assert status == 0, err
    assert f"created {target} (64 MiB)" in err and "results in" in err
    for d in (sim, dev):
        assert RESULT_FILES <= {p.name for p in d.iterdir()}, d
        for png in ("job1-fill_iops.png", "job2-random-write_iops.png"):
            assert (d / png).read_bytes()[:4] == b"\x89PNG"
    # the report on stdout is the result directory's fio.json; real fio's own for --device
    sim_doc, dev_doc = json.loads(sim_out), json.loads(dev_out)
    assert dev_doc == json.loads((dev / "fio.json").read_text())
    assert dev_doc["fio version"].startswith("fio-") and "ssdlab" not in dev_doc
    assert [j["jobname"] for j in sim_doc["jobs"]] == [j["jobname"] for j in dev_doc["jobs"]] == ["fill", "random-write"]
    assert set(sim_doc) - {"ssdlab"} <= set(dev_doc)
    for s, r in zip(sim_doc["jobs"], dev_doc["jobs"]):
        assert set(s) - {"ssdlab", "desc"} <= set(r)
        for d in windows.DIRS:
            assert set(s[d]) <= set(r[d]), d
        assert s["job options"]["rw"] == r["job options"]["rw"]
    rw = dev_doc["jobs"][1]
    assert rw["write"]["total_ios"] > 0 and rw["job options"]["write_iops_log"] == "random-write"
    # fio's normal report in fio.txt
    text = (dev / "fio.txt").read_text()
    assert text.startswith("fill: (g=0): rw=write") and "fio-3" in text and "Run status group 1" in text
    # summaries: same keys, device and seed set as for the other device procedures
    s_sum, d_sum = (json.loads((d / "summary.json").read_text()) for d in (sim, dev))
    assert set(s_sum) <= set(d_sum)
    assert d_sum["device"] == str(target) and d_sum["seed"] is None and s_sum["device"] is None
    assert [j["name"] for j in d_sum["jobs"]] == ["fill", "random-write"]
    assert set(s_sum["jobs"][0]) == set(d_sum["jobs"][0])
    # per-second tables with the same columns; the real IOPS come from fio's 1 s log
    for name in ("iops.csv", "series.csv"):
        assert list(pd.read_csv(sim / name).columns) == list(pd.read_csv(dev / name).columns)
    iops = pd.read_csv(dev / "iops.csv")
    rand = iops[iops["job"] == 2]
    # a real file on a loaded host may stall for a second (seen under 10 parallel builds), not for most
    assert len(rand) in (5, 6) and (rand["iops"][:-1] > 0).sum() >= len(rand) - 2
    # fio's windows are rates over slightly uneven windows, so their sum is close to the total
    assert rand["iops"].sum() == pytest.approx(rw["write"]["total_ios"], rel=0.05)
    series = pd.read_csv(dev / "series.csv")
    assert series[series["job"] == 2]["host_mib"].sum() == pytest.approx(rw["write"]["io_bytes"] / 2**20, rel=0.05)
    # the job's log in fio's format, in both directories; fio's own files under fio/
    for d in (sim, dev):
        log = logfiles.read_log(d / "random-write_iops.2.log")
        assert len(log) >= 4 and set(log["direction"]) == {1}
        first = (d / "random-write_iops.2.log").read_text().splitlines()[0]
        assert len(first.split(",")) == 5
    assert (dev / "fio" / "job.fio").exists() and (dev / "fio" / "ssdlab-job1_iops.1.log").exists()
    assert f"filename={target.resolve()}" in (dev / "fio" / "job.fio").read_text()


@needs_fio
def test_normal_report_is_fios_own(tmp_path, capsys):
    job = tmp_path / "short.fio"
    job.write_text("[global]\nsize=16m\nfilename=/nonexistent/ignored\n[w]\nrw=randwrite\nbs=4k\n"
                   "time_based\nruntime=1\n")
    status, out, err = run(["fio", str(job), "--device", str(tmp_path / "f.img"), "--capacity", "64MiB", "-q"],
                           capsys)
    assert status == 0, err
    assert out.startswith("w: (g=0): rw=randwrite") and "\nfio-3" in out and "Run status group 0" in out
    assert (tmp_path / "f.img").stat().st_size == 64 * 2**20


@needs_fio
@pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="no mkfs.ext4")
def test_refuses_a_file_with_a_filesystem(tmp_path, capsys):
    target = tmp_path / "fs.img"
    with open(target, "wb") as f:
        f.truncate(64 * 2**20)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(target)], check=True, capture_output=True)
    before = target.read_bytes()[:2048]
    status, _, err = run(["fio", EXAMPLE, "--device", str(target), "-q"], capsys)
    assert status == 2 and err.count("\n") == 1
    assert err.startswith("ssdlab: error: ") and "add --yes-destroy-data" in err
    status, _, err = run(["fio", EXAMPLE, "--device", str(target), "--yes-destroy-data", "-q"], capsys)
    assert status == 2 and err.count("\n") == 1
    assert "ext4" in err and "--force-signatures" in err
    assert target.read_bytes()[:2048] == before


@pytest.mark.parametrize(
    "args,message",
    [
        (["--drive", "mlc-256"], "--drive applies to simulated drives only"),
        (["--seed", "4"], "--seed applies to simulated drives only"),
        (["--op", "0.1"], "--op applies to simulated drives only"),
    ],
)
def test_simulation_flags_with_device(tmp_path, args, message, capsys):
    status, _, err = run(["fio", EXAMPLE, "--device", str(tmp_path / "x.img"), "--capacity", "64MiB", *args], capsys)
    assert status == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "x.img").exists()


def test_device_flags_without_device(capsys):
    status, _, err = run(["fio", EXAMPLE, "--yes-destroy-data"], capsys)
    assert status == 2 and "apply to --device runs only" in err and err.count("\n") == 1


@needs_fio
def test_same_refusals_as_the_simulator_before_anything_is_written(tmp_path, capsys):
    job = tmp_path / "v.fio"
    job.write_text("[v]\nrw=randwrite\nbs=4k\nverify=crc32c\nverify_offset=64\n")
    status, _, sim_err = run(["fio", str(job), "--capacity", "2GiB"], capsys)
    target = tmp_path / "x.img"
    status2, _, dev_err = run(["fio", str(job), "--device", str(target), "--capacity", "64MiB"], capsys)
    assert status == status2 == 2 and sim_err == dev_err
    assert "option 'verify_offset' is not supported by the simulator" in dev_err and dev_err.count("\n") == 1
    assert not target.exists()
