//! Trace replay: the closed loop agrees with the workload engine, the open loop queues, unaligned
//! requests cost what a real drive pays.

use ssdlab::workload::{Replay, ReplayOptions, Timing, TraceRequest};
use ssdlab::{presets, Drive, IoKind, Pattern, Rw, Workload, UNIT_BYTES};

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

fn options(timing: Timing) -> ReplayOptions {
    ReplayOptions {
        label: "replay".into(),
        timing,
        interval_ms: 1000.0,
    }
}

fn replay(d: &mut Drive, timing: Timing, reqs: &[TraceRequest]) -> ssdlab::workload::ReplayResult {
    let mut r = Replay::start(d, options(timing)).unwrap();
    r.feed(d, reqs).unwrap();
    r.finish(d)
}

#[test]
fn a_closed_loop_replay_of_a_sequential_pass_matches_the_workload_engine() {
    let n = 20_000u64;
    let block = 16 * 1024;
    let mut a = drive();
    let w = Workload {
        rw: Rw::Write,
        pattern: Pattern::Sequential,
        block_bytes: block,
        queue_depth: 8,
        io_limit: Some(n),
        ..Workload::default()
    };
    let engine = w.run(&mut a, 1, &mut |_| true).unwrap();
    let reqs: Vec<TraceRequest> = (0..n)
        .map(|i| TraceRequest {
            kind: IoKind::Write,
            offset: i * block,
            length: block,
            time_ns: 0,
        })
        .collect();
    let mut b = drive();
    let r = replay(&mut b, Timing::Afap { queue_depth: 8 }, &reqs);
    assert_eq!(
        r.phase.end_ns, engine.end_ns,
        "same requests, same queue: same finish time"
    );
    assert_eq!(r.phase.counters, engine.counters);
    assert_eq!(r.phase.bytes, engine.bytes);
    assert_eq!(
        r.phase.latency[1].as_ref().unwrap().percentiles,
        engine.latency[1].as_ref().unwrap().percentiles
    );
}

#[test]
fn an_open_loop_replay_queues_what_the_drive_cannot_absorb() {
    // 4000 writes of 128 KiB, 10 µs apart: far more than the drive takes, so later requests wait.
    let reqs: Vec<TraceRequest> = (0..4000u64)
        .map(|i| TraceRequest {
            kind: IoKind::Write,
            offset: (i * 131_072) % (1 << 30),
            length: 131_072,
            time_ns: 1_000_000_000 + i * 10_000,
        })
        .collect();
    let mut slow = drive();
    let stretched = replay(&mut slow, Timing::Trace { speed: 0.001 }, &reqs);
    let mut fast = drive();
    let recorded = replay(&mut fast, Timing::Trace { speed: 1.0 }, &reqs);
    let p99 =
        |r: &ssdlab::workload::ReplayResult| r.phase.latency[1].as_ref().unwrap().at(99.0).unwrap();
    // Stretched 1000x (10 ms apart) every write finds an idle drive; at recorded speed the queue
    // grows through the burst: latency at the tail is many times the service time.
    assert!(
        p99(&recorded) > 20 * p99(&stretched),
        "{} vs {}",
        p99(&recorded),
        p99(&stretched)
    );
    // The stretched replay lasts as long as the stretched trace: 39.99 ms x 1000 (from its first request).
    let secs = (stretched.phase.end_ns - stretched.phase.start_ns) as f64 / 1e9;
    assert!((secs - 39.99).abs() < 0.1, "{secs}");
    assert_eq!(recorded.stats.out_of_order, 0);
}

