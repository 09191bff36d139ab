//! Property tests of the FTL over long random sequences of writes, reads, TRIMs, secure erases and
//! the GC they trigger: L2P and P2L stay inverse, valid counts equal mapped units, free blocks
//! hold nothing, and no unit is programmed twice without an erase.

use proptest::prelude::*;
use ssdlab::{Drive, GcPolicy, Io, IoKind, SimTime};

use crate::support::small_drive;

#[derive(Clone, Debug)]
enum Op {
    Write { lpn: u32, units: u32 },
    Read { lpn: u32, units: u32 },
    Trim { lpn: u32, units: u32 },
    SecureErase,
}

fn op(user: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => (0..user, 1u32..9).prop_map(|(lpn, units)| Op::Write { lpn, units }),
        3 => (0..user, 1u32..9).prop_map(|(lpn, units)| Op::Read { lpn, units }),
        3 => (0..user, 1u32..200).prop_map(|(lpn, units)| Op::Trim { lpn, units }),
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn ftl_invariants_hold(policy in policy(), op_frac in 0.15f64..0.6, seed in any::<u64>(),
                           ops in prop::collection::vec(op(1 << 20), 200..1500)) {
        let cfg = small_drive(40, 16, op_frac, policy);
        let mut drive = Drive::new(&cfg, seed).unwrap();
        drive.enable_audit();
        let user = drive.user_units() as u32;
        let mut t = SimTime::ZERO;
        for (i, o) in ops.iter().enumerate() {
            let io = match *o {
                Op::Write { lpn, units } => Io { kind: IoKind::Write, lpn: lpn % user, units },
                Op::Read { lpn, units } => Io { kind: IoKind::Read, lpn: lpn % user, units },
                Op::Trim { lpn, units } => Io { kind: IoKind::Trim, lpn: lpn % user, units },
                Op::SecureErase => {
                    drive.secure_erase();
                    t = t.max(drive.now());
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
        // Every host write reached NAND exactly once; GC added copies on top.
        let c = drive.counters();
        prop_assert_eq!(c.nand_write_units, c.host_write_units + c.gc_write_units);
    }
}

#[test]
fn a_drive_filled_beyond_its_spare_space_cannot_happen() {
    // Writing every user unit many times over never runs out of space.
    let cfg = small_drive(64, 16, 0.15, GcPolicy::Greedy);
    let mut drive = Drive::new(&cfg, 1).unwrap();
    drive.enable_audit();
    let user = drive.user_units() as u32;
    let mut t = SimTime::ZERO;
    for round in 0..20u32 {
        for lpn in 0..user {
            let l = (lpn * 7 + round * 13) % user;
            t = drive
                .submit(
                    Io {
                        kind: IoKind::Write,
                        lpn: l,
                        units: 1,
                    },
                    t,
                )
                .unwrap();
        }
    }
    drive.ftl().check_invariants().unwrap();
}
