//! Requests of any size a block device takes (whole 512-byte sectors), against arithmetic: the
//! drive maps 4 KiB units, so a request covering a unit in part costs a read-modify-write of the
//! unit ([`Drive::submit_bytes`], the one path of the engine and of trace replay).

use super::{BlockShare, Pattern, Workload};
use crate::config::DriveConfig;
use crate::drive::{Drive, IoKind, Touched};
use crate::units::{SimTime, UNIT_BYTES};

/// The default drive (mlc-256) at 1 GiB: 262,144 units, 4 units per multi-plane program.
fn drive() -> Drive {
    let cfg = DriveConfig::default().with_user_capacity(1 << 30).unwrap();
    Drive::new(&cfg, 1).unwrap()
}

fn run(drive: &mut Drive, w: &Workload) -> super::PhaseResult {
    w.run(drive, 7, &mut |_| true).unwrap()
}

/// NAND bytes over host bytes.
fn wa(p: &super::PhaseResult) -> f64 {
    p.counters.write_amplification().unwrap()
}

#[test]
fn a_sector_write_programs_its_whole_unit_and_reads_it_only_once_written() {
    let mut d = drive();
    let per_program = u64::from(d.layout().units_per_program);
    assert!(
        per_program >= 2,
        "the merge case below needs a page of two units or more"
    );
    let t = SimTime::ZERO;
    // Unit 10, never written: 512 bytes at its fourth sector. One unit programmed for 512 host
    // bytes (WA 8), no NAND read: an unmapped unit reads as zeros.
    let (_, touched) = d
        .submit_bytes(IoKind::Write, 10 * UNIT_BYTES + 3 * 512, 512, 1.0, t)
        .unwrap();
    assert_eq!(
        touched,
        Touched {
            units: 1,
            rmw_units: 1,
            trim_bytes_kept: 0,
            unaligned: true
        }
    );
    let c = d.counters();
    assert_eq!(
        (c.host_write_bytes, c.host_write_units, c.nand_write_units),
        (512, 1, 1)
    );
    assert_eq!(c.host_page_reads, 0, "a never-written unit needs no read");
    assert_eq!(c.write_amplification(), Some(8.0));
    // Unit 10 again, another sector, while its page is still being assembled in the write
    // buffer: merged there, no read and no second program.
    d.submit_bytes(IoKind::Write, 10 * UNIT_BYTES, 512, 1.0, t)
        .unwrap();
    let c = d.counters();
    assert_eq!(
        (c.host_write_bytes, c.host_write_units, c.host_page_reads),
        (1024, 1, 0)
    );
    // A program's worth of whole units elsewhere fills the open page: unit 10's data is in NAND.
    d.submit_bytes(
        IoKind::Write,
        5000 * UNIT_BYTES,
        per_program * UNIT_BYTES,
        1.0,
        t,
    )
    .unwrap();
    let before = d.counters();
    // Now a sector of unit 10 is a read-modify-write with a NAND read, and a new unit program.
    d.submit_bytes(IoKind::Write, 10 * UNIT_BYTES + 512, 512, 1.0, t)
        .unwrap();
    let c = d.counters().since(&before);
    assert_eq!(
        (c.host_write_bytes, c.host_write_units, c.host_page_reads),
        (512, 1, 1)
    );
}

#[test]
fn an_unaligned_write_merges_its_head_and_tail_units_only() {
    let mut d = drive();
    // 4096 bytes at 512 bytes into unit 100: units 100 and 101, both partial.
    let (_, touched) = d
        .submit_bytes(
            IoKind::Write,
            100 * UNIT_BYTES + 512,
            4096,
            1.0,
            SimTime::ZERO,
        )
        .unwrap();
    assert_eq!((touched.units, touched.rmw_units), (2, 2));
    // 3 units and a sector from a unit boundary: only the tail is partial.
    let (_, touched) = d
        .submit_bytes(
            IoKind::Write,
            200 * UNIT_BYTES,
            3 * 4096 + 512,
            1.0,
            SimTime::ZERO,
        )
        .unwrap();
    assert_eq!((touched.units, touched.rmw_units), (4, 1));
    // Whole units: no merge at all, the path 4 KiB workloads always took.
    let (_, touched) = d
        .submit_bytes(IoKind::Write, 300 * UNIT_BYTES, 8192, 1.0, SimTime::ZERO)
        .unwrap();
    assert_eq!(
        touched,
        Touched {
            units: 2,
            ..Touched::default()
        }
    );
}

