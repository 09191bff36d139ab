//! The SLC write cache (`ftl/slc_cache.rs`) and the write-saturation procedure on the presets of
//! today's drives: the cache's size follows the free space, the speeds before and after it are the
//! pSLC and native program rates over the dies (with folding while writing accounted), idle time
//! folds at the folding rate, folded data is written twice (WA), and without the cache the
//! whole-drive write runs at the native rate.

use ssdlab::config::Spread;
use ssdlab::scenario::{run_steps, Procedure, Saturation, SaturationSummary, Step, StepResult};
use ssdlab::{presets, Drive, DriveConfig, Pattern, Rw, Workload, UNIT_BYTES};

const CAPACITY: u64 = 16_000_000_000;

fn drive(preset: &str) -> DriveConfig {
    presets::get(preset)
        .unwrap()
        .with_user_capacity(CAPACITY)
        .unwrap()
}

/// The same drive with every operation at its typical time: rates are then exact (with spread,
/// the data-balanced striping runs at the pace of the slowest die, a few percent below the mean).
fn exact(preset: &str) -> DriveConfig {
    let mut cfg = drive(preset);
    cfg.timing.spread = Spread::NONE;
    cfg
}

fn saturation(cfg: &DriveConfig, p: &Saturation) -> SaturationSummary {
    let mut d = Drive::new(cfg, 1).unwrap();
    let steps = p.steps(d.user_bytes()).unwrap();
    let r = run_steps(&mut d, &steps, 1, &mut |_, _| true).unwrap();
    p.summarize(&r, d.user_bytes())
}

/// A sequential write of `pct` % of the drive starting at `start_pct` %.
fn write(label: &str, start_pct: f64, pct: f64) -> Step {
    let at = |p: f64| (CAPACITY as f64 * p / 100.0) as u64 / (128 << 10) * (128 << 10);
    Step::Run {
        workload: Workload {
            label: label.into(),
            rw: Rw::Write,
            pattern: Pattern::Sequential,
            block_bytes: 128 << 10,
            queue_depth: 32,
            offset_bytes: at(start_pct),
            span_bytes: at(pct),
            ..Workload::default()
        },
    }
}

fn run(cfg: &DriveConfig, steps: &[Step]) -> (Drive, Vec<StepResult>) {
    let mut d = Drive::new(cfg, 1).unwrap();
    let r = run_steps(&mut d, steps, 1, &mut |_, _| true).unwrap();
    (d, r)
}

