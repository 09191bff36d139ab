//! fio's job semantics through the engine, against arithmetic and fio's rules: rate floors,
//! Poisson arrivals, the latency-target search, flows, exitall, offset modifiers and block
//! alignment (the rules themselves: arrivals.rs, min_rate.rs, latency_target.rs, flow.rs,
//! control.rs, sequencer.rs).

use super::{
    run_together, Exit, ExitWhat, Flow, LatencyTarget, Pattern, RateMin, RateProcess, Rw,
    Sequencer, Workload,
};
use crate::config::DriveConfig;
use crate::drive::Drive;
use crate::units::NS_PER_SEC;

/// The default drive (mlc-256, 32 dies) at 1 GiB.
fn drive() -> Drive {
    let cfg = DriveConfig::default().with_user_capacity(1 << 30).unwrap();
    Drive::new(&cfg, 1).unwrap()
}

/// A drive of one die (2 planes, 128 blocks each, 25 % spare): random reads queue on it, so their latency
/// grows with the queue depth, about 50 µs per request queued ahead. Written full, so reads
/// touch NAND.
fn one_die_drive() -> Drive {
    let mut cfg = DriveConfig::default();
    cfg.geometry.channels = 1;
    cfg.geometry.dies_per_channel = 1;
    cfg.geometry.blocks_per_plane = 128;
    cfg.ftl.op = 0.25; // enough spare blocks on one die for GC's reserve
    let mut d = Drive::new(&cfg, 1).unwrap();
    let fill = Workload {
        rw: Rw::Write,
        pattern: Pattern::Sequential,
        block_bytes: 128 * 1024,
        queue_depth: 4,
        ..Workload::default()
    };
    fill.run(&mut d, 1, &mut |_| true).unwrap();
    d.idle_until(d.now() + crate::units::SimTime::from_secs(5))
        .unwrap();
    d
}

fn random_reads(qd: u32) -> Workload {
    Workload {
        label: "j".into(),
        rw: Rw::Read,
        pattern: Pattern::Random,
        queue_depth: qd,
        ..Workload::default()
    }
}

/// Share (%) of a phase's reads at or below `target_ns`, from its percentiles (the largest
/// reported percentile at or below the target).
fn share_within(p: &super::PhaseResult, target_ns: u64) -> f64 {
    let l = p.latency[0].as_ref().unwrap();
    if l.max_ns <= target_ns {
        return 100.0;
    }
    l.percentiles
        .iter()
        .filter(|&&(_, v)| v <= target_ns)
        .map(|&(q, _)| q)
        .fold(0.0, f64::max)
}

/// On a drive whose latency grows with the queue depth, the search ends at a depth whose own
/// figures meet the target (fio resets them for the final window), and one request deeper does
/// not: run alone from the same drive state for a window, depth + 1 misses the 99th percentile.
#[test]
fn latency_target_finds_the_deepest_queue_that_meets_the_target() {
    let base = one_die_drive();
    let target_ns = 1_000_000; // 1 ms: about 17 requests queued on the one die
    let window_s = 0.2;
    let mut d = base.clone();
    let w = Workload {
        duration_s: Some(30.0),
        latency_target: Some(LatencyTarget {
            target_ns,
            window_ns: (window_s * NS_PER_SEC as f64) as u64,
            percentile: 99.0,
            keep_running: false,
            timeout_ignored: [false; 3],
        }),
        ..random_reads(64)
    };
    let p = w.run(&mut d, 3, &mut |_| true).unwrap();
    let depth = p.outcome.latency_depth.unwrap();
    assert!((8..40).contains(&depth), "found depth {depth}");
    assert!(p.outcome.error.is_none());
    // The job ended long before its 30 s: the search, then one final window.
    let runtime = (p.end_ns - p.start_ns) as f64 / 1e9;
    assert!(runtime < 10.0, "ran {runtime} s");
    let since = p.outcome.stats_start_ns.unwrap() as f64 / 1e9;
    assert!(
        (runtime - since - window_s).abs() < 0.01,
        "figures from the final window only: {since} .. {runtime}"
    );
    assert!(
        share_within(&p, target_ns) >= 99.0,
        "the found depth meets the target: {:?}",
        p.latency[0]
    );
    // One request deeper, alone for a window on the drive as it was: the target is missed.
    for (qd, meets) in [(depth, true), (depth + 1, false)] {
        let mut d = base.clone();
        let fixed = Workload {
            duration_s: Some(window_s),
            ..random_reads(qd)
        };
        let r = fixed.run(&mut d, 3, &mut |_| true).unwrap();
        let share = share_within(&r, target_ns);
        assert_eq!(
            share >= 99.0,
            meets,
            "depth {qd}: {share} % within 1 ms ({:?})",
            r.latency[0].as_ref().map(|l| l.at(99.0))
        );
    }
}

