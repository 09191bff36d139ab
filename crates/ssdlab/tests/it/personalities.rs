//! Each firmware personality shows what its seed article observed (issue 3; calibration in
//! docs/calibration.md). Drives are 16 GB: the capacity rule keeps the dies and makes them
//! smaller, so the drive keeps its IOPS and a minute of writes covers 16 times more of it; the
//! procedures' minutes are scaled by the capacity (`minutes`) so each step writes the same share
//! of the drive as on 256 GB.

use ssdlab::scenario::{
    run_steps, Consistency, ConsistencySummary, HdTachSummary, Procedure, Torture, UsedVsNew,
    WorstCaseWa,
};
use ssdlab::{presets, Drive};

const GB16: u64 = 16_000_000_000;
const GB32: u64 = 32_000_000_000;

/// The 256 GB procedure's `m` minutes on the 16 GB drive: the same share of the drive written.
fn minutes(m: f64) -> f64 {
    m * GB16 as f64 / 256e9
}

fn drive(preset: &str) -> Drive {
    let cfg = presets::get(preset)
        .unwrap()
        .with_user_capacity(GB16)
        .unwrap();
    Drive::new(&cfg, 7).unwrap()
}

fn consistency(preset: &str, spare: f64) -> (ConsistencySummary, Vec<u64>) {
    consistency_at(preset, spare, GB16)
}

fn consistency_at(preset: &str, spare: f64, capacity: u64) -> (ConsistencySummary, Vec<u64>) {
    let (s, ios, _) = consistency_nand(preset, spare, capacity);
    (s, ios)
}

/// Also the busiest second's NAND units over what the dies can program in a second.
fn consistency_nand(
    preset: &str,
    spare: f64,
    capacity: u64,
) -> (ConsistencySummary, Vec<u64>, f64) {
    let cfg = presets::get(preset)
        .unwrap()
        .with_user_capacity(capacity)
        .unwrap();
    let mut d = Drive::new(&cfg, 7).unwrap();
    let c = Consistency {
        spare_area_pct: spare,
        duration_s: 900.0,
        ..Consistency::default()
    };
    let steps = c.steps(d.user_bytes()).unwrap();
    let r = run_steps(&mut d, &steps, 7, &mut |_, _| true).unwrap();
    let p = r[2].phase.as_ref().unwrap();
    let mut ios = p.series.total_ios();
    ios.truncate(900);
    let l = d.layout();
    let fastest = d.ftl().op_times().min_program_ns() + l.t_xfer_program.ns() as f64;
    let most = f64::from(l.dies) * f64::from(l.units_per_program) * 1e9 / fastest;
    let peak = p.series.nand_units.iter().copied().max().unwrap_or(0) as f64;
    (c.summarize(p), ios, peak / most)
}

fn torture(preset: &str, t: &Torture) -> HdTachSummary {
    let mut d = drive(preset);
    let steps = t.steps(d.user_bytes()).unwrap();
    let r = run_steps(&mut d, &steps, 7, &mut |_, _| true).unwrap();
    d.ftl().check_invariants().unwrap();
    t.summarize(&r, d.user_bytes()).hdtach
}

/// Percent of clean of the pass whose name starts with `prefix` (and holds `also`).
fn pct(s: &HdTachSummary, prefix: &str, also: &str) -> f64 {
    let p = s
        .passes
        .iter()
        .find(|p| p.name.starts_with(prefix) && p.name.contains(also))
        .unwrap_or_else(|| panic!("no pass {prefix}..{also}: {s:?}"));
    p.pct_of_clean.unwrap()
}

