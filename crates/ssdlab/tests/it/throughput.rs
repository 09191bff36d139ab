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

/// `reads` on a 2 GiB `mlc-256` filled sequentially, after a second of idle that lets the
/// buffered fill reach NAND: the drive and the reads' phase.
fn after_a_fill(reads: Workload, seed: u64) -> (Drive, ssdlab::PhaseResult) {
    let cfg = presets::get("mlc-256")
        .unwrap()
        .with_user_capacity(2 << 30)
        .unwrap();
    let mut drive = Drive::new(&cfg, seed).unwrap();
    let steps = [
        Step::SecureErase,
        Step::Run {
            workload: Workload {
                pattern: ssdlab::Pattern::Sequential,
                block_bytes: 1 << 20,
                ..Workload::default()
            },
        },
        Step::Idle { seconds: 1.0 },
        Step::Run { workload: reads },
    ];
    let mut results = run_steps(&mut drive, &steps, seed, &mut |_, _| true).unwrap();
    let phase = results.swap_remove(3).phase.unwrap();
    (drive, phase)
}

#[test]
fn queue_depth_one_is_bounded_by_one_program_at_a_time() {
    // At QD1 with a write buffer, writes still complete at buffer speed; reads at QD1 see one die
    // read (tR + transfer) each.
    let (drive, read) = after_a_fill(
        Workload {
            rw: ssdlab::Rw::Read,
            queue_depth: 1,
            io_limit: Some(10_000),
            ..Workload::default()
        },
        3,
    );
    let lat = read.latency[0].as_ref().unwrap();
    let l = drive.layout();
    let expected = (l.t_command + l.t_read + l.t_xfer_unit).ns() as f64 + 4096.0 / 600e6 * 1e9;
    assert!(
        (lat.mean_ns / expected - 1.0).abs() < 0.02,
        "mean read latency {} vs {expected}",
        lat.mean_ns
    );
}

/// Reads at `queue_depth` and `block_bytes` after [`after_a_fill`]: (IOPS, mean latency in ns),
/// from the two measured seconds.
fn read_run(queue_depth: u32, block_bytes: u64, pattern: ssdlab::Pattern) -> (f64, f64) {
    let (_, read) = after_a_fill(
        Workload {
            rw: ssdlab::Rw::Read,
            pattern,
            block_bytes,
            queue_depth,
            duration_s: Some(2.0),
            ..Workload::default()
        },
        5,
    );
    let ios: u64 = read.series.total_ios().iter().take(2).sum();
    (ios as f64 / 2.0, read.latency[0].as_ref().unwrap().mean_ns)
}

#[test]
fn queued_reads_overlap_on_the_dies_up_to_the_link() {
    // A read holds the link's return direction only while its data crosses: the reads queued
    // behind it reach their dies at once. 4 KiB random reads at QD32 over 32 dies are bounded by
    // the link (600 MB/s / 4 KiB = 146K IOPS), not by one die read at a time (QD1: ~12.8K).
    let link_iops = 600e6 / 4096.0;
    let (qd1, _) = read_run(1, 4096, ssdlab::Pattern::Random);
    let (qd32, lat32) = read_run(32, 4096, ssdlab::Pattern::Random);
    assert!(qd1 > 11_000.0 && qd1 < 14_000.0, "QD1 {qd1:.0} IOPS");
    assert!(
        qd32 > 0.9 * link_iops && qd32 <= 1.001 * link_iops,
        "QD32 {qd32:.0} IOPS vs link {link_iops:.0}"
    );
    // Little's law: 32 in flight = IOPS x mean latency.
    let in_flight = qd32 * lat32 / 1e9;
    assert!(
        (in_flight / 32.0 - 1.0).abs() < 0.03,
        "in flight {in_flight:.2}"
    );
    // 128 KiB sequential reads at QD32 fill the link.
    let (seq, _) = read_run(32, 128 << 10, ssdlab::Pattern::Sequential);
    let mb_s = seq * 131_072.0 / 1e6;
    assert!(
        mb_s > 0.97 * 600.0 && mb_s <= 600.5,
        "sequential reads {mb_s:.1} MB/s"
    );
}
