//! The performance-consistency test shows the burst, the cliff and a steady state, and spare
//! area raises the steady state and lowers WA.

use ssdlab::scenario::{run_steps, Consistency, ConsistencySummary};
use ssdlab::{presets, Drive};

fn run(spare: f64, duration: f64) -> ConsistencySummary {
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
    test.summarize(results[2].phase.as_ref().unwrap())
}

#[test]
fn the_burst_falls_off_a_cliff_into_a_steady_state() {
    let s = run(0.0, 900.0);
    assert!(
        s.iops_clean > 4.0 * s.iops_steady_mean,
        "clean {} vs steady {}",
        s.iops_clean,
        s.iops_steady_mean
    );
    // Steady-state WA near greedy theory at the drive's OP and block size (a 4 GiB drive of the
    // default design has 4-page blocks of 16 units: about 5.1), a little above it because bad
    // blocks and the GC reserve take some of the spare area.
    let cfg = presets::get("mlc-256")
        .unwrap()
        .with_user_capacity(4 << 30)
        .unwrap();
    let b = f64::from(cfg.validate().unwrap().units_per_block);
    let theory = ssdlab::theory::wa_greedy(1.0 + cfg.ftl.op, b);
    let ratio = s.steady_write_amplification / theory;
    assert!(
        (0.95..1.2).contains(&ratio),
        "steady WA {} vs greedy theory {theory:.2} at b = {b}",
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
