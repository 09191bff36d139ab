//! The per-second behaviour, not only the means (issue 10): after the cliff an on-demand drive
//! scatters without stalling to 0 IOPS and without a deterministic rhythm, latencies follow
//! Little's law, and no second shows more NAND work than the dies can do. Each check was seen to
//! fail with its mechanism removed (docs/architecture.md, "Mutation checks").

use ssdlab::scenario::{run_steps, Consistency, ConsistencySummary};
use ssdlab::workload::PhaseResult;
use ssdlab::{presets, Drive, DriveConfig};

const CAPACITY: u64 = 128_000_000_000;
const SECONDS: f64 = 600.0;

struct Run {
    summary: ConsistencySummary,
    phase: PhaseResult,
    /// Most NAND units the dies can program in one second (fastest pages, no waiting).
    nand_units_per_s: f64,
}

fn run(cfg: &DriveConfig) -> Run {
    let mut drive = Drive::new(cfg, 5).unwrap();
    let test = Consistency {
        duration_s: SECONDS,
        ..Consistency::default()
    };
    let steps = test.steps(drive.user_bytes()).unwrap();
    let mut results = run_steps(&mut drive, &steps, 5, &mut |_, _| true).unwrap();
    let phase = results.remove(2).phase.unwrap();
    let l = drive.layout();
    let fastest = drive.ftl().op_times().min_program_ns() + l.t_xfer_program.ns() as f64;
    Run {
        summary: test.summarize(&phase),
        nand_units_per_s: f64::from(l.dies) * f64::from(l.units_per_program) * 1e9 / fastest,
        phase,
    }
}

fn preset(name: &str) -> DriveConfig {
    presets::get(name)
        .unwrap()
        .with_user_capacity(CAPACITY)
        .unwrap()
}

fn iops(r: &Run) -> Vec<u64> {
    let mut v = r.phase.series.total_ios();
    v.truncate(SECONDS as usize);
    v
}

/// Seconds at 0 IOPS after the cliff.
fn zero_seconds(r: &Run) -> usize {
    iops(r)[r.summary.burst_s as usize..]
        .iter()
        .filter(|&&n| n == 0)
        .count()
}

/// Autocorrelation of the steady window's per-second IOPS at `lag`.
fn autocorrelation(r: &Run, lag: usize) -> f64 {
    let v: Vec<f64> = iops(r)[r.summary.zoom_start_s as usize..]
        .iter()
        .map(|&n| n as f64)
        .collect();
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var: f64 = v.iter().map(|x| (x - mean).powi(2)).sum();
    let cov: f64 = (0..v.len() - lag)
        .map(|i| (v[i] - mean) * (v[i + lag] - mean))
        .sum();
    cov / var
}

fn worst_autocorrelation(r: &Run) -> f64 {
    (2..=10)
        .map(|lag| autocorrelation(r, lag).abs())
        .fold(0.0, f64::max)
}

#[test]
fn on_demand_drives_scatter_after_the_cliff_without_stalls_or_rhythm() {
    for name in ["mlc-256", "no-idle-gc", "idle-gc"] {
        let r = run(&preset(name));
        let s = &r.summary;
        assert!(
            s.burst_s > 0.0 && s.iops_clean > 3.0 * s.iops_steady_mean,
            "{name}: burst {} s at {:.0} IOPS, steady {:.0}",
            s.burst_s,
            s.iops_clean,
            s.iops_steady_mean
        );
        assert_eq!(
            zero_seconds(&r),
            0,
            "{name}: 0-IOPS seconds after the cliff"
        );
        let worst = worst_autocorrelation(&r);
        // no-idle-gc's foreground GC runs to 50 free blocks per die (the Performance Pro's HD Tach
        // recovery, docs/calibration.md): long runs on every die leave a milder rhythm (0.54 at
        // 128 GB) than the default drive's; the others keep the 0.5 bound.
        let bound = if name == "no-idle-gc" { 0.65 } else { 0.5 };
        assert!(
            worst < bound,
            "{name}: steady-state autocorrelation {worst:.2} at some lag in 2..=10"
        );
        // Hundreds of milliseconds at most, where whole-victim GC took seconds.
        assert!(
            s.latency_us.max < 500_000.0,
            "{name}: max latency {} us",
            s.latency_us.max
        );
    }
}

