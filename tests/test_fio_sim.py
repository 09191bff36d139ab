"""fio job files on simulated drives: runs, fio-format JSON and logs, the result directory, and the
equivalence of configs/jobs/consistency.fio with `ssdlab.consistency`."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import ssdlab
from ssdlab.errors import SsdlabError
from ssdlab.fio import jobfile as jf
from ssdlab.fio import jsonout, logfiles, planner, resultdir, simrun, textout, windows
from ssdlab.fio.simrun import core_features, run_jobfile

GIB = 2**30
REPO = Path(__file__).resolve().parents[1]
JOBS = Path(__file__).parent / "fio_jobs"
SMALL = 2 * GIB  # the smallest drive of the default preset's die
ENV = {"SIZE": "256m", "RUNTIME": "3", "BS": "8k"}


def needs(*features):
    missing = [f for f in features if f not in core_features()]
    return pytest.mark.skipif(bool(missing), reason=f"the compiled core lacks {', '.join(missing)} (rebuild: make install)")


def run_text(tmp_path, text, seed=1, capacity=SMALL, **kw):
    path = tmp_path / "job.fio"
    path.write_text(text)
    return run_jobfile(path, "mlc-256", capacity=capacity, seed=seed, env=ENV, **kw)


# -- equivalence with the built-in procedure ----------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 5])
def test_consistency_jobfile_gives_the_same_iops_as_ssdlab_consistency(seed):
    duration = 20
    run = run_jobfile(REPO / "configs/jobs/consistency.fio", "mlc-256", capacity=SMALL, seed=seed,
                      env={"RUNTIME": str(duration)})
    native = ssdlab.consistency(ssdlab.load_preset("mlc-256").with_user_capacity(SMALL), duration_s=duration, seed=seed)
    fio_iops = run.jobs[-1].iops_per_second()[:duration]
    assert np.array_equal(fio_iops, native.iops["iops"].to_numpy())
    # the fill and the random writes moved the same bytes and caused the same NAND writes
    native_random = native.steps[-1].phase
    assert run.jobs[-1].phase["counters"] == native_random["counters"]
    assert run.jobs[0].runtime_s == pytest.approx(native.summary["fill_seconds"])


def test_same_seed_same_numbers_other_seed_other_offsets():
    def run(seed):
        r = run_jobfile(REPO / "configs/jobs/consistency.fio", "mlc-256", capacity=SMALL, seed=seed, env={"RUNTIME": "15"})
        return jsonout.fio_json(r)

    a, b, c = run(3), run(3), run(4)
    for key in ("timestamp", "timestamp_ms", "time"):
        a.pop(key), b.pop(key), c.pop(key)
    a["ssdlab"].pop("wall_seconds"), b["ssdlab"].pop("wall_seconds"), c["ssdlab"].pop("wall_seconds")
    assert a == b
    assert a["jobs"][1]["write"] != c["jobs"][1]["write"]  # once GC runs, offsets matter


def test_randseed_pins_a_jobs_offsets(tmp_path):
    text = "[r]\nioengine=libaio\ndirect=1\nrw=randwrite\nnorandommap\nsize=512m\nruntime=2\ntime_based\niodepth=8\nrandseed=99\n"
    # The run seed also draws the NAND's timing variation; without it only the offsets could
    # tell the two runs apart, and randseed pins those.
    d = ssdlab.load_preset("mlc-256").to_dict()
    d["timing"]["spread"] = {"program_sigma": 0, "block_sigma": 0, "die_sigma": 0, "erase_sigma": 0}
    d["geometry"]["bad_block_pct"] = 0
    steady = ssdlab.DriveConfig.from_dict(d)
    path = tmp_path / "job.fio"
    path.write_text(text)
    a = run_jobfile(path, steady, capacity=SMALL, seed=3, env=ENV)
    b = run_jobfile(path, steady, capacity=SMALL, seed=4, env=ENV)
    assert a.plan.jobs[0].workload["seed"] == 99
    assert a.jobs[0].phase["counters"]["host_write_units"] == b.jobs[0].phase["counters"]["host_write_units"]


# -- the corpus on a simulated drive -----------------------------------------------------------------


def _runnable(path: Path):
    p = planner.plan(jf.parse(path, env=ENV), SMALL)
    missing = sorted({r.feature for j in p.jobs for r in j.requirements} - core_features())
    return missing


SHORT = ["fio-rand-RW.fio", "fio-rand-write.fio", "fio-seq-read.fio", "fio-seq-write.fio", "env.fio",
         "rate-think.fio", "logs.fio", "loops-offset.fio", "compress.fio", "include-main.fio", "trim.fio",
         "fio-rand-read.fio", "trimwrite.fio", "steadystate.fio"]


@pytest.mark.parametrize("name", SHORT)
def test_corpus_runs_and_reports_like_fio(name, tmp_path):
    path = JOBS / name
    missing = _runnable(path)
    if missing:
        pytest.skip(f"the compiled core lacks {', '.join(missing)}")
    text = path.read_text().replace("runtime=10", "runtime=2").replace("runtime=5m", "runtime=40")
    (tmp_path / "include").mkdir()
    for inc in (JOBS / "include").iterdir():
        (tmp_path / "include" / inc.name).write_text(inc.read_text())
    run = run_text(tmp_path, text)
    doc = jsonout.fio_json(run)
    json.dumps(doc, allow_nan=False)
    assert doc["fio version"].startswith("ssdlab-")
    assert len(doc["jobs"]) == len(run.plan.jobs)
    for j, job in zip(doc["jobs"], run.jobs):
        assert j["jobname"] == job.plan.name
        moved = 0
        for d, name_ in enumerate(windows.DIRS):
            o = j[name_]
            assert o["io_kbytes"] == o["io_bytes"] >> 10
            assert o["bw"] == o["bw_bytes"] // 1024
            if o["total_ios"]:
                assert o["io_bytes"] == o["total_ios"] * job.plan.block_bytes
                assert o["runtime"] == max(round(job.runtime_s * 1000), 1)
                assert o["iops"] == pytest.approx(1000 * o["total_ios"] / o["runtime"])
                assert o["clat_ns"]["N"] == o["total_ios"] and o["slat_ns"]["N"] == 0
                assert o["clat_ns"]["min"] <= o["clat_ns"]["mean"] <= o["clat_ns"]["max"]
                pct = o["clat_ns"]["percentile"]
                assert list(pct)[:3] == ["1.000000", "5.000000", "10.000000"]
                assert list(pct.values()) == sorted(pct.values())
                assert "percentile" not in o["lat_ns"]
                assert o["iops_min"] <= o["iops_mean"] <= o["iops_max"]
            else:
                assert o["runtime"] == 0 and o["iops"] == 0.0
            moved += o["total_ios"]
        assert moved > 0
        assert sum(j["latency_ns"].values()) + sum(j["latency_us"].values()) + sum(j["latency_ms"].values()) == pytest.approx(100.0, abs=0.01)
        assert sum(j["iodepth_level"].values()) == pytest.approx(100.0)
    text_out = textout.normal_text(run)
    assert "Run status group 0 (all jobs):" in text_out


def test_mixed_job_splits_reads_and_writes(tmp_path):
    run = run_text(tmp_path, "[m]\nioengine=libaio\ndirect=1\nrw=randrw\nrwmixread=70\nnorandommap\nsize=256m\n"
                             "number_ios=20000\niodepth=4\n")
    ios = run.jobs[0].phase["ios"]
    assert sum(ios) == 20000
    assert 0.65 < ios[0] / 20000 < 0.75


def test_trim_jobs_trim(tmp_path):
    run = run_text(tmp_path, (JOBS / "trim.fio").read_text())
    trims = [j.phase["ios"][2] for j in run.jobs]
    assert trims[1] == 256 * 2**20 // (128 * 1024)  # one pass of 128k TRIMs over 256m
    assert trims[3] == 1000  # number_ios
    assert trims[0] == trims[2] == 0


def test_startdelay_and_ramp_are_not_reported(tmp_path):
    run = run_text(tmp_path, "[r]\nioengine=libaio\ndirect=1\nrw=randread\nnorandommap\nsize=256m\n"
                             "runtime=2\ntime_based\nstartdelay=3\nramp_time=1\n")
    job = run.jobs[0]
    assert job.runtime_s == pytest.approx(2.0, abs=0.01)
    assert job.start_s == pytest.approx(4.0, abs=0.01)  # 3 s idle, 1 s ramp


def test_missing_core_feature_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setattr(simrun, "core_features", lambda: frozenset())
    with pytest.raises(SsdlabError) as e:
        run_text(tmp_path, "[r]\nrw=randwrite\nsize=64m\n")
    assert str(e.value).startswith(f"{tmp_path / 'job.fio'}:2: job 'r': fio's random map")
    assert "add norandommap=1" in str(e.value)


@needs("random_map")
def test_random_map_visits_every_block_once(tmp_path):
    run = run_text(tmp_path, "[r]\nioengine=libaio\ndirect=1\nrw=randwrite\nbs=4k\nsize=64m\niodepth=8\n")
    c = run.jobs[0].phase
    assert c["ios"][1] == 64 * 2**20 // 4096


@needs("steady_state")
def test_steady_state_stops_the_job_and_is_reported(tmp_path):
    run = run_text(tmp_path, "[r]\nioengine=libaio\ndirect=1\nrw=randread\nnorandommap\nsize=256m\niodepth=8\n"
                             "time_based\nruntime=120\nss=iops:20%\nss_dur=5\n")
    job = run.jobs[0]
    assert job.phase["steady_state_at_s"] is not None
    assert job.runtime_s < 120
    ss = jsonout.job_json(job)["steadystate"]
    assert ss["attained"] == 1 and ss["duration"] == 5 and len(ss["data"]["iops"]) == 5
    assert ss["ss"] == "iops:20.000000%"


# -- the JSON steady-state section from series (no core feature needed) --------------------------------


def _fake_job(iops_per_s, ss, at=None):
    n = len(iops_per_s)
    ios = np.asarray(iops_per_s, dtype=np.int64)
    zero = np.zeros(n, dtype=np.int64)
    series = pd.DataFrame({
        "time_s": np.arange(n, dtype=float), "read_ios": zero, "write_ios": ios, "trim_ios": zero,
        "read_bytes": zero, "write_bytes": ios * 4096, "trim_bytes": zero, "read_latency_sum_ns": zero,
        "write_latency_sum_ns": ios * 1000, "trim_latency_sum_ns": zero, "host_units": ios, "nand_units": ios,
        "gc_units": zero, "erases": zero,
    })
    step = SimpleNamespace(phase={"steady_state_at_s": at}, series=series, interval_s=1.0, duration_s=float(n))
    plan = SimpleNamespace(steady_state=ss, steady_state_text="iops:10.000000%")
    return simrun.JobResult(plan, step, 0.0)


def test_steadystate_section_matches_fio_definitions():
    ss = {"metric": "iops", "criterion": "deviation", "limit": 10.0, "percent": True, "window_s": 4.0, "ramp_s": 0.0}
    job = _fake_job([50, 80, 100, 105, 95, 100, 300], ss, at=6.0)
    s = jsonout._steadystate(job)
    assert s["attained"] == 1 and s["duration"] == 4
    assert s["data"]["iops"] == [100, 105, 95, 100]  # the window that was steady: seconds 2..5
    assert s["data"]["iops_mean"] == 100 and s["max_deviation"] == 5.0
    assert s["criterion"] == "5.000000%"
    slope = dict(ss, criterion="slope", percent=False)
    s = jsonout._steadystate(_fake_job([10, 20, 30, 40], slope))
    assert s["attained"] == 0 and s["slope"] == pytest.approx(10.0) and s["criterion"] == "10.000000"


# -- logs ------------------------------------------------------------------------------------------


def test_logs_have_fios_names_and_format(tmp_path):
    run = run_text(tmp_path, (REPO / "configs/jobs/consistency.fio").read_text().replace("${RUNTIME}", "5"))
    written = logfiles.write_logs(run, tmp_path / "logs")
    names = sorted(p.name for p in written)
    assert names == ["random-write_bw.2.log", "random-write_clat.2.log", "random-write_iops.2.log",
                     "random-write_lat.2.log", "random-write_slat.2.log"]
    lines = (tmp_path / "logs" / "random-write_iops.2.log").read_text().splitlines()
    assert lines[0].startswith("1000, ") and lines[0].endswith(", 1, 0, 0")
    assert all(len(line.split(", ")) == 5 for line in lines)
    log = logfiles.read_log(tmp_path / "logs" / "random-write_iops.2.log")
    per_s = logfiles.per_second(log)
    expect = run.jobs[-1].iops_per_second()
    assert len(expect) == 6  # 5 s and the completions after the last submission
    assert np.array_equal(per_s, expect[:5])  # like fio, no line for the last window cut short
    lat_lines = (tmp_path / "logs" / "random-write_lat.2.log").read_text().splitlines()
    assert len(lat_lines) == 6  # latency logs are flushed at the end, short window included
    assert int(lat_lines[-1].split(",")[0]) == round(run.jobs[-1].runtime_s * 1000)
    bw = logfiles.per_second(logfiles.read_log(tmp_path / "logs" / "random-write_bw.2.log"))
    assert np.array_equal(bw, (expect[:5] * 4096) // 1024)
    lat = logfiles.read_log(tmp_path / "logs" / "random-write_lat.2.log")
    s = run.jobs[-1].series
    first = s["write_latency_sum_ns"][0] / s["write_ios"][0]
    assert lat["value"][0] == int(first + 0.5)
    assert (tmp_path / "logs" / "random-write_slat.2.log").read_text() == ""


def test_shared_log_names_offsets_and_half_second_windows(tmp_path):
    run = run_text(tmp_path, (JOBS / "logs.fio").read_text())
    written = logfiles.write_logs(run, tmp_path)
    assert {p.name for p in written} == {"mixed_iops.log", "mixed_bw.log", "mixed_lat.log", "mixed_clat.log", "mixed_slat.log"}
    lines = (tmp_path / "mixed_iops.log").read_text().splitlines()
    assert lines[0].startswith("500, ") and all(len(line.split(", ")) == 6 for line in lines)  # log_offset=1
    directions = {line.split(", ")[2] for line in lines}
    assert directions == {"0", "1"}  # per_job_logs=0: both jobs appended to one file


def test_read_log_rejects_garbage(tmp_path):
    (tmp_path / "x.log").write_text("1000, 5, 1, 0, 0\nhello\n")
    with pytest.raises(SsdlabError, match=r"x.log:2: not a fio log line"):
        logfiles.read_log(tmp_path / "x.log")


def test_per_second_fills_missing_seconds_with_zero():
    log = pd.DataFrame({"time_ms": [1000, 3000, 3000], "value": [5, 7, 1], "direction": [1, 1, 0], "bs": [0, 0, 0]})
    assert logfiles.per_second(log).tolist() == [5, 0, 8]
    assert logfiles.per_second(log, seconds=5).tolist() == [5, 0, 8, 0, 0]


# -- the result directory ----------------------------------------------------------------------------


def test_result_directory(tmp_path):
    run = run_jobfile(REPO / "configs/jobs/consistency.fio", "mlc-256", capacity=SMALL, seed=2, env={"RUNTIME": "5"})
    written = resultdir.save(run, tmp_path / "out")
    names = sorted(p.name for p in written)
    assert names == ["fio.json", "fio.txt", "iops.csv", "job1-fill_iops.png", "job2-random-write_iops.png",
                     "series.csv", "summary.json"]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["scenario"] == "fio" and summary["device"] is None and summary["seed"] == 2
    assert [j["name"] for j in summary["jobs"]] == ["fill", "random-write"]
    iops = pd.read_csv(tmp_path / "out" / "iops.csv")
    rw = iops[iops["job"] == 2]["iops"].to_numpy()
    assert np.array_equal(rw, run.jobs[-1].iops_per_second()[: len(rw)])
    series = pd.read_csv(tmp_path / "out" / "series.csv")
    assert list(series.columns) == ["job", "name", "time_s", "iops", "host_mib", "nand_mib", "gc_mib", "erases",
                                    "write_amplification", "mean_latency_us"]
    assert (tmp_path / "out" / "job2-random-write_iops.png").read_bytes()[:4] == b"\x89PNG"
    doc = json.loads((tmp_path / "out" / "fio.json").read_text())
    assert doc["jobs"][1]["job options"]["rw"] == "randwrite"
    assert doc["global options"]["ioengine"] == "libaio"