/// MB/s of `dies` dies each programming a multi-plane page (`units` units) every `per_page_ns`.
fn rate_mb_s(d: &Drive, per_page_ns: f64) -> f64 {
    let l = d.layout();
    f64::from(l.dies) * f64::from(l.units_per_program) * UNIT_BYTES as f64 / per_page_ns * 1e3
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn assert_close(what: &str, measured: f64, expected: f64, tolerance: f64) {
    let err = (measured / expected - 1.0).abs();
    assert!(
        err <= tolerance,
        "{what}: measured {measured:.3}, expected {expected:.3} ({:.1}% off, allowed {:.0}%)",
        err * 100.0,
        tolerance * 100.0
    );
}

#[test]
fn a_half_full_drive_has_half_the_dynamic_cache() {
    let cfg = drive("tlc-dynamic-cache");
    let c = cfg.ftl.slc_cache.as_ref().unwrap();
    let bits = f64::from(cfg.geometry.cell.bits());
    // The static part (the default TurboWrite region) is there whatever the fill.
    let dynamic = c.dynamic_share * CAPACITY as f64 / bits;
    let fixed = c.static_pct / 100.0 * CAPACITY as f64;
    // Empty drive: half of it written (past the cache), idle until everything is folded, then
    // the other half.
    let (_, r) = run(
        &cfg,
        &[
            Step::SecureErase,
            write("empty", 0.0, 50.0),
            Step::Idle { seconds: 60.0 },
            write("half full", 50.0, 50.0),
        ],
    );
    let cached =
        |i: usize| (r[i].phase.as_ref().unwrap().counters.slc_write_units * UNIT_BYTES) as f64;
    let (empty, half) = (cached(1), cached(3));
    assert_close(
        "cache of the empty drive (static + share x free / bits)",
        empty,
        fixed + dynamic,
        0.05,
    );
    assert_close(
        "half-full / empty cache",
        half / empty,
        (fixed + dynamic / 2.0) / (fixed + dynamic),
        0.05,
    );
}

/// Seconds of host idle time after which the drive's SLC cache starts folding.
fn idle_fold_delay_s(cfg: &DriveConfig) -> f64 {
    cfg.ftl
        .slc_cache
        .as_ref()
        .and_then(|c| c.idle_fold_delay_s)
        .expect("a cache that folds while idle")
}

/// Die time to fold one page of cached data: read it in pSLC mode and move it out, move it into a
/// native page and program it; a pSLC block's erase is shared by its pages.
fn fold_page_ns(cfg: &DriveConfig, d: &Drive) -> f64 {
    let (t, l) = (d.ftl().op_times(), d.layout());
    let pslc_pages = f64::from(l.programs_per_block / cfg.geometry.cell.bits());
    cfg.timing.pslc_read_us * 1e3
        + 2.0 * l.t_xfer_program.ns() as f64
        + t.mean_program_ns()
        + l.t_erase.ns() as f64 / pslc_pages
}

#[test]
fn in_cache_and_post_cache_speeds_are_the_pslc_and_native_rates_over_the_dies() {
    for preset in ["tlc-dynamic-cache", "qlc-hybrid-cache"] {
        let cfg = exact(preset);
        let s = saturation(&cfg, &Saturation::default());
        let d = Drive::new(&cfg, 1).unwrap();
        let (t, xfer) = (d.ftl().op_times(), d.layout().t_xfer_program.ns() as f64);
        let pslc = rate_mb_s(&d, t.mean_pslc_program_ns() + xfer);
        let native = rate_mb_s(&d, t.mean_program_ns() + xfer);
        let r = cfg.ftl.slc_cache.as_ref().unwrap().fold_while_writing;
        let cache = s.cache_gb.expect("a cliff");
        let points = |lo: f64, hi: f64| {
            median(
                s.curve
                    .iter()
                    .filter(|p| p.gb_written > lo && p.gb_written < hi)
                    .map(|p| p.mb_s)
                    .collect(),
            )
        };
        assert_close(
            &format!("{preset} in cache"),
            points(0.0, cache),
            pslc,
            0.02,
        );
        if r == 0.0 {
            // Between the cliff and the fold phase the host writes straight to native blocks.
            let after = points(cache + 0.5, 0.6 * s.written_gb);
            assert_close(&format!("{preset} after the cache"), after, native, 0.02);
            continue;
        }
        // Folding while writing: each native host page is followed by r pages of folding until
        // the cached data (folded r per host unit) is gone, then the host has the native rate.
        let drained = rate_mb_s(&d, t.mean_program_ns() + xfer + r * fold_page_ns(&cfg, &d));
        let fold_end = cache + s.slc_written_gb / r;
        assert!(
            fold_end < 0.8 * s.written_gb,
            "the fold ends at {fold_end} GB"
        );
        let (span, gap) = (fold_end - cache, 0.05 * s.written_gb);
        assert_close(
            &format!("{preset} after the cache, folding"),
            points(cache + 0.1 * span, fold_end - 0.1 * span),
            drained,
            0.02,
        );
        assert_close(
            &format!("{preset} once the cache is folded"),
            points(fold_end + gap, s.written_gb - gap),
            native,
            0.02,
        );
        // All of the cache was folded while the host wrote: nothing was left for GC.
        assert_close("folded / cached", s.folded_gb / s.slc_written_gb, 1.0, 0.01);
    }
}

#[test]
fn a_fuller_drive_has_a_smaller_cache_and_past_the_floor_only_the_static_part() {
    // The QLC preset's dynamic part is `share` of the free space beyond `floor` % of the drive.
    let cfg = drive("qlc-hybrid-cache");
    let c = cfg.ftl.slc_cache.clone().unwrap();
    assert!(c.dynamic_floor_pct > 0.0 && c.static_pct > 0.0);
    let gb = |pct: f64| CAPACITY as f64 * pct / 100.0 / 1e9;
    let expected = |full: f64| {
        gb(c.static_pct) + c.dynamic_share * gb(100.0 - full - c.dynamic_floor_pct).max(0.0) / 4.0
    };
    for full in [0.0, 50.0, 90.0] {
        let s = saturation(
            &cfg,
            &Saturation {
                prefill_pct: full,
                ..Saturation::default()
            },
        );
        assert!((s.prefill_pct - full).abs() < 1e-12);
        assert_close(
            &format!("cache at {full} % full"),
            s.slc_written_gb,
            expected(full),
            0.04,
        );
        let cliff = s.cache_gb.expect("a cliff");
        assert_close(
            &format!("cliff at {full} % full"),
            cliff,
            expected(full),
            0.08,
        );
    }
}

#[test]
fn a_pause_ends_folding_while_writing_and_the_cache_takes_writes_again() {
    let cfg = drive("tlc-dynamic-cache");
    let delay = idle_fold_delay_s(&cfg);
    let (_, r) = run(
        &cfg,
        &[
            Step::SecureErase,
            write("past the cache", 0.0, 20.0),
            write("draining", 20.0, 5.0),
            Step::Idle {
                seconds: delay + 0.1,
            },
            write("after a pause", 25.0, 5.0),
        ],
    );
    let phase = |i: usize| r[i].phase.as_ref().unwrap().counters;
    assert!(phase(1).slc_folded_units > 0, "folding while writing");
    assert_eq!(
        phase(2).slc_write_units,
        0,
        "a draining drive caches nothing"
    );
    assert!(phase(2).slc_folded_units > 0, "and keeps folding");
    assert!(
        phase(4).slc_write_units > 0,
        "after a pause the cache takes host data again"
    );
}

#[test]
fn idle_time_folds_the_cache_at_the_folding_rate_and_restores_it() {
    let mut cfg = exact("tlc-dynamic-cache");
    // Only idle folding here (folding while writing has its own test).
    cfg.ftl.slc_cache.as_mut().unwrap().fold_while_writing = 0.0;
    let delay = idle_fold_delay_s(&cfg);
    let idle = 0.5;
    let (d, r) = run(
        &cfg,
        &[
            Step::SecureErase,
            write("past the cache", 0.0, 30.0),
            Step::Idle {
                seconds: delay + idle,
            },
            write("after idle", 30.0, 30.0),
        ],
    );
    let before = r[1].counters_after.slc_folded_units;
    assert_eq!(before, 0, "nothing folds while free space lasts");
    let folded = (r[2].counters_after.slc_folded_units - before) as f64;
    let expected = rate_mb_s(&d, fold_page_ns(&cfg, &d)) * 1e6 * idle / UNIT_BYTES as f64;
    assert_close("units folded while idle", folded, expected, 0.03);
    // The folded blocks came back as cache: the next write goes to pSLC blocks again.
    let again = r[3].phase.as_ref().unwrap().counters.slc_write_units as f64;
    assert!(
        again > 0.3 * folded,
        "the write after idle cached {again} units after {folded} were folded"
    );
}

#[test]
fn folded_data_counts_in_write_amplification() {
    let s = saturation(&drive("tlc-dynamic-cache"), &Saturation::default());
    assert!(
        s.folded_gb > 0.05 * s.written_gb,
        "a whole-drive write folds part of its cache: {} GB of {}",
        s.folded_gb,
        s.written_gb
    );
    // A sequential fill of a fresh drive copies nothing but folded data.
    assert_close(
        "WA of the whole-drive write",
        s.write_amplification,
        1.0 + s.folded_gb / s.written_gb,
        0.002,
    );
}

#[test]
fn without_the_cache_the_whole_drive_write_runs_at_the_native_rate() {
    let mut cfg = exact("tlc-dynamic-cache");
    cfg.ftl.slc_cache = None;
    let s = saturation(&cfg, &Saturation::default());
    let d = Drive::new(&cfg, 1).unwrap();
    let native = rate_mb_s(
        &d,
        d.ftl().op_times().mean_program_ns() + d.layout().t_xfer_program.ns() as f64,
    );
    assert_eq!(s.cache_gb, None, "no cliff without a cache");
    assert!(s.slc_written_gb == 0.0 && s.folded_gb == 0.0, "{s:?}");
    assert_close("whole-drive write", s.mb_s_average, native, 0.02);
    assert_close("write amplification", s.write_amplification, 1.0, 1e-9);
}

#[test]
fn random_saturation_also_hits_the_cliff_and_runs_are_reproducible() {
    let cfg = drive("qlc-hybrid-cache");
    let p = Saturation {
        pattern: Pattern::Random,
        idle_minutes: 1.0,
        ..Saturation::default()
    };
    let a = saturation(&cfg, &p);
    let b = saturation(&cfg, &p);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    let cache = a.cache_gb.expect("a cliff");
    let expected = {
        let c = cfg.ftl.slc_cache.as_ref().unwrap();
        CAPACITY as f64
            * (c.static_pct / 100.0 + c.dynamic_share * (1.0 - c.dynamic_floor_pct / 100.0) / 4.0)
            / 1e9
    };
    assert_close("random write's cache", cache, expected, 0.10);
    // After idle on the full drive only the static part comes back.
    let recovered = a.recovered_gb.unwrap();
    assert!(recovered > 0.0 && recovered < 0.3 * cache, "{recovered} GB");
}
