//! fio's `startdelay` and `ramp_time` on jobs that run together, through the engine: each job
//! starts at its own simulated time, and a ramp's requests are left out of the job's figures
//! (fio 3.33: backend.c's start-delay wait in `run_threads`, time.c's `ramp_time_over`,
//! libfio.c's `reset_all_stats`).

use super::{run_together, Pattern, Rw, Workload};
use crate::config::DriveConfig;
use crate::drive::Drive;
use crate::units::NS_PER_SEC;

/// The default drive (mlc-256) at 1 GiB.
fn drive() -> Drive {
    let cfg = DriveConfig::default().with_user_capacity(1 << 30).unwrap();
    Drive::new(&cfg, 1).unwrap()
}

/// Sequential 4 KiB reads at 100 requests per second, depth 1, for `seconds`.
fn paced(label: &str, seconds: f64) -> Workload {
    Workload {
        label: label.into(),
        rw: Rw::Read,
        pattern: Pattern::Sequential,
        queue_depth: 1,
        rate_iops: Some(100.0),
        duration_s: Some(seconds),
        ..Workload::default()
    }
}

/// Two jobs together, the second with startdelay=1: it starts (its first request and its
/// figures) 1 s after the first; both run their 2 s at 100 IOPS, 200 requests each, and the
/// phase lasts 3 s.
#[test]
fn a_delayed_job_starts_at_its_own_time() {
    let a = paced("a", 2.0);
    let b = Workload {
        start_delay_s: 1.0,
        ..paced("b", 2.0)
    };
    let mut d = drive();
    let t0 = d.now().ns();
    let r = run_together(&[&a, &b], &mut d, &[1, 2], &[], &mut |_| true).unwrap();
    assert_eq!(r.jobs[0].start_ns, t0);
    assert_eq!(
        r.jobs[1].start_ns,
        t0 + NS_PER_SEC,
        "b's figures start at 1 s"
    );
    assert_eq!(r.jobs[0].ios[0], 200);
    assert_eq!(r.jobs[1].ios[0], 200);
    let (a_end, b_end) = (r.jobs[0].end_ns - t0, r.jobs[1].end_ns - t0);
    assert!(
        (2 * NS_PER_SEC..2 * NS_PER_SEC + 1_000_000).contains(&a_end),
        "{a_end}"
    );
    assert!(
        (3 * NS_PER_SEC..3 * NS_PER_SEC + 1_000_000).contains(&b_end),
        "{b_end}"
    );
    // b's series is its own from 1 s on: 100 requests in each of its two seconds.
    assert_eq!(r.jobs[1].series.total_ios()[..2], [100, 100]);
    // All jobs as one: a's first second alone, then both, then b alone.
    assert_eq!(r.combined.start_ns, t0);
    assert_eq!(r.combined.series.total_ios()[..3], [100, 200, 100]);
}

/// Without a time limit, the delay still only moves the job: the same 500 requests, the same
/// latencies, 2 s later than without it.
#[test]
fn a_delay_moves_a_limited_job_without_changing_it() {
    let plain = Workload {
        duration_s: None,
        io_limit: Some(500),
        rate_iops: None,
        ..paced("j", 1.0)
    };
    let late = Workload {
        start_delay_s: 2.0,
        ..plain.clone()
    };
    let (mut d1, mut d2) = (drive(), drive());
    let p = run_together(&[&plain], &mut d1, &[7], &[], &mut |_| true).unwrap();
    let q = run_together(&[&late], &mut d2, &[7], &[], &mut |_| true).unwrap();
    let (p, q) = (&p.jobs[0], &q.jobs[0]);
    assert_eq!(p.ios, q.ios);
    assert_eq!(q.start_ns - p.start_ns, 2 * NS_PER_SEC);
    assert_eq!(q.end_ns - q.start_ns, p.end_ns - p.start_ns);
    assert_eq!(p.latency, q.latency);
}