#[test]
fn clean_up_later_stalls_to_zero_iops_on_a_full_drive_with_a_line_between() {
    // Batches last as long as cleaning a few whole victims per die: seconds on 2 MiB blocks, so
    // this one runs at 128 GB (blocks of 128 pages); on a 16 GB drive's 17-page blocks a batch
    // takes a fifth of a second and no whole second drops to 0.
    let (_, ios, load) = consistency_nand("clean-up-later", 0.0, 128_000_000_000);
    let zeros = ios[100..].iter().filter(|&&n| n == 0).count();
    assert!(zeros > 50, "expected many 0-IOPS seconds, got {zeros}");
    // The other seconds scatter (seed 003: a line "at ~7K IOPS"): no non-zero value on more than
    // 5 % of the seconds. A batch that freed one block per die, then let the host write it at
    // full speed, put a third of the seconds at exactly dies x 1024 IOPS.
    let tail = &ios[300..];
    let mut counts = std::collections::BTreeMap::new();
    for &n in tail.iter().filter(|&&n| n > 0) {
        *counts.entry(n).or_insert(0usize) += 1;
    }
    let plateau = counts.values().copied().max().unwrap_or(0) as f64 / tail.len() as f64;
    assert!(
        plateau <= 0.05,
        "{:.1} % of seconds share one IOPS value",
        100.0 * plateau
    );
    // The other line (seed 003: "one at ~7K IOPS and the other at 0 IOPS"): between stalls a
    // die copies a fixed budget per host write, so most non-zero seconds sit at 4-12K. Without
    // the budget the lazy share of the break-even copies lets the host write at ~20K between
    // stalls.
    let nonzero: Vec<u64> = tail.iter().copied().filter(|&n| n > 0).collect();
    let in_band = nonzero
        .iter()
        .filter(|&&n| (4_000..=12_000).contains(&n))
        .count() as f64
        / nonzero.len() as f64;
    assert!(
        in_band >= 0.6,
        "{:.0} % of non-zero seconds within 4-12K IOPS",
        100.0 * in_band
    );
    // A batch books seconds of GC at once; the series counts it in the seconds the dies do it.
    assert!(
        load <= 1.0,
        "a second with {load:.2} x the NAND's program bandwidth"
    );
}

#[test]
fn clean_up_later_with_25_percent_spare_area_never_stops() {
    // Seed 003: with 25 % spare area "the minimum IOPS is now over 20K (no more sudden 0 IOPS
    // drops)". The victims then need fewer copies than the budget between stalls, so the pool
    // refills and no batch stalls the host. At 128 GB, whose blocks are large enough for a
    // batch to take a good part of a second (see above). "The drop is only 5K IOPS": the steady minimum stays within 80 % of
    // the mean. Without the budget a batch every few seconds takes part of a second (minimum
    // ~60 % of the mean here, and a few 0-IOPS seconds after the burst at 256 GB).
    let (s, ios) = consistency_at("clean-up-later", 25.0, 128_000_000_000);
    assert_eq!(ios.iter().filter(|&&n| n == 0).count(), 0, "{s:?}");
    assert!(s.iops_steady_min >= 20_000, "{s:?}");
    assert!(
        s.iops_steady_min as f64 >= 0.8 * s.iops_steady_mean,
        "{s:?}"
    );
}

#[test]
fn active_gc_keeps_the_steady_state_consistent() {
    let (active, ios) = consistency("active-gc", 0.0);
    assert!(
        ios.iter().all(|&n| n > 0),
        "active GC never stalls to 0 IOPS"
    );
    let window = &ios[active.zoom_start_s as usize..];
    let mean = window.iter().sum::<u64>() as f64 / window.len() as f64;
    let sd = (window
        .iter()
        .map(|&n| (n as f64 - mean).powi(2))
        .sum::<f64>()
        / window.len() as f64)
        .sqrt();
    assert!(sd / mean < 0.25, "steady-state spread {:.2}", sd / mean);
    // Neutron / Extreme II (seed 001): the steady minimum within 80 % of the mean.
    let min = *window.iter().min().unwrap() as f64;
    assert!(min >= 0.8 * mean, "steady min {min} vs mean {mean:.0}");
    // The on-demand drive of the same size does not stall either (incremental GC), but spreads
    // wider.
    let (od, ios) = consistency("no-idle-gc", 0.0);
    assert!(ios[od.burst_s as usize..].iter().all(|&n| n > 0));
    let w = &ios[od.zoom_start_s as usize..];
    let m = w.iter().sum::<u64>() as f64 / w.len() as f64;
    let sd_od = (w.iter().map(|&n| (n as f64 - m).powi(2)).sum::<f64>() / w.len() as f64).sqrt();
    assert!(
        sd_od / m > sd / mean,
        "on-demand spread {:.3} vs active {:.3}",
        sd_od / m,
        sd / mean
    );
}

