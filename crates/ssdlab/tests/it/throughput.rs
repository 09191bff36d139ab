//! Clean-state IOPS against what NAND timing and parallelism allow.

use ssdlab::scenario::{run_steps, Step};
use ssdlab::{presets, Drive, Workload};

#[test]
fn clean_random_write_iops_reaches_the_nand_ceiling() {
    let cfg = presets::get("mlc-256").unwrap();
    let mut drive = Drive::new(&cfg, 3).unwrap();
    let bound = drive.layout().clean_write_iops_bound();
    // Planes x units per page / (tPROG + transfer): 32 dies x 4 units / 1.382 ms.
    assert!((bound - 92_600.0).abs() < 500.0, "bound {bound}");
    let steps = [
        Step::SecureErase,
        Step::Run {
            workload: Workload {
                duration_s: Some(5.0),
                ..Workload::default()
            },
        },
    ];
    let results = run_steps(&mut drive, &steps, 3, &mut |_, _| true).unwrap();
    let ios = results[1].phase.as_ref().unwrap().series.total_ios();
    // Skip the first second (buffer fill) and the tail after 5 s; every other second runs at the ceiling.
    for (s, &n) in ios.iter().enumerate().take(5).skip(1) {
        let n = n as f64;
        assert!(
            n <= bound * 1.001 && n >= bound * 0.97,
            "second {s}: {n} IOPS vs bound {bound:.0}"
        );
    }
}

#[test]
fn clean_iops_scale_with_dies_and_not_with_capacity() {
    let full = presets::get("mlc-256").unwrap();
    let bound = |cfg: &ssdlab::DriveConfig| {
        Drive::new(cfg, 1)
            .unwrap()
            .layout()
            .clean_write_iops_bound()
    };
    // The capacity rule keeps the dies: a 32 GB drive has the 256 GB drive's clean ceiling.
    let small = full.with_user_capacity(32_000_000_000).unwrap();
    assert!((bound(&full) / bound(&small) - 1.0).abs() < 0.001);
    // A quarter of the dies, a quarter of the ceiling.
    let mut fewer = full.clone();
    fewer.geometry.dies_per_channel = 1;
    assert!((bound(&full) / bound(&fewer) - 4.0).abs() < 0.01);
}

#[test]
fn queue_depth_one_is_bounded_by_one_program_at_a_time() {
    // At QD1 with a write buffer, writes still complete at buffer speed; reads at QD1 see one die
    // read (tR + transfer) each.
    let cfg = presets::get("mlc-256")
        .unwrap()
        .with_user_capacity(2 << 30)
        .unwrap();
    let mut drive = Drive::new(&cfg, 3).unwrap();
    let steps = [
        Step::SecureErase,
        Step::Run {
            workload: Workload {
                pattern: ssdlab::Pattern::Sequential,
                block_bytes: 1 << 20,
                ..Workload::default()
            },
        },
        // Let the buffered fill data reach NAND first.
        Step::Idle { seconds: 1.0 },
        Step::Run {
            workload: Workload {
                rw: ssdlab::Rw::Read,
                queue_depth: 1,
                io_limit: Some(10_000),
                ..Workload::default()
            },
        },
    ];
    let results = run_steps(&mut drive, &steps, 3, &mut |_, _| true).unwrap();
    let read = results[3].phase.as_ref().unwrap();
    let lat = read.latency[0].as_ref().unwrap();
    let l = drive.layout();
    let expected = (l.t_command + l.t_read + l.t_xfer_unit).ns() as f64 + 4096.0 / 600e6 * 1e9;
    assert!(
        (lat.mean_ns / expected - 1.0).abs() < 0.02,
        "mean read latency {} vs {expected}",
        lat.mean_ns
    );
}