/// ramp_time=1 on a 2 s time-based job: it runs 3 s (fio's runtime starts at the ramp's end);
/// its figures hold only the requests after the ramp and start at 1 s; the ramp's 100 requests
/// went to the drive all the same. The rate starts over at the ramp's end (fio's
/// `reset_io_counters`), so one request goes at once there: 201 (fio 3.33 on the null engine,
/// rate_iops=100, ramp_time=1, runtime=2: 200 or 201 from run to run).
#[test]
fn a_ramp_is_left_out_of_the_figures() {
    let a = paced("a", 2.0);
    let b = Workload {
        ramp_s: 1.0,
        ..paced("b", 2.0)
    };
    let mut d = drive();
    let t0 = d.now().ns();
    let r = run_together(&[&a, &b], &mut d, &[1, 2], &[], &mut |_| true).unwrap();
    assert_eq!(r.jobs[1].start_ns, t0 + NS_PER_SEC);
    assert_eq!(
        r.jobs[1].ios[0], 201,
        "the ramp's 100 requests are not counted"
    );
    let b_end = r.jobs[1].end_ns - t0;
    assert!(
        (3 * NS_PER_SEC..3 * NS_PER_SEC + 1_000_000).contains(&b_end),
        "{b_end}"
    );
    assert_eq!(r.jobs[1].series.total_ios()[..2], [101, 100]);
    assert_eq!(r.jobs[1].latency[0].as_ref().unwrap().count, 201);
    assert_eq!(
        d.counters().host_read_units,
        200 + 301,
        "the drive served the ramp"
    );
}

/// A job limited by bytes counts its ramp's requests towards the limit (fio's issued bytes are
/// not reset): 1000 requests in all at 100 IOPS with a 2 s ramp report the last 800. A job
/// that ends within its ramp reports every request (fio never reset its figures).
#[test]
fn a_ramp_counts_towards_the_size_and_a_short_job_reports_all() {
    let sized = Workload {
        duration_s: None,
        byte_limit: Some(1000 * 4096),
        ramp_s: 2.0,
        ..paced("sized", 1.0)
    };
    let short = Workload {
        duration_s: None,
        byte_limit: Some(50 * 4096),
        ramp_s: 2.0,
        ..paced("short", 1.0)
    };
    let mut d = drive();
    let t0 = d.now().ns();
    let r = run_together(&[&sized, &short], &mut d, &[1, 2], &[], &mut |_| true).unwrap();
    assert_eq!(r.jobs[0].ios[0], 800);
    assert_eq!(r.jobs[0].start_ns, t0 + 2 * NS_PER_SEC);
    assert_eq!(r.jobs[1].ios[0], 50);
    assert_eq!(r.jobs[1].start_ns, t0);
    assert!(r.jobs[1].end_ns - t0 < NS_PER_SEC);
}

/// Same workloads, same seeds: the same figures, delayed and ramped jobs included.
#[test]
fn delays_and_ramps_are_deterministic() {
    let jobs = [
        Workload {
            pattern: Pattern::Random,
            rate_iops: None,
            queue_depth: 4,
            ..paced("a", 0.5)
        },
        Workload {
            rw: Rw::Write,
            pattern: Pattern::Random,
            rate_iops: None,
            start_delay_s: 0.2,
            ramp_s: 0.1,
            ..paced("b", 0.5)
        },
    ];
    let run = || {
        let refs: Vec<&Workload> = jobs.iter().collect();
        run_together(&refs, &mut drive(), &[3, 4], &[], &mut |_| true).unwrap()
    };
    assert_eq!(run(), run());
}

/// Nonsense delays and ramps are refused before anything runs.
#[test]
fn bad_delays_are_refused() {
    for (delay, ramp) in [
        (-1.0, 0.0),
        (f64::NAN, 0.0),
        (0.0, f64::INFINITY),
        (0.0, 1e300),
    ] {
        let w = Workload {
            start_delay_s: delay,
            ramp_s: ramp,
            ..paced("j", 1.0)
        };
        let e = run_together(&[&w], &mut drive(), &[1], &[], &mut |_| true).unwrap_err();
        assert!(e.to_string().contains("must be from 0 to"), "{e}");
    }
}