/// At 100 % a single slow request at depth 1 is fatal (ETIMEDOUT), unless ignored.
#[test]
fn latency_target_at_depth_one_is_fatal_unless_ignored() {
    let base = one_die_drive();
    let w = |ignored: bool| Workload {
        duration_s: Some(1.0),
        latency_target: Some(LatencyTarget {
            target_ns: 30_000, // below one NAND read: every request misses it
            window_ns: 100_000_000,
            percentile: 100.0,
            keep_running: false,
            timeout_ignored: [ignored; 3],
        }),
        ..random_reads(8)
    };
    let p = w(false).run(&mut base.clone(), 3, &mut |_| true).unwrap();
    let e = p.outcome.error.as_ref().unwrap();
    assert_eq!((e.errno, e.func.as_str()), (110, "max latency exceeded"));
    assert!(
        e.message.starts_with("fio: latency of ")
            && e.message
                .contains("exceeds specified max (30000 nsec): ssdlab-drive read "),
        "{}",
        e.message
    );
    assert_eq!(p.ios[0], 1, "the job ends at its first request");
    let p = w(true).run(&mut base.clone(), 3, &mut |_| true).unwrap();
    assert!(p.outcome.error.is_none());
    // Every request is an ignored error; the figures count the final window's only. (At 100 %
    // fio counts no failures in a window -- each slow request backs off at once -- so depth 1
    // "succeeds", tries 2, backs off to 1 and settles there.)
    assert!(p.ios[0] > 0 && p.outcome.ignored_errors > p.ios[0], "{p:?}");
    assert_eq!(p.outcome.first_ignored_error, Some(110));
    assert_eq!(p.outcome.latency_depth, Some(1));
    assert!(p.outcome.stats_start_ns.is_some());
}

/// Per-10 ms request counts of a rate-capped job: Poisson arrivals scatter them with variance
/// ≈ mean (index of dispersion 1, which for a renewal process is the inter-arrival CV²), evenly
/// spaced ones hardly at all; both at the rate.
#[test]
fn poisson_arrivals_scatter_at_the_rate() {
    let rate = 2000.0;
    let seconds = 20.0;
    let run = |process: RateProcess, seed: u64| {
        let w = Workload {
            duration_s: Some(seconds),
            rate_iops: Some(rate),
            rate_process: process,
            interval_ms: 10.0,
            ..random_reads(32)
        };
        w.run(&mut drive(), seed, &mut |_| true).unwrap()
    };
    for (process, lo, hi) in [
        (RateProcess::Poisson, 0.9, 1.1),
        (RateProcess::Linear, 0.0, 0.05),
    ] {
        let p = run(process, 5);
        let counts: Vec<f64> = p.series.ios[0][..(seconds * 100.0) as usize - 1]
            .iter()
            .map(|&c| c as f64)
            .collect();
        let n = counts.len() as f64;
        let mean = counts.iter().sum::<f64>() / n;
        let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let dispersion = var / mean;
        assert!(
            (lo..hi).contains(&dispersion),
            "{process:?}: index of dispersion {dispersion}"
        );
        // fio's mean gap is ⌊10⁶/2000⌋ = 500 µs (less 0.5 µs of truncation per Poisson gap):
        // 40,000 requests in 20 s, ± 3σ = 600 for Poisson counts.
        let total = p.ios[0] as f64;
        assert!(
            (total - rate * seconds).abs() < 600.0,
            "{process:?}: {total} requests"
        );
    }
    // Deterministic for a seed, different for another.
    assert_eq!(
        run(RateProcess::Poisson, 5).series.ios,
        run(RateProcess::Poisson, 5).series.ios
    );
    assert_ne!(
        run(RateProcess::Poisson, 5).series.ios,
        run(RateProcess::Poisson, 6).series.ios
    );
}

