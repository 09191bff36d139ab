//! Request-stream features used by fio job files and the HD Tach pass.

use ssdlab::scenario::{run_steps, Step};
use ssdlab::workload::{SteadyCriterion, SteadyMetric, SteadyState};
use ssdlab::{presets, Drive, Pattern, Rw, Workload, UNIT_BYTES};

fn drive() -> Drive {
    Drive::new(
        &presets::get("mlc-256")
            .unwrap()
            .with_user_capacity(2 << 30)
            .unwrap(),
        1,
    )
    .unwrap()
}

fn run(drive: &mut Drive, steps: &[Step]) -> Vec<ssdlab::scenario::StepResult> {
    run_steps(drive, steps, 1, &mut |_, _| true).unwrap()
}

#[test]
fn a_random_map_pass_writes_every_block_exactly_once() {
    let mut d = drive();
    let span = 64 << 20;
    let w = Workload {
        random_map: true,
        span_bytes: span,
        ..Workload::default()
    };
    run(&mut d, &[Step::SecureErase, Step::Run { workload: w }]);
    assert_eq!(d.ftl().mapping().mapped().count() as u64, span / UNIT_BYTES);
    // Drawing with replacement leaves about 1/e of the span unwritten.
    let mut d = drive();
    let w = Workload {
        random_map: false,
        span_bytes: span,
        ..Workload::default()
    };
    run(&mut d, &[Step::SecureErase, Step::Run { workload: w }]);
    let frac = d.ftl().mapping().mapped().count() as f64 / (span / UNIT_BYTES) as f64;
    assert!((frac - (1.0 - (-1.0f64).exp())).abs() < 0.01, "{frac}");
}

#[test]
fn trim_write_trims_then_writes_each_block() {
    let mut d = drive();
    let w = Workload {
        rw: Rw::TrimWrite,
        pattern: Pattern::Sequential,
        io_limit: Some(1000),
        ..Workload::default()
    };
    let r = run(&mut d, &[Step::Run { workload: w }]);
    let p = r[0].phase.as_ref().unwrap();
    assert_eq!(p.ios[1], 1000);
    assert_eq!(p.ios[2], 1000);
    assert_eq!(p.counters.trim_units, 1000);
}

#[test]
fn steady_state_detection_stops_a_steady_run_early() {
    let mut d = drive();
    let ss = SteadyState {
        metric: SteadyMetric::Iops,
        criterion: SteadyCriterion::Deviation,
        limit: 5.0,
        percent: true,
        window_s: 5.0,
        ramp_s: 2.0,
    };
    // Reads of a fresh drive are steady from the start.
    let w = Workload {
        rw: Rw::Read,
        duration_s: Some(100.0),
        steady_state: Some(ss),
        ..Workload::default()
    };
    let r = run(&mut d, &[Step::Run { workload: w }]);
    let p = r[0].phase.as_ref().unwrap();
    assert_eq!(p.steady_state_at_s, Some(7.0));
    assert!(((p.end_ns - p.start_ns) as f64 / 1e9) < 8.0);
}

#[test]
fn position_buckets_cover_a_sequential_pass() {
    let mut d = drive();
    let w = Workload {
        pattern: Pattern::Sequential,
        block_bytes: 128 << 10,
        position_buckets: 200,
        ..Workload::default()
    };
    let r = run(&mut d, &[Step::SecureErase, Step::Run { workload: w }]);
    let done = &r[1].phase.as_ref().unwrap().position_done_ns;
    assert_eq!(done.len(), 200);
    assert!(
        done.windows(2).all(|w| w[1] >= w[0]),
        "a sequential pass completes in position order"
    );
    assert!(done[0] > 0);
}

#[test]
fn requests_beyond_the_largest_command_are_refused() {
    let mut d = drive();
    let over = ssdlab::limits::MAX_BLOCK_BYTES + UNIT_BYTES;
    for w in [
        Workload {
            block_bytes: over,
            ..Workload::default()
        },
        Workload {
            block_range: Some([4096, over]),
            ..Workload::default()
        },
    ] {
        let err = run_steps(&mut d, &[Step::Run { workload: w }], 1, &mut |_, _| true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("a drive takes in one command"), "{err}");
    }
    // A duration below the clock's resolution would round to no time at all.
    let w = Workload {
        duration_s: Some(1e-30),
        ..Workload::default()
    };
    let err = run_steps(&mut d, &[Step::Run { workload: w }], 1, &mut |_, _| true)
        .unwrap_err()
        .to_string();
    assert!(err.contains("resolution"), "{err}");
    let w = Workload {
        block_bytes: ssdlab::limits::MAX_BLOCK_BYTES,
        io_limit: Some(4),
        ..Workload::default()
    };
    run(&mut d, &[Step::Run { workload: w }]);
}