/// The `m`-minute torture of the review (fill, random writes), then the passes and idle periods
/// of `then` ("pass" or "idle:MINUTES", minutes of the 256 GB procedure), without TRIM; the
/// firmware's fixed wait before idle GC is added to idle periods, not scaled.
/// The HD Tach sequences run at 32 GB: on 16 GB drives' 17-page blocks a foreground GC run is
/// too short to show the 256 GB drive's recovery (20 minutes of torture cost as much as 60).
fn review(preset: &str, m: f64, pass_after: bool, idle: f64, then: &[&str]) -> HdTachSummary {
    let minutes = |x: f64| x * GB32 as f64 / 256e9;
    let delay = presets::get(preset)
        .unwrap()
        .ftl
        .idle_gc
        .map_or(0.0, |g| g.delay_s / 60.0);
    let scaled = |i: f64| minutes(i) + delay;
    let t = Torture {
        torture_minutes: minutes(m),
        pass_after_torture: pass_after,
        idle_minutes: if idle > 0.0 { scaled(idle) } else { 0.0 },
        then: then
            .iter()
            .map(|a| match a.strip_prefix("idle:") {
                Some(i) => format!("idle:{}", scaled(i.parse().unwrap())),
                None => (*a).to_string(),
            })
            .collect(),
        trim: false,
        ..Torture::default()
    };
    let cfg = presets::get(preset)
        .unwrap()
        .with_user_capacity(GB32)
        .unwrap();
    let mut d = Drive::new(&cfg, 7).unwrap();
    let steps = t.steps(d.user_bytes()).unwrap();
    let r = run_steps(&mut d, &steps, 7, &mut |_, _| true).unwrap();
    d.ftl().check_invariants().unwrap();
    t.summarize(&r, d.user_bytes()).hdtach
}

/// Percent of clean of the `i`-th pass and its lowest position's.
fn nth(s: &HdTachSummary, i: usize) -> (f64, f64) {
    let p = &s.passes[i];
    (
        p.pct_of_clean.unwrap(),
        100.0 * p.min_mb_s / s.passes[0].avg_mb_s,
    )
}

#[test]
fn no_idle_gc_recovers_pass_by_pass_like_the_performance_pro() {
    // Seed 002: 171.6 MB/s after 20 min of torture (as low as ~60), 57.4 MB/s after 60 min; a
    // pass then 40 min idle "much better"; a third pass after two hours "almost back to new".
    let (p20, low20) = nth(&review("no-idle-gc", 20.0, true, 0.0, &[]), 1);
    assert!(
        (40.0..=60.0).contains(&p20) && low20 <= 30.0,
        "20 min: {p20:.1} %, low {low20:.1} %"
    );
    let s = review("no-idle-gc", 60.0, true, 40.0, &["idle:120", "pass"]);
    let (p60, _) = nth(&s, 1);
    assert!((10.0..=25.0).contains(&p60), "60 min: {p60:.1} %");
    let (p2, _) = nth(&s, 2);
    assert!(
        p2 >= p60 + 10.0 && p2 < 95.0,
        "pass, 40 min idle: {p2:.1} % after {p60:.1} %"
    );
    let (p3, _) = nth(&s, 3);
    assert!(p3 >= 90.0, "third pass after 2 h idle: {p3:.1} %");
    // Idle time alone changes nothing (seed 002: "around 4MB/s difference"): within 3 points at
    // 256 GB (the scorecard: -1.4). At 32 GB a pass holds only ~3 GC runs, and the GC pace varies
    // with the host data written (gc.rs, RunPaces), so whether the runs start at the pass's start
    // (no idle) or after a fast stretch (idle let them finish) meets other paces: 9 points here.
    let (idle, _) = nth(&review("no-idle-gc", 60.0, false, 40.0, &[]), 1);
    assert!(
        (idle - p60).abs() < 12.0,
        "40 min idle without a pass: {idle:.1} % vs {p60:.1} %"
    );
}