/// thinktime-bound reads at ~20 IOPS under rate_iops_min=50: fio's settle period, a baseline
/// after 2 s, the failing comparison a cycle later; a floor the job meets never fails it. A read
/// of a never-written unit costs only its link time (about 7 µs), so requests go out every
/// 50.007 ms: the baseline is taken at the 41st (2000.3 ms, 40 done), the comparison at the 61st
/// (3000.4 ms): 20 done in ⌊1000.1⌋ ms = 20 IOPS (fio's real run, 1009 ms apart, printed 19).
#[test]
fn a_job_below_its_rate_floor_fails_after_the_settle_period() {
    let w = |floor: u64| Workload {
        duration_s: Some(6.0),
        think_time_us: 50_000.0,
        rate_min: Some(RateMin {
            bytes_per_s: [0; 3],
            iops: [floor, 0, 0],
            cycle_ms: 1000,
        }),
        ..random_reads(1)
    };
    let p = w(50).run(&mut drive(), 1, &mut |_| true).unwrap();
    let e = p.outcome.error.as_ref().expect("below the floor");
    assert_eq!((e.errno, e.func.as_str()), (5, "check_min_rate"));
    assert_eq!(e.message, "j: rate_iops_min=50 not met, got 20 IOPS");
    let ended = (p.end_ns - p.start_ns) as f64 / 1e9;
    assert!((3.0..3.1).contains(&ended), "failed at {ended} s");
    let p = w(15).run(&mut drive(), 1, &mut |_| true).unwrap();
    assert!(p.outcome.error.is_none());
    assert!(((p.end_ns - p.start_ns) as f64 / 1e9 - 6.0).abs() < 0.1);
}

/// Two jobs in one flow with weights 1 and 2 keep their request counts 1:2 (within the one
/// request a turn can be ahead), with or without flow_sleep; without a flow they run freely.
#[test]
fn flows_keep_request_counts_in_the_ratio_of_their_weights() {
    for sleep_us in [0, 100] {
        let job = |weight, label: &str| Workload {
            label: label.into(),
            duration_s: Some(2.0),
            flow: Some(Flow {
                id: 0,
                weight,
                sleep_us,
            }),
            ..random_reads(4)
        };
        let (a, b) = (job(1, "a"), job(2, "b"));
        let r = run_together(&[&a, &b], &mut drive(), &[1, 2], &[], &mut |_| true).unwrap();
        let (na, nb) = (r.jobs[0].ios[0], r.jobs[1].ios[0]);
        assert!(na > 10_000, "sleep {sleep_us}: {na} {nb}");
        assert!(
            (2 * na).abs_diff(nb) <= 8,
            "sleep {sleep_us}: {na} vs {nb} is not 1:2"
        );
    }
    let (a, b) = (random_reads(4), random_reads(16));
    let (a, b) = (
        Workload {
            duration_s: Some(1.0),
            ..a
        },
        Workload {
            duration_s: Some(1.0),
            ..b
        },
    );
    let r = run_together(&[&a, &b], &mut drive(), &[1, 2], &[], &mut |_| true).unwrap();
    assert!(
        r.jobs[1].ios[0] > 3 * r.jobs[0].ios[0],
        "no flow: depth decides"
    );
}