#[test]
fn unaligned_writes_read_their_partial_units_and_trims_unmap_only_whole_units() {
    let mut d = drive();
    // Map units 0..4 so the partial reads find data.
    let setup: Vec<TraceRequest> = vec![TraceRequest {
        kind: IoKind::Write,
        offset: 0,
        length: 4 * UNIT_BYTES,
        time_ns: 0,
    }];
    replay(&mut d, Timing::Afap { queue_depth: 1 }, &setup);
    let reqs = [
        // 512 B into unit 0 up to 512 B into unit 2: units 0..3, partial head and tail.
        TraceRequest {
            kind: IoKind::Write,
            offset: 512,
            length: 2 * UNIT_BYTES,
            time_ns: 0,
        },
        // Inside unit 3 only: one partial unit, read once.
        TraceRequest {
            kind: IoKind::Write,
            offset: 3 * UNIT_BYTES + 100,
            length: 200,
            time_ns: 0,
        },
        // A TRIM from 512 B into unit 0 to the end of unit 2: unmaps units 1 and 2 only.
        TraceRequest {
            kind: IoKind::Trim,
            offset: 512,
            length: 3 * UNIT_BYTES - 512,
            time_ns: 0,
        },
    ];
    let reads_before = d.counters().host_read_units;
    let r = replay(&mut d, Timing::Afap { queue_depth: 1 }, &reqs);
    assert_eq!(r.stats.rmw_read_units, 3);
    assert_eq!(d.counters().host_read_units - reads_before, 3);
    assert_eq!(r.stats.unaligned_requests, [0, 2, 1]);
    assert_eq!(
        r.phase.bytes,
        [0, 2 * UNIT_BYTES + 200, 3 * UNIT_BYTES - 512]
    );
    assert_eq!(r.stats.units, [0, 4, 2]);
    assert_eq!(r.stats.trim_bytes_not_unmapped, UNIT_BYTES - 512);
    assert_eq!(r.phase.counters.trim_units, 2);
    // The read-modify-write reads NAND first: an unaligned write takes longer than an aligned one.
    let mut a = drive();
    replay(&mut a, Timing::Afap { queue_depth: 1 }, &setup);
    let aligned = replay(
        &mut a,
        Timing::Afap { queue_depth: 1 },
        &[TraceRequest {
            kind: IoKind::Write,
            offset: 0,
            length: 3 * UNIT_BYTES,
            time_ns: 0,
        }],
    );
    let mut u = drive();
    replay(&mut u, Timing::Afap { queue_depth: 1 }, &setup);
    let unaligned = replay(&mut u, Timing::Afap { queue_depth: 1 }, &reqs[..1]);
    let lat = |r: &ssdlab::workload::ReplayResult| r.phase.latency[1].as_ref().unwrap().max_ns;
    assert!(
        lat(&unaligned) > lat(&aligned) + 20_000,
        "{} vs {}",
        lat(&unaligned),
        lat(&aligned)
    );
}

#[test]
fn requests_beyond_the_drive_are_refused() {
    let mut d = drive();
    let user = d.user_bytes();
    let mut r = Replay::start(&mut d, options(Timing::Afap { queue_depth: 1 })).unwrap();
    let bad = [TraceRequest {
        kind: IoKind::Read,
        offset: user - 512,
        length: 1024,
        time_ns: 0,
    }];
    let err = r.feed(&mut d, &bad).unwrap_err().to_string();
    assert!(err.contains("runs past"), "{err}");
}

#[test]
fn speeds_that_stretch_time_past_the_clock_are_refused() {
    let mut d = drive();
    for bad in [1e-30, 1e-15, 0.99e-9, 1.01e9, 0.0, f64::NAN] {
        let Err(err) = Replay::start(&mut d, options(Timing::Trace { speed: bad })) else {
            panic!("speed {bad} was accepted");
        };
        let err = err.to_string();
        assert!(err.contains("speed must be"), "{err}");
    }
    // At the slowest speed a request one second into the trace lands past the scheduling bound:
    // an error, never a saturated or wrapped clock.
    let mut r = Replay::start(&mut d, options(Timing::Trace { speed: 1e-9 })).unwrap();
    let reqs = [0u64, 2_000_000_000].map(|t| TraceRequest {
        kind: IoKind::Write,
        offset: 0,
        length: 4096,
        time_ns: t,
    });
    let err = r.feed(&mut d, &reqs).unwrap_err().to_string();
    assert!(err.contains("raise --speed"), "{err}");
}
