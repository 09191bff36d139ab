"""``ssdlab fio`` and ``ssdlab consistency --device``: output, files, and one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ssdlab.cli import main

REPO = Path(__file__).resolve().parents[1]
JOBS = Path(__file__).parent / "fio_jobs"
CONSISTENCY = str(REPO / "configs/jobs/consistency.fio")


def run(argv, capsys, monkeypatch=None, env=None):
    if monkeypatch is not None:
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_fio_normal_output_and_result_dir(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run(["fio", CONSISTENCY, "--capacity", "2GiB", "--seed", "3", "--out", "res"], capsys,
                           monkeypatch, {"RUNTIME": "4"})
    assert status == 0, err
    assert out.startswith("fill: (g=0): rw=write, bs=(R) 128KiB-128KiB")
    assert "random-write: (groupid=1, jobs=1): err= 0: simulated" in out
    assert "ssdlab: note: accepted, no effect on the simulated drive: ioengine, direct" in err
    names = {p.name for p in (tmp_path / "res").iterdir()}
    assert {"fio.json", "fio.txt", "summary.json", "iops.csv", "series.csv", "job2-random-write_iops.png",
            "random-write_iops.2.log", "random-write_bw.2.log", "random-write_lat.2.log"} <= names
    assert json.loads((tmp_path / "res" / "summary.json").read_text())["seed"] == 3


def test_fio_json_to_a_file_and_logs_in_cwd(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run(["fio", CONSISTENCY, "--capacity", "2GiB", "--output-format=json", "--output", "r.json",
                            "-q"], capsys, monkeypatch, {"RUNTIME": "3"})
    assert status == 0 and out == "" and err == ""
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [j["jobname"] for j in doc["jobs"]] == ["fill", "random-write"]
    assert doc["ssdlab"]["drive"] == "mlc-256" and doc["ssdlab"]["seed"] == 1
    assert (tmp_path / "random-write_iops.2.log").exists()  # like fio: logs land in the working directory


def test_fio_sections(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, _ = run(["fio", str(JOBS / "ssd-test.fio"), "--capacity", "2GiB", "--section", "seq-write",
                          "--output-format", "json", "-q"], capsys)
    assert status == 0
    assert [j["jobname"] for j in json.loads(out)["jobs"]] == ["seq-write"]


@pytest.mark.parametrize(
    "args,message",
    [
        (["bad/verify.fio"], "bad/verify.fio:6: verify=pattern needs verify_pattern"),
        (["bad/zoned-per-direction.fio"], "per-direction zones are not supported by the simulator"),
        (["nope.fio"], "job file 'nope.fio': no such file"),
        (["fio-seq-read.fio", "--capacity", "256MiB"], "is too small for drive 'mlc-256'"),
        (["fio-seq-read.fio", "--drive", "nosuch"], "nosuch"),
        (["fio-seq-read.fio", "--output-format", "terse"], "Invalid value for '--output-format'"),
    ],
)
def test_fio_errors_are_one_line_status_2(args, message, capsys, monkeypatch):
    monkeypatch.chdir(JOBS)
    status, out, err = run(["fio", *args], capsys)
    assert status == 2
    assert err.startswith("ssdlab: error: ") and err.count("\n") == 1, err
    assert message in err


def test_jobs_without_stonewall_run_together_unless_sequential_jobs(tmp_path, capsys, monkeypatch):
    job = tmp_path / "two.fio"
    job.write_text("[global]\nioengine=libaio\ndirect=1\nsize=64m\nnorandommap\n[a]\nrw=write\n[b]\nrw=randread\n")
    status, out, err = run(["fio", str(job), "--capacity", "2GiB", "--output-format", "json", "-q"], capsys)
    assert status == 0
    together = json.loads(out)["jobs"]
    # Both started at once and shared the drive: each ends later than it would alone.
    assert [j["jobname"] for j in together] == ["a", "b"]
    status, out, err = run(["fio", str(job), "--capacity", "2GiB", "--sequential-jobs", "--output-format", "json"],
                           capsys)
    assert status == 0
    assert "ssdlab: note: job 'b' runs after 'a', not at the same time as fio would (--sequential-jobs)" in err
    alone = json.loads(out)["jobs"]
    # The reader waits for dies busy with the writer's programs; the QD1 writer, acknowledged from
    # the write buffer, loses nothing to the reads' data (the link's return direction; a SATA
    # link's half duplex is not modelled), so it takes no less time than alone.
    (ta, tb), (aa, ab) = together, alone
    assert tb["job_runtime"] > ab["job_runtime"], (tb["job_runtime"], ab["job_runtime"])
    assert ta["job_runtime"] >= aa["job_runtime"], (ta["job_runtime"], aa["job_runtime"])
    # Sequentially the second job starts when the first ends; together both end near the same time.
    assert alone[1]["elapsed"] >= alone[0]["elapsed"] + 1


# -- consistency --device ----------------------------------------------------------------------------

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (scripts/install-test-tools.sh)")


@needs_fio
def test_consistency_on_a_file(tmp_path, capsys):
    target = tmp_path / "disk.img"
    status, out, err = run(["consistency", "--device", str(target), "--capacity", "64MiB", "--duration", "2",
                            "--out", str(tmp_path / "res")], capsys)
    assert status == 0, err
    assert out.startswith(f"Results in {tmp_path / 'res'}/")
    assert "write ampl.           n/a   (no SMART write counters)" in out
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert summary["device"] == str(target) and summary["seed"] is None and summary["duration_s"] == 2
    # a second run needs the flag, since the file now holds data
    status, _, err = run(["consistency", "--device", str(target), "--duration", "2", "--out", str(tmp_path / "r2")], capsys)
    assert status == 2 and "add --yes-destroy-data" in err and err.count("\n") == 1
    status, _, err = run(["consistency", "--device", str(target), "--duration", "2", "--yes-destroy-data", "-q",
                          "--out", str(tmp_path / "r2")], capsys)
    assert status == 0, err


@pytest.mark.parametrize(
    "args,message",
    [
        (["--device", "/tmp/x.img", "--gc", "fifo"], "--gc applies to simulated drives only"),
        (["--device", "/tmp/x.img", "--seed", "4"], "--seed applies to simulated drives only"),
        (["--yes-destroy-data"], "--yes-destroy-data and --force-signatures apply to --device runs only"),
    ],
)
def test_consistency_device_flag_misuse(args, message, capsys):
    status, _, err = run(["consistency", "--duration", "1", *args], capsys)
    assert status == 2 and message in err and err.count("\n") == 1
