//! Property tests of the FTL over long random sequences of writes (compressible or not), reads,
//! TRIMs, idle periods, secure erases and the GC they trigger, under every victim policy and GC
//! mode: L2P and P2L stay inverse, valid counts equal mapped data, free blocks hold nothing, and
//! no entry is programmed twice without an erase.

use proptest::prelude::*;
use ssdlab::{Drive, GcMode, GcPolicy, IdleGc, Io, IoKind, SimTime, Striping};

use crate::support::small_drive;

#[derive(Clone, Debug)]
enum Op {
    Write {
        lpn: u32,
        units: u32,
        compressibility: f64,
    },
    Read {
        lpn: u32,
        units: u32,
    },
    Trim {
        lpn: u32,
        units: u32,
    },
    Idle {
        ms: u64,
    },
    SecureErase,
}

fn op(user: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => (0..user, 1u32..9, prop_oneof![Just(1.0), 0.05f64..1.0])
            .prop_map(|(lpn, units, compressibility)| Op::Write { lpn, units, compressibility }),
        3 => (0..user, 1u32..9).prop_map(|(lpn, units)| Op::Read { lpn, units }),
        3 => (0..user, 1u32..200).prop_map(|(lpn, units)| Op::Trim { lpn, units }),
        1 => (1u64..5_000).prop_map(|ms| Op::Idle { ms }),
        1 => Just(Op::SecureErase),
    ]
}

fn policy() -> impl Strategy<Value = GcPolicy> {
    prop_oneof![
        Just(GcPolicy::Greedy),
        Just(GcPolicy::Fifo),
        Just(GcPolicy::CostBenefit),
        Just(GcPolicy::DChoices)
    ]
}

fn mode() -> impl Strategy<Value = GcMode> {
    prop_oneof![
        Just(GcMode::OnDemand),
        Just(GcMode::Active),
        Just(GcMode::CleanUpLater)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn ftl_invariants_hold(policy in policy(), mode in mode(), round_robin in any::<bool>(),
                           compression in any::<bool>(), idle_gc in any::<bool>(),
                           op_frac in 0.5f64..0.9, seed in any::<u64>(),
                           ops in prop::collection::vec(op(1 << 20), 200..1500)) {
        let mut cfg = small_drive(48, 16, op_frac, policy);
        cfg.ftl.gc_mode = mode;
        cfg.ftl.active_gc_free_blocks = 4;
        cfg.ftl.striping = if round_robin { Striping::RoundRobin } else { Striping::Dynamic };
        cfg.ftl.compression = compression;
        cfg.ftl.idle_gc = idle_gc.then_some(IdleGc { delay_s: 0.001, duty: 0.5 });
        // Two dies, so striping and drive-wide batches matter.
        cfg.geometry.dies_per_channel = 2;
        cfg.geometry.blocks_per_plane = 24;
        let mut drive = Drive::new(&cfg, seed).unwrap();
        drive.enable_audit();
        let user = drive.user_units() as u32;
        let mut t = SimTime::ZERO;
        for (i, o) in ops.iter().enumerate() {
            let io = match *o {
                Op::Write { lpn, units, compressibility } => Io { compressibility, ..Io::new(IoKind::Write, lpn % user, units) },
                Op::Read { lpn, units } => Io::new(IoKind::Read, lpn % user, units),
                Op::Trim { lpn, units } => Io::new(IoKind::Trim, lpn % user, units),
                Op::Idle { ms } => {
                    drive.advance_to(t);
                    drive.idle_until(t + SimTime(ms * 1_000_000)).unwrap();
                    t = drive.now();
                    continue;
                }
                Op::SecureErase => {
                    drive.advance_to(t);
                    drive.secure_erase();
                    t = drive.now();
                    continue;
                }
            };
            let io = Io { units: io.units.min(user - io.lpn), ..io };
            let ack = drive.submit(io, t).unwrap();
            prop_assert!(ack >= t);
            t += SimTime(1000);
            if i % 50 == 0 {
                if let Err(e) = drive.ftl().check_invariants() {
                    prop_assert!(false, "after op {i} ({o:?}): {e}");
                }
            }
        }
        if let Err(e) = drive.ftl().check_invariants() {
            prop_assert!(false, "at the end: {e}");
        }
        // Without compression every host write reached NAND exactly once; GC added copies.
        let c = drive.counters();
        if !compression {
            prop_assert_eq!(c.nand_write_units, c.host_write_units + c.gc_write_units);
        }
    }
}

#[test]
fn rewriting_every_unit_many_times_never_runs_out_of_space() {
    let cfg = small_drive(64, 16, 0.15, GcPolicy::Greedy);
    let mut drive = Drive::new(&cfg, 1).unwrap();
    drive.enable_audit();
    let user = drive.user_units() as u32;
    let mut t = SimTime::ZERO;
    for round in 0..20u32 {
        for lpn in 0..user {
            let l = (lpn * 7 + round * 13) % user;
            t = drive.submit(Io::new(IoKind::Write, l, 1), t).unwrap();
        }
    }
    drive.ftl().check_invariants().unwrap();
}