/// exitall: the first job to end stops the jobs of its group (or, with exit_what=stonewall,
/// every job running) at its end; in-flight requests complete; jobs of another group run on.
#[test]
fn exitall_stops_the_jobs_exit_what_names() {
    let job = |group: u32, what: ExitWhat, limit: Option<u64>| Workload {
        duration_s: limit.is_none().then_some(5.0),
        io_limit: limit,
        exit: Some(Exit {
            what,
            on_end: true,
            on_error: false,
            group,
        }),
        ..random_reads(4)
    };
    for (what, other_group, stopped) in [
        (ExitWhat::Group, 0, true),
        (ExitWhat::Group, 1, false),
        (ExitWhat::Stonewall, 1, true),
    ] {
        let (a, b) = (job(0, what, Some(1000)), job(other_group, what, None));
        let r = run_together(&[&a, &b], &mut drive(), &[1, 2], &[], &mut |_| true).unwrap();
        let a_end = r.jobs[0].end_ns - r.jobs[0].start_ns;
        let b_end = r.jobs[1].end_ns - r.jobs[1].start_ns;
        assert_eq!(r.jobs[0].ios[0], 1000);
        if stopped {
            assert_eq!(r.jobs[1].outcome.terminated_at_ns, Some(a_end));
            assert!(
                b_end >= a_end && b_end - a_end < 1_000_000,
                "{what:?}: {a_end} {b_end}"
            );
        } else {
            assert_eq!(r.jobs[1].outcome.terminated_at_ns, None);
            assert!(b_end >= 5 * NS_PER_SEC, "{what:?}: ran its 5 s");
        }
        assert!(!r.jobs[0].outcome.ends_all);
    }
    let (a, b) = (
        job(0, ExitWhat::All, Some(100)),
        job(0, ExitWhat::All, None),
    );
    let r = run_together(&[&a, &b], &mut drive(), &[1, 2], &[], &mut |_| true).unwrap();
    assert!(
        r.jobs[0].outcome.ends_all,
        "exit_what=all reaches the jobs not started"
    );
}

/// rw=write:4k over 1 MiB without io_size: every other 4 KiB block, and the job ends with its
/// pass (fio closes the file), after 128 writes of 4 KiB -- half the region. rw=read:-8k runs
/// backwards until its bytes are done.
#[test]
fn offset_modifiers_end_the_pass_as_fio_does() {
    let mut d = drive();
    let w = Workload {
        rw: Rw::Write,
        pattern: Pattern::Sequential,
        span_bytes: 1 << 20,
        byte_limit: Some(1 << 20),
        sequencer: Some(Sequencer {
            add_bytes: 4096,
            every: 1,
            identical: false,
            passes: Some(1),
        }),
        ..random_reads(1)
    };
    let p = w.run(&mut d, 1, &mut |_| true).unwrap();
    assert_eq!((p.ios[1], p.bytes[1]), (128, 512 * 1024));
    assert_eq!(d.counters().host_write_units, 128);
    let two = Workload {
        sequencer: w.sequencer.map(|s| Sequencer {
            passes: Some(2),
            ..s
        }),
        ..w.clone()
    };
    let p = two.run(&mut drive(), 1, &mut |_| true).unwrap();
    assert_eq!(p.ios[1], 256, "two passes");
    let back = Workload {
        rw: Rw::Read,
        sequencer: Some(Sequencer {
            add_bytes: -8192,
            every: 1,
            identical: false,
            passes: None,
        }),
        ..w
    };
    let p = back.run(&mut drive(), 1, &mut |_| true).unwrap();
    assert_eq!(p.ios[0], 256, "the byte limit ends it");
}

/// The stream under fio's blockalign: bs=8k, ba=4k random offsets are 4 KiB multiples, half of
/// them not 8 KiB multiples, and none past the span's end less 8 KiB (fio's `last_block`).
#[test]
fn block_alignment_places_random_offsets() {
    let w = Workload {
        block_bytes: 8192,
        block_align_bytes: 4096,
        span_bytes: 1 << 20,
        ..random_reads(1)
    };
    w.validate(1 << 18).unwrap();
    let mut s = super::stream::RequestStream::new(&w, 9, 0, 2048, 16, 1 << 21);
    let offsets: Vec<u64> = (0..20_000).map(|_| s.next().1 * 512).collect();
    assert!(offsets.iter().all(|o| o % 4096 == 0));
    assert!(offsets.iter().all(|&o| o + 8192 <= 1 << 20));
    let odd = offsets.iter().filter(|&&o| o % 8192 != 0).count() as f64 / 20_000.0;
    assert!((odd - 0.5).abs() < 0.02, "{odd}");
    assert_eq!(*offsets.iter().max().unwrap(), (1 << 20) - 8192);
    // A random map does not go with it (fio turns the map off).
    let mapped = Workload {
        random_map: true,
        ..w
    };
    assert!(mapped.validate(1 << 18).is_err());
}
