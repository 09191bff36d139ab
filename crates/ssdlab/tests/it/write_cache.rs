//! The volatile write cache on (write-back) and off (write-through), and the phase's
//! response-time histogram.

use ssdlab::scenario::{run_steps, Step, StepResult};
use ssdlab::{presets, Drive, Pattern, Rw, Workload};

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

fn run(drive: &mut Drive, steps: &[Step]) -> Vec<StepResult> {
    run_steps(drive, steps, 1, &mut |_, _| true).unwrap()
}

fn qd1_writes(cache: bool, pattern: Pattern, block_bytes: u64) -> (Drive, StepResult) {
    let mut d = drive();
    let w = Workload {
        rw: Rw::Write,
        pattern,
        block_bytes,
        queue_depth: 1,
        io_limit: Some(2000),
        ..Workload::default()
    };
    let mut r = run(
        &mut d,
        &[
            Step::SecureErase,
            Step::WriteCache { enabled: cache },
            Step::Run { workload: w },
        ],
    );
    (d, r.pop().unwrap())
}

/// The fastest program the drive makes: the cheapest page type with the spread's low end.
fn fastest_program_ns(d: &Drive) -> f64 {
    let t = &d.config().timing;
    let factor = t
        .program_page_factors
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    t.program_us * factor * 1e3
}

#[test]
fn write_through_waits_for_the_program_and_write_back_for_the_buffer() {
    let (on_drive, on) = qd1_writes(true, Pattern::Random, 4096);
    let (off_drive, off) = qd1_writes(false, Pattern::Random, 4096);
    let (lat_on, lat_off) = (
        on.phase.as_ref().unwrap().latency[1].clone().unwrap(),
        off.phase.as_ref().unwrap().latency[1].clone().unwrap(),
    );
    let program = fastest_program_ns(&off_drive);
    // Write-back: the data only crosses the link into DRAM (tens of µs on an empty buffer).
    assert!(
        lat_on.mean_ns < 0.1 * program,
        "write-back mean {} ns against a {program} ns program",
        lat_on.mean_ns
    );
    // Write-through: no write completes before a page program does.
    assert!(
        lat_off.min_ns as f64 >= 0.5 * program && lat_off.mean_ns >= program,
        "write-through min {} mean {} ns against the fastest program {program} ns",
        lat_off.min_ns,
        lat_off.mean_ns
    );
    // Each 4 KiB write programs its own padded page: NAND units = host units × units per page.
    let per_page = u64::from(off_drive.layout().units_per_program);
    let c = off.phase.as_ref().unwrap().counters;
    assert!(per_page > 1);
    assert_eq!(c.nand_write_units, c.host_write_units * per_page);
    let c_on = on.phase.as_ref().unwrap().counters;
    assert!(c_on.nand_write_units <= c_on.host_write_units);
    assert!(on_drive.write_cache() && !off_drive.write_cache());
}

#[test]
fn write_through_of_whole_pages_pads_nothing() {
    let (d, off) = qd1_writes(false, Pattern::Sequential, 1 << 20);
    let c = off.phase.as_ref().unwrap().counters;
    let lat = off.phase.as_ref().unwrap().latency[1].clone().unwrap();
    assert_eq!(c.nand_write_units, c.host_write_units);
    assert!(lat.min_ns as f64 >= fastest_program_ns(&d));
}

#[test]
fn write_through_keeps_the_mapping_sound_through_gc() {
    // Several fills of random 4 KiB writes with the cache off: padded pages, GC over blocks with
    // skipped slots; the audit checks that no slot is programmed twice and the data stays mapped.
    let mut d = Drive::new(
        &presets::get("mlc-256")
            .unwrap()
            .with_user_capacity(1 << 30)
            .unwrap(),
        3,
    )
    .unwrap();
    d.enable_audit();
    let user = d.user_bytes();
    let w = Workload {
        rw: Rw::Write,
        pattern: Pattern::Random,
        queue_depth: 8,
        byte_limit: Some(2 * user),
        ..Workload::default()
    };
    let r = run(
        &mut d,
        &[
            Step::WriteCache { enabled: false },
            Step::Run { workload: w },
        ],
    );
    let c = r[1].phase.as_ref().unwrap().counters;
    assert!(c.gc_write_units > 0, "GC ran");
    assert_eq!(c.host_write_units, 2 * user / 4096);
}

#[test]
fn the_histogram_holds_every_response_time_of_the_phase() {
    let mut d = drive();
    let job = |histogram: bool, seed: u64| Workload {
        rw: Rw::Mixed,
        read_fraction: 0.65,
        queue_depth: 4,
        io_limit: Some(5000),
        latency_histogram: histogram,
        seed: Some(seed),
        ..Workload::default()
    };
    let r = run(
        &mut d,
        &[
            Step::Run {
                workload: job(true, 1),
            },
            Step::RunTogether {
                workloads: vec![job(true, 2), job(false, 3)],
                report_as: Vec::new(),
            },
        ],
    );
    let p = r[0].phase.as_ref().unwrap();
    let h = p.latency_histogram.as_ref().expect("asked for");
    let n: u64 = h.iter().map(|b| b[2]).sum();
    assert_eq!(n, p.ios[0] + p.ios[1]);
    for w in h.windows(2) {
        assert!(w[0][1] < w[1][0], "buckets in order, not overlapping");
    }
    for b in h {
        // 3 significant digits: a bucket spans at most 1/1024 of its values
        assert!(b[0] <= b[1] && (b[1] - b[0]) as f64 <= b[0] as f64 / 1024.0 + 1.0);
    }
    let rw = p.latency_rw.as_ref().unwrap();
    assert!(h[0][0] <= rw.min_ns && h[h.len() - 1][1] >= rw.max_ns);
    // Run together: the combined phase holds the jobs that asked, the job that did not has none.
    let together = &r[1];
    assert!(together.phases[1].latency_histogram.is_none());
    let asked = &together.phases[0];
    let combined: u64 = together
        .phase
        .as_ref()
        .unwrap()
        .latency_histogram
        .as_ref()
        .unwrap()
        .iter()
        .map(|b| b[2])
        .sum();
    assert_eq!(combined, asked.ios[0] + asked.ios[1]);
}