#[test]
fn a_partial_trim_unmaps_only_the_units_it_covers_whole() {
    let mut d = drive();
    let t = SimTime::ZERO;
    d.submit_bytes(IoKind::Write, 0, 64 * UNIT_BYTES, 1.0, t)
        .unwrap();
    // From 512 bytes into unit 0 to 512 bytes into unit 3: units 1 and 2 are unmapped; units 0
    // and 3 keep their data (a drive cannot unmap part of a unit; the partial part is ignored).
    let (_, touched) = d
        .submit_bytes(IoKind::Trim, 512, 3 * UNIT_BYTES, 1.0, t)
        .unwrap();
    assert_eq!(touched.units, 2);
    assert_eq!(touched.trim_bytes_kept, (UNIT_BYTES - 512) + 512);
    let before = d.counters();
    // Reading units 0..4 whole: NAND reads of the two still mapped, none of the unmapped two.
    d.submit_bytes(IoKind::Read, 0, 4 * UNIT_BYTES, 1.0, t)
        .unwrap();
    assert_eq!(d.counters().since(&before).host_page_reads, 2);
    // A TRIM inside one unit unmaps nothing, and still costs a command.
    let (ack, touched) = d.submit_bytes(IoKind::Trim, 512, 1024, 1.0, t).unwrap();
    assert_eq!((touched.units, touched.trim_bytes_kept), (0, 1024));
    assert!(ack > t);
}

#[test]
fn a_sector_read_reads_its_whole_unit_and_moves_only_its_bytes() {
    let mut d = drive();
    let t = SimTime::ZERO;
    d.submit_bytes(IoKind::Write, 0, 64 * UNIT_BYTES, 1.0, t)
        .unwrap();
    let later = SimTime(1_000_000_000);
    let before = d.counters();
    let (sector_ack, touched) = d
        .submit_bytes(IoKind::Read, 20 * UNIT_BYTES + 1024, 512, 1.0, later)
        .unwrap();
    assert_eq!((touched.units, touched.unaligned), (1, true));
    let c = d.counters().since(&before);
    assert_eq!((c.host_read_units, c.host_page_reads), (1, 1));
    let sector_ns = (sector_ack - later).ns();
    assert!(
        sector_ns > d.layout().t_read.ns(),
        "it waited for the unit's NAND read"
    );
    // The same unit read whole, on an idle drive again: the same NAND read, 3584 more bytes
    // over the link (to within one 1.024 µs slot of the channel calendar the NAND transfer is
    // booked in).
    let later2 = SimTime(2_000_000_000);
    let (unit_ack, _) = d
        .submit_bytes(IoKind::Read, 20 * UNIT_BYTES, 4096, 1.0, later2)
        .unwrap();
    let link = d.layout().link_bytes_per_s;
    let extra = SimTime::transfer(4096, link).ns() - SimTime::transfer(512, link).ns();
    let unit_ns = (unit_ack - later2).ns();
    assert!(
        unit_ns.abs_diff(sector_ns + extra) <= 1024,
        "a 512-byte read costs the unit's NAND read and 512 bytes of link time: {sector_ns} ns, \
         a 4 KiB read {unit_ns} ns, link time of 3584 bytes {extra} ns"
    );
}

/// On a fresh drive, N random 512-byte writes each program one 4 KiB unit: NAND bytes / host
/// bytes = 4096 / 512 = 8, less one unit per write merged in the write buffer (a write into a
/// unit still in the page being assembled, about N × 4 / 262,144 ≈ 1 of 20,000 here).
#[test]
fn random_sector_writes_on_a_fresh_drive_program_eight_times_their_bytes() {
    let mut d = drive();
    let n = 20_000;
    let p = run(
        &mut d,
        &Workload {
            block_bytes: 512,
            io_limit: Some(n),
            ..Workload::default()
        },
    );
    assert_eq!(p.bytes[1], n * 512);
    assert_eq!(p.counters.host_write_bytes, n * 512);
    assert_eq!(p.counters.gc_write_units, 0, "before any GC");
    let w = wa(&p);
    assert!((7.99..=8.0).contains(&w), "WA {w}");
    // Reads only of units written before in the run: N − distinct units ≈ N²/(2U) ≈ 763,
    // a Poisson count (σ ≈ 28); with no read of never-written units it stays far below N.
    let reads = p.counters.host_page_reads;
    assert!((600..=900).contains(&reads), "{reads} NAND reads");
}