#[test]
fn idle_gc_recovers_in_the_reviews_order_and_no_idle_gc_does_not() {
    // Seed 000, in the review's order (torture, pass, 30 min idle, pass): > 90 % after 20 min of
    // torture, > 70 % after 60 min; the drive without idle GC stays well below.
    let (q20, _) = nth(&review("idle-gc", 20.0, true, 30.0, &[]), 2);
    assert!(q20 >= 90.0, "idle-gc, 20 min: {q20:.1} %");
    let (q60, _) = nth(&review("idle-gc", 60.0, true, 30.0, &[]), 2);
    let (o60, _) = nth(&review("no-idle-gc", 60.0, true, 30.0, &[]), 2);
    assert!(q60 >= 70.0, "idle-gc, 60 min: {q60:.1} %");
    assert!(
        q60 >= o60 + 10.0,
        "idle-gc {q60:.1} % vs no-idle-gc {o60:.1} %"
    );
}

#[test]
fn trim_restores_every_preset_to_near_clean() {
    for preset in presets::names() {
        let t = Torture {
            torture_minutes: minutes(10.0),
            pass_after_torture: false,
            idle_minutes: 0.0,
            ..Torture::default()
        };
        let s = torture(preset, &t);
        // A drive with an SLC cache writes its clean pass at pSLC speed into pre-erased blocks.
        // After TRIM it first waits for the GC work the torture booked ahead (the dies are busy
        // for about half a second), then erases each trimmed pSLC block as it reuses it: one
        // erase per 1 / bits of a block's data, ~30 % of a QLC pSLC program's time (TLC 93 % of
        // clean, QLC 85 %; with a minute of idle time before the TRIM, TLC 96 %).
        let cached = presets::get(preset).unwrap().ftl.slc_cache.is_some();
        let floor = if cached { 80.0 } else { 95.0 };
        assert!(pct(&s, "after TRIM", "") > floor, "{preset}: {s:?}");
    }
}

#[test]
fn compressible_data_gives_wa_below_one_on_the_compressing_drive() {
    let run = |preset: &str, c: f64| {
        let w = WorstCaseWa {
            torture_minutes: minutes(10.0),
            compressibility: c,
        };
        let mut d = drive(preset);
        let steps = w.steps(d.user_bytes()).unwrap();
        let r = run_steps(&mut d, &steps, 7, &mut |_, _| true).unwrap();
        w.summarize(&r, d.user_bytes())
    };
    let compressible = run("compressing", 0.3);
    assert!(compressible.write_amplification < 1.0, "{compressible:?}");
    // The speed-ratio estimate misses it: it stays near or above 1.
    assert!(compressible.speed_ratio_estimate.unwrap() > 0.9);
    let incompressible = run("compressing", 1.0);
    assert!(
        incompressible.write_amplification > 1.5,
        "{incompressible:?}"
    );
    // A non-compressing drive ignores compressibility.
    assert!(run("mlc-256", 0.3).write_amplification > 3.0);
}

