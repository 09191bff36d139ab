//! The performance-consistency test shows the burst, the cliff and a steady state, and spare
//! area raises the steady state and lowers WA.

use ssdlab::scenario::{run_steps, Consistency, ConsistencySummary};
use ssdlab::{presets, Drive};

fn run(spare: f64, duration: f64) -> ConsistencySummary {
    run_with_alpha(spare, duration).0
}

/// The consistency run on a 4 GiB default drive, with the spare factor greedy GC actually has:
/// the good blocks less the mean free pool and the two open blocks, over the user data (as in
/// `theory::measure_uniform_wa`).
fn run_with_alpha(spare: f64, duration: f64) -> (ConsistencySummary, f64) {
    let cfg = presets::get("mlc-256")
        .unwrap()
        .with_user_capacity(4 << 30)
        .unwrap();
    let mut drive = Drive::new(&cfg, 9).unwrap();
    let test = Consistency {
        spare_area_pct: spare,
        duration_s: duration,
        ..Consistency::default()
    };
    let steps = test.steps(drive.user_bytes()).unwrap();
    let results = run_steps(&mut drive, &steps, 9, &mut |_, _| true).unwrap();
    drive.ftl().check_invariants().unwrap();
    let phase = results[2].phase.as_ref().unwrap();
    let layout = drive.layout();
    let dies = f64::from(layout.dies);
    let blocks = f64::from(layout.total_blocks)
        - drive.ftl().bad_block_count() as f64
        - phase.counters.mean_free_blocks().unwrap_or(0.0)
        - 2.0 * dies;
    let alpha = blocks * f64::from(layout.units_per_block) / layout.user_units as f64;
    (test.summarize(phase), alpha)
}

#[test]
fn the_burst_falls_off_a_cliff_into_a_steady_state() {
    let (s, alpha) = run_with_alpha(0.0, 900.0);
    assert!(
        s.iops_clean > 4.0 * s.iops_steady_mean,
        "clean {} vs steady {}",
        s.iops_clean,
        s.iops_steady_mean
    );
    // Steady-state WA near greedy theory at the drive's block size (a 4 GiB drive of the default
    // design has 256 blocks of 32 pages, 128 units, per die) and at the spare greedy can use: the
    // nominal 7.4 % less bad blocks, the GC's free pool and the open blocks, which on 256 blocks
    // per die are a large share of the spare (nominal alpha 1.074, effective about 1.05).
    let cfg = presets::get("mlc-256")
        .unwrap()
        .with_user_capacity(4 << 30)
        .unwrap();
    let b = f64::from(cfg.validate().unwrap().units_per_block);
    assert!(alpha < 1.0 + cfg.ftl.op, "alpha_eff {alpha}");
    let theory = ssdlab::theory::wa_greedy(alpha, b);
    let ratio = s.steady_write_amplification / theory;
    assert!(
        (0.9..1.1).contains(&ratio),
        "steady WA {} vs greedy theory {theory:.2} at b = {b}, alpha_eff = {alpha:.4}",
        s.steady_write_amplification
    );
}

#[test]
fn spare_area_raises_steady_iops_and_lowers_wa() {
    let default = run(0.0, 900.0);
    let spare = run(25.0, 900.0);
    assert!(
        spare.iops_steady_mean > 2.5 * default.iops_steady_mean,
        "{} vs {}",
        spare.iops_steady_mean,
        default.iops_steady_mean
    );
    assert!(spare.steady_write_amplification < 0.4 * default.steady_write_amplification);
    // 25% spare area on a 7% drive: alpha = 1.43, greedy WA about 1.9.
    assert!(
        (1.6..2.3).contains(&spare.steady_write_amplification),
        "{}",
        spare.steady_write_amplification
    );
}
