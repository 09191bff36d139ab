//! The config and workload parsers and validators on arbitrary input (issue 12): they never panic,
//! what they accept lies inside `ssdlab::limits`, and an accepted drive and workload run.

use proptest::prelude::*;
use ssdlab::limits;
use ssdlab::scenario::{run_steps, validate_steps, Step};
use ssdlab::{Drive, DriveConfig, Workload};

/// Floats that probe every edge: NaN, infinities, zero, subnormals, the bounds and beyond.
fn edge_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(-1.0),
        Just(0.0),
        Just(1e-300),
        Just(1e300),
        Just(limits::MIN_OP_US),
        Just(limits::MAX_OP_US),
        Just(limits::MAX_OP_US * 1.000_001),
        0.001f64..2e6,
    ]
}

fn toml_float(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{v:e}")
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Any text: a config or an error, never a panic.
    #[test]
    fn drive_toml_text_never_panics(text in "(\\[[a-z]{0,8}\\]\n)?([a-z_]{1,20} = [-+0-9a-z.e\"]{0,12}\n){0,6}") {
        if let Ok(cfg) = DriveConfig::from_toml(&text) {
            let _ = cfg.validate();
        }
    }

    /// Timing and host values: accepted only inside the documented bounds.
    #[test]
    fn timing_is_accepted_only_within_bounds(read in edge_f64(), program in edge_f64(), erase in edge_f64(),
                                             channel in edge_f64(), link in edge_f64(), overhead in edge_f64()) {
        let text = format!(
            "[timing]\nread_us = {}\nprogram_us = {}\nerase_us = {}\nchannel_mb_s = {}\n[host]\nlink_mb_s = {}\ncommand_overhead_us = {}\n",
            toml_float(read), toml_float(program), toml_float(erase), toml_float(channel), toml_float(link),
            toml_float(overhead));
        let cfg = DriveConfig::from_toml(&text).unwrap();
        let ok = cfg.validate().is_ok();
        let op = |v: f64| (limits::MIN_OP_US..=limits::MAX_OP_US).contains(&v);
        let expected = op(read) && op(program) && op(erase) && channel >= limits::MIN_BANDWIDTH_MB_S
            && channel.is_finite() && link >= limits::MIN_BANDWIDTH_MB_S && link.is_finite()
            && (0.0..=limits::MAX_OP_US).contains(&overhead);
        prop_assert_eq!(ok, expected, "{}", text);
    }

    /// Geometry: any u32s are refused or describe at most 2^32 - 2 units, never an overflow.
    #[test]
    fn geometry_never_overflows(channels in any::<u32>(), dies in any::<u32>(), planes in 0u32..64,
                                blocks in any::<u32>(), pages in 0u32..4096, page_kib in 0u32..1024) {
        let text = format!(
            "[geometry]\nchannels = {channels}\ndies_per_channel = {dies}\nplanes_per_die = {planes}\n\
             blocks_per_plane = {blocks}\npages_per_block = {pages}\npage_bytes = {}\n", page_kib * 4096);
        if let Ok(cfg) = DriveConfig::from_toml(&text) {
            if cfg.validate().is_ok() {
                let units = u128::from(channels) * u128::from(dies) * u128::from(planes) * u128::from(blocks)
                    * u128::from(pages) * u128::from(page_kib);
                prop_assert!(units < u128::from(u32::MAX));
            }
        }
    }

    /// Workloads from arbitrary JSON values: refused, or inside the bounds and scheduled inside the clock.
    #[test]
    fn workloads_are_accepted_only_within_bounds(duration in edge_f64(), interval in edge_f64(), rate in edge_f64(),
                                                 think in edge_f64(), qd in any::<u32>(), buckets in any::<u32>(),
                                                 bytes in any::<u64>(), sequential in any::<bool>()) {
        let cfg = ssdlab::presets::get("mlc-256").unwrap().with_user_capacity(2 << 30).unwrap();
        let drive = Drive::new(&cfg, 1).unwrap();
        let w = Workload {
            duration_s: duration.is_finite().then_some(duration),
            interval_ms: interval,
            rate_iops: (rate > 0.0).then_some(rate),
            think_time_us: think,
            queue_depth: qd,
            position_buckets: if sequential { buckets } else { 0 },
            pattern: if sequential { ssdlab::Pattern::Sequential } else { ssdlab::Pattern::Random },
            byte_limit: (bytes > 0 && !duration.is_finite()).then_some(bytes),
            ..Workload::default()
        };
        let json = serde_json::to_string(&w).unwrap();
        let back: Workload = serde_json::from_str(&json).unwrap_or_else(|_| w.clone());
        if validate_steps(&drive, &[Step::Run { workload: back.clone() }]).is_ok() {
            prop_assert!(back.interval_ms >= limits::MIN_INTERVAL_MS);
            prop_assert!((1..=limits::MAX_QUEUE_DEPTH).contains(&back.queue_depth));
            prop_assert!(back.think_time_us <= limits::MAX_OP_US);
            prop_assert!(u64::from(back.position_buckets) <= limits::MAX_INTERVALS);
            if let Some(d) = back.duration_s {
                prop_assert!(d * 1000.0 / back.interval_ms <= limits::MAX_INTERVALS as f64);
            }
            if let Some(r) = back.rate_iops {
                prop_assert!(r >= limits::MIN_RATE_IOPS);
            }
        }
    }
}

/// An accepted drive at the operation bounds and a short workload run to the end.
#[test]
fn extreme_but_accepted_timings_run() {
    for (program, link) in [
        (limits::MAX_OP_US, limits::MIN_BANDWIDTH_MB_S),
        (limits::MIN_OP_US, 1e300),
    ] {
        let mut cfg = ssdlab::presets::get("mlc-256")
            .unwrap()
            .with_user_capacity(2 << 30)
            .unwrap();
        cfg.timing.program_us = program;
        cfg.timing.read_us = program;
        cfg.timing.erase_us = program;
        cfg.host.link_mb_s = link;
        cfg.validate().unwrap();
        let mut drive = Drive::new(&cfg, 1).unwrap();
        let w = Workload {
            io_limit: Some(64),
            ..Workload::default()
        };
        let r = run_steps(&mut drive, &[Step::Run { workload: w }], 1, &mut |_, _| {
            true
        })
        .unwrap();
        let phase = r[0].phase.as_ref().unwrap();
        assert_eq!(phase.ios[1], 64);
        assert!(phase.end_ns > phase.start_ns);
    }
}

/// Explicit durations beyond the schedulable horizon are refused before anything runs, also
/// across calls on the same drive.
#[test]
fn scheduled_time_cannot_overflow_the_clock() {
    let cfg = ssdlab::presets::get("mlc-256")
        .unwrap()
        .with_user_capacity(2 << 30)
        .unwrap();
    let drive = Drive::new(&cfg, 1).unwrap();
    let half = limits::MAX_SCHEDULED_SECONDS * 0.6;
    let idle = |seconds| Step::Idle { seconds };
    assert!(validate_steps(&drive, &[idle(half)]).is_ok());
    let err = validate_steps(&drive, &[idle(half), idle(half)]).unwrap_err();
    assert!(err.to_string().contains("step 2"), "{err}");
    let long = Workload {
        duration_s: Some(1e20),
        ..Workload::default()
    };
    assert!(validate_steps(&drive, &[Step::Run { workload: long }]).is_err());
}