#[test]
fn write_latency_follows_littles_law() {
    let r = run(&preset("mlc-256"));
    let s = &r.summary;
    // 32 requests outstanding at the steady IOPS: each waits about QD / IOPS.
    let little_us = 32.0 / s.iops_steady_mean * 1e6;
    let median = s.latency_us.p50;
    assert!(
        median > little_us / 3.0 && median < little_us * 3.0,
        "median {median:.0} us vs QD/IOPS {little_us:.0} us"
    );
    // The mean over the whole phase obeys it closely: mean latency = QD / mean IOPS.
    let secs = r.phase.end_ns as f64 / 1e9 - r.phase.start_ns as f64 / 1e9;
    let mean_iops = r.phase.ios[1] as f64 / secs;
    let ratio = s.latency_us.mean / (32.0 / mean_iops * 1e6);
    assert!(
        (ratio - 1.0).abs() < 0.05,
        "mean latency / (QD/IOPS) = {ratio:.3}"
    );
}

#[test]
fn no_second_shows_more_nand_work_than_the_dies_can_do() {
    let r = run(&preset("mlc-256"));
    let series = &r.phase.series;
    let peak = series.nand_units.iter().copied().max().unwrap() as f64;
    assert!(
        peak <= r.nand_units_per_s,
        "a second with {peak} NAND units; the dies program at most {:.0}",
        r.nand_units_per_s
    );
    // The work is all there: the series' NAND units add up to the counters' (but for pages
    // still open at the end and work finishing after the last second).
    let total: u64 = series.nand_units.iter().sum();
    let counted = r.phase.counters.nand_write_units;
    assert!(
        total <= counted && total as f64 > 0.99 * counted as f64,
        "series {total} vs counters {counted}"
    );
    // And GC copies are a part of it, second by second.
    for (i, (&gc, &nand)) in series.gc_units.iter().zip(&series.nand_units).enumerate() {
        assert!(gc <= nand, "second {i}: {gc} GC units of {nand}");
    }
}

#[test]
fn dies_differ_and_the_steady_state_is_a_scatter() {
    // Page types and spread make NAND times vary: the steady state is not a flat line.
    let r = run(&preset("mlc-256"));
    let v = &iops(&r)[r.summary.zoom_start_s as usize..];
    let distinct: std::collections::BTreeSet<_> = v.iter().collect();
    assert!(
        distinct.len() as f64 > 0.5 * v.len() as f64,
        "{} distinct values in {} seconds",
        distinct.len(),
        v.len()
    );
    let most_common = v
        .iter()
        .map(|x| v.iter().filter(|y| *y == x).count())
        .max()
        .unwrap();
    assert!(
        most_common * 20 < v.len(),
        "a plateau of {most_common} seconds"
    );
}

#[test]
fn small_drives_scatter_like_the_full_size_one() {
    // 8 GiB (50-page blocks, 352 per die): the same kind of chart as 256 GB: a burst, a cliff,
    // then a scatter (coefficient of variation 0.28 at 256 GB, 0.16 here; 0.02 with 8-page blocks)
    // with no 0-IOPS second and no rhythm.
    let cfg = presets::get("mlc-256")
        .unwrap()
        .with_user_capacity(8 << 30)
        .unwrap();
    let r = run(&cfg);
    let s = &r.summary;
    assert!(s.iops_clean > 5.0 * s.iops_steady_mean, "{s:?}");
    assert_eq!(zero_seconds(&r), 0, "0-IOPS seconds after the cliff");
    let v: Vec<f64> = iops(&r)[s.zoom_start_s as usize..]
        .iter()
        .map(|&n| n as f64)
        .collect();
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
    assert!(
        (0.12..0.5).contains(&(sd / mean)),
        "coefficient of variation {:.3} (mean {mean:.0})",
        sd / mean
    );
    let worst = worst_autocorrelation(&r);
    assert!(
        worst < 0.5,
        "autocorrelation {worst:.2} at some lag in 2..=10"
    );
}