#[test]
fn whole_unit_workloads_never_take_the_partial_path() {
    // A 4 KiB random-write workload, a mix and a range of unit multiples: every request is whole
    // units, so host bytes = host units × 4096 and no unit is read to merge.
    for w in [
        Workload {
            io_limit: Some(5000),
            ..Workload::default()
        },
        Workload {
            io_limit: Some(5000),
            block_sizes: vec![
                BlockShare {
                    bytes: 4096,
                    pct: 50.0,
                },
                BlockShare {
                    bytes: 16384,
                    pct: 50.0,
                },
            ],
            ..Workload::default()
        },
        Workload {
            io_limit: Some(5000),
            block_range: Some([4096, 12288]),
            ..Workload::default()
        },
    ] {
        let mut d = drive();
        let p = run(&mut d, &w);
        let c = p.counters;
        assert_eq!(c.host_write_bytes, c.host_write_units * UNIT_BYTES);
        assert_eq!(c.host_write_bytes, p.bytes[1]);
        assert_eq!(c.host_read_units, 0, "no unit was read to merge");
    }
}

/// A 50/50 mix of 512 and 4096 bytes at 512-byte-aligned offsets (fio's bssplit, random offsets
/// aligned to the smallest size): a 4096-byte request straddles two units unless it starts on a
/// unit boundary (1 in 8), so it programs 2 − 1/8 = 1.875 units; a 512-byte one programs 1.
/// NAND bytes / host bytes = (0.5 + 0.5 × 1.875) × 4096 / (0.5 × 512 + 0.5 × 4096)
/// = 5888 / 2304 ≈ 2.556 on a fresh drive.
#[test]
fn a_mix_of_sector_and_unit_writes_programs_what_it_straddles() {
    let mut d = drive();
    let p = run(
        &mut d,
        &Workload {
            block_bytes: 512,
            io_limit: Some(40_000),
            block_sizes: vec![
                BlockShare {
                    bytes: 512,
                    pct: 50.0,
                },
                BlockShare {
                    bytes: 4096,
                    pct: 50.0,
                },
            ],
            ..Workload::default()
        },
    );
    let w = wa(&p);
    assert!((w / (5888.0 / 2304.0) - 1.0).abs() < 0.01, "WA {w}");
}

/// fio's bsrange=512-8k: min + ⌊(8192 − 512 + 1)·u⌋ aligned down to 512 (min, a power of two):
/// k × 512 for k = 1..15 each with probability 512/7681, 8192 with 1/7681, so the mean is
/// 512 × (512 × 120 + 16) / 7681 ≈ 4096.5 bytes.
#[test]
fn a_sector_size_range_draws_whole_sectors_from_min_to_max() {
    let mut d = drive();
    let n = 40_000;
    let p = run(
        &mut d,
        &Workload {
            block_bytes: 512,
            io_limit: Some(n),
            block_range: Some([512, 8192]),
            ..Workload::default()
        },
    );
    let mean = p.bytes[1] as f64 / p.ios[1] as f64;
    let want = 512.0 * (512.0 * 120.0 + 16.0) / 7681.0;
    // σ of one size ≈ 2217 bytes, of the mean of 40,000 ≈ 11 bytes: 1 % is 4σ.
    assert!((mean / want - 1.0).abs() < 0.01, "mean size {mean}");
    assert_eq!(p.bytes[1] % 512, 0);
}

#[test]
fn sizes_and_offsets_that_are_not_whole_sectors_are_refused_with_the_mend() {
    let user = 1u64 << 18;
    let err = |w: Workload| w.validate(user).unwrap_err().to_string();
    let e = err(Workload {
        block_bytes: 1000,
        ..Workload::default()
    });
    assert!(
        e.contains("block size must be a positive multiple of 512 bytes (a sector), got 1000; use 512 or 1024"),
        "{e}"
    );
    let e = err(Workload {
        offset_bytes: 4096 + 100,
        ..Workload::default()
    });
    assert!(
        e.contains(
            "offset of 4196 bytes is not a multiple of 512 bytes (a sector); use 4096 or 4608"
        ),
        "{e}"
    );
    let e = err(Workload {
        block_bytes: 512,
        block_sizes: vec![
            BlockShare {
                bytes: 512,
                pct: 50.0,
            },
            BlockShare {
                bytes: 700,
                pct: 50.0,
            },
        ],
        ..Workload::default()
    });
    assert!(e.contains("positive multiples of 512 bytes"), "{e}");
    let e = err(Workload {
        block_bytes: 512,
        block_range: Some([512, 1000]),
        ..Workload::default()
    });
    assert!(
        e.contains("a size range needs multiples of 512 bytes"),
        "{e}"
    );
    let e = err(Workload {
        block_bytes: 100,
        ..Workload::default()
    });
    assert!(e.contains("use 512 or a multiple of it"), "{e}");
    assert!(!e.contains('\n'));
    // Whole sectors pass.
    Workload {
        block_bytes: 1536,
        offset_bytes: 512,
        span_bytes: 512 * 1000,
        pattern: Pattern::Sequential,
        ..Workload::default()
    }
    .validate(user)
    .unwrap();
}