#[test]
fn a_used_drive_writes_slower_and_trim_makes_it_new_again() {
    // Seed 004: 13.1 / 6.93 / 12.9 MB/s (100 / 53 / 98 %). The 256 GB test (8 GB for 180 s)
    // scaled to a 32 GB drive: the same share of the drive, written for the same share of time.
    let u = UsedVsNew {
        test_span_bytes: (8e9 * GB32 as f64 / 256e9) as u64 / 4096 * 4096,
        duration_s: 180.0 * GB32 as f64 / 256e9,
        ..UsedVsNew::default()
    };
    let drive = |p: &str| {
        let cfg = presets::get(p).unwrap().with_user_capacity(GB32).unwrap();
        Drive::new(&cfg, 7).unwrap()
    };
    let mut d = drive("mlc-256");
    let steps = u.steps(d.user_bytes()).unwrap();
    let r = run_steps(&mut d, &steps, 7, &mut |_, _| true).unwrap();
    let s = u.summarize(&r, d.user_bytes());
    let mb = |state: &str| s.states.iter().find(|x| x.state == state).unwrap().mb_s;
    let (used, trimmed) = (
        mb("used") / mb("clean"),
        mb("used after TRIM") / mb("clean"),
    );
    assert!(
        (0.35..=0.75).contains(&used),
        "used {used:.2} of clean: {s:?}"
    );
    // 0.95 at 256 GB (the scorecard); the 32 GB test's 22.5 s leave TRIM's first seconds more
    // weight.
    assert!(trimmed >= 0.9, "after TRIM {trimmed:.2} of clean: {s:?}");
    // Without the install's random writes the spare area absorbs the test: "used" looks new.
    let plain = UsedVsNew {
        os_rewrite_pct: 0.0,
        ..u
    };
    let mut d = drive("mlc-256");
    let steps = plain.steps(d.user_bytes()).unwrap();
    let r = run_steps(&mut d, &steps, 7, &mut |_, _| true).unwrap();
    let s0 = plain.summarize(&r, d.user_bytes());
    let used0 = s0.states[1].mb_s / s0.states[0].mb_s;
    assert!(
        used0 > used + 0.15,
        "without the rewrite {used0:.2}, with it {used:.2}"
    );
}

#[test]
fn the_enterprise_drive_holds_a_steady_state_its_spare_area_sets() {
    // Intel D7-P5600 1.6 TB (37 % OP): up to 260K 4 KiB random-write IOPS; the D7-P5500, the same
    // drive at 1.92 TB (14.5 % OP): up to 130K (docs/calibration.md).
    let run = |op: Option<f64>| {
        let mut cfg = presets::get("tlc-enterprise").unwrap();
        if let Some(op) = op {
            cfg.ftl.op = op;
        }
        let cfg = cfg.with_user_capacity(GB16).unwrap();
        assert!(cfg.ftl.slc_cache.is_none(), "no SLC cache");
        let mut d = Drive::new(&cfg, 7).unwrap();
        let c = Consistency {
            duration_s: 300.0,
            ..Consistency::default()
        };
        let steps = c.steps(d.user_bytes()).unwrap();
        let r = run_steps(&mut d, &steps, 7, &mut |_, _| true).unwrap();
        c.summarize(r[2].phase.as_ref().unwrap())
    };
    let p5600 = run(None);
    let p5500 = run(Some(0.145_464_422_4));
    for s in [&p5600, &p5500] {
        // Consistent: background GC keeps every second within 10 % of the steady mean.
        assert!(
            s.iops_steady_min as f64 >= 0.9 * s.iops_steady_mean,
            "{s:?}"
        );
    }
    let err = p5600.iops_steady_mean / 260_000.0 - 1.0;
    assert!(err.abs() < 0.08, "P5600 class: {p5600:?}");
    // The spare area sets the steady state: less OP, more WA, fewer IOPS (Intel: half).
    let ratio = p5600.iops_steady_mean / p5500.iops_steady_mean;
    assert!((1.8..2.6).contains(&ratio), "{ratio}: {p5500:?}");
    assert!(p5500.steady_write_amplification > 2.0 * p5600.steady_write_amplification * 0.9);
}
