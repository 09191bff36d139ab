//! The mapping cache of DRAM-less drives (`ftl/map_cache.rs`): random reads over a span the
//! cache covers run as on the drive's DRAM twin (the same preset without `[ftl.map_cache]`);
//! beyond it they slow by the translation-page reads of the misses, which are counted; without
//! HMB the curve falls where the SRAM's coverage ends; random writes beyond the coverage program
//! translation pages, which count in WA.

use ssdlab::scenario::{run_steps, Step, StepResult};
use ssdlab::{presets, Drive, DriveConfig, Pattern, Rw, Workload};

const GIB: u64 = 1 << 30;

fn preset(name: &str, capacity: u64) -> DriveConfig {
    presets::get(name)
        .unwrap()
        .with_user_capacity(capacity)
        .unwrap()
}

/// The same drive with its table in DRAM.
fn twin(cfg: &DriveConfig) -> DriveConfig {
    let mut c = cfg.clone();
    c.ftl.map_cache = None;
    c
}

/// What the SRAM (+ HMB) maps, in bytes of LBA: whole translation pages of page_bytes / 4
/// entries of 4 KiB each (the arithmetic of docs/parameters.md).
fn coverage(cfg: &DriveConfig, with_hmb: bool) -> u64 {
    let m = cfg.ftl.map_cache.as_ref().unwrap();
    let page = u64::from(cfg.geometry.page_bytes);
    let mut pages = u64::from(m.sram_kib) * 1024 / page;
    if with_hmb {
        pages += u64::from(m.hmb_mib) * (1 << 20) / page;
    }
    pages * (page / 4) * 4096
}

fn random(rw: Rw, qd: u32, span: u64, label: &str) -> Step {
    Step::Run {
        workload: Workload {
            label: label.into(),
            rw,
            pattern: Pattern::Random,
            block_bytes: 4096,
            queue_depth: qd,
            span_bytes: span,
            duration_s: Some(1.0),
            ramp_s: 0.5,
            ..Workload::default()
        },
    }
}

/// A secure erase, a sequential fill, then `points` (each a random-IO step), on a fresh drive.
fn run(cfg: &DriveConfig, points: Vec<Step>) -> Vec<StepResult> {
    let mut d = Drive::new(cfg, 3).unwrap();
    let mut steps = vec![
        Step::SecureErase,
        Step::Run {
            workload: Workload::sequential_fill(128 << 10),
        },
    ];
    steps.extend(points);
    let mut r = run_steps(&mut d, &steps, 1, &mut |_, _| true).unwrap();
    r.drain(..2);
    r
}

/// Mean read latency (µs) and translation-page reads per host read of a point.
fn reads(r: &StepResult) -> (f64, f64) {
    let p = r.phase.as_ref().unwrap();
    let lat = p.latency[0].as_ref().unwrap().mean_ns / 1e3;
    let per = p.counters.map_page_reads as f64 / p.counters.host_read_units as f64;
    (lat, per)
}

#[test]
fn span_reads_match_the_dram_twin_within_the_sram_and_slow_by_the_misses_beyond() {
    // dramless-sata: no HMB, 1024 KiB of SRAM in 16 KiB translation pages: 64 pages of 4096
    // entries of 4 KiB = 1 GiB of LBAs.
    let cfg = preset("dramless-sata", 4 * GIB);
    let cover = coverage(&cfg, false);
    assert_eq!(cover, GIB);
    let spans = [cover / 4, cover, 2 * cover, 4 * cover];
    let points = || {
        spans
            .iter()
            .map(|&s| random(Rw::Read, 1, s, "read"))
            .collect::<Vec<_>>()
    };
    let dl = run(&cfg, points());
    let dram = run(&twin(&cfg), points());
    let (t_read, t_xfer) = (45.0, 4096.0 / 800.0); // typical tR (mean of the page factors 1.0), 4 KiB at 800 MB/s
    for (i, &span) in spans.iter().enumerate() {
        let ((lat, per), (lat0, per0)) = (reads(&dl[i]), reads(&dram[i]));
        assert!(per0 == 0.0, "a drive with DRAM reads no translation pages");
        // LRU under uniform random reads: the cached share of the span hits.
        let miss = 1.0 - (cover as f64 / span as f64).min(1.0);
        assert!(
            (per - miss).abs() <= 0.03,
            "span {span}: {per:.3} translation-page reads per read, expected the miss ratio {miss:.3}"
        );
        let expected = lat0 + miss * (t_read + t_xfer);
        assert!(
            (lat / expected - 1.0).abs() <= 0.06,
            "span {span}: QD1 read latency {lat:.1} us, DRAM twin {lat0:.1} us + {miss:.2} x a page read = {expected:.1} us"
        );
        if span <= cover {
            assert!(
                (lat / lat0 - 1.0).abs() <= 0.01,
                "within the SRAM's coverage the drive reads as its DRAM twin: {lat:.2} vs {lat0:.2} us"
            );
        } else {
            assert!(
                lat > 1.15 * lat0,
                "beyond the coverage ({span} bytes) reads must slow: {lat:.2} vs {lat0:.2} us"
            );
        }
    }
}

#[test]
fn with_hmb_off_the_curve_falls_where_the_sram_ends_and_with_it_where_the_hmb_ends() {
    // dramless-hmb at 8 GiB with a 2 MiB HMB: SRAM maps 1 GiB, SRAM + HMB 3 GiB (64 + 128 pages).
    let mut cfg = preset("dramless-hmb", 8 * GIB);
    cfg.ftl.map_cache.as_mut().unwrap().hmb_mib = 2;
    let sram = coverage(&cfg, false);
    let total = coverage(&cfg, true);
    assert_eq!((sram, total), (GIB, 3 * GIB));
    let spans = [GIB / 2, GIB, 2 * GIB, 3 * GIB, 6 * GIB];
    let points = || {
        spans
            .iter()
            .map(|&s| random(Rw::Read, 1, s, "read"))
            .collect::<Vec<_>>()
    };
    let mut off = cfg.clone();
    off.ftl.map_cache.as_mut().unwrap().hmb_mib = 0;
    let dram: Vec<f64> = run(&twin(&cfg), points())
        .iter()
        .map(|r| reads(r).0)
        .collect();
    let on: Vec<f64> = run(&cfg, points()).iter().map(|r| reads(r).0).collect();
    let no_hmb: Vec<f64> = run(&off, points()).iter().map(|r| reads(r).0).collect();
    // The knee: the largest span whose QD1 latency stays within 5 % of the DRAM twin's.
    let knee = |lat: &[f64]| {
        spans
            .iter()
            .zip(lat.iter().zip(&dram))
            .take_while(|(_, (l, d))| **l <= 1.05 * **d)
            .last()
            .map(|(s, _)| *s)
    };
    assert_eq!(
        knee(&no_hmb),
        Some(sram),
        "HMB off: fast up to the SRAM's coverage (1 GiB) and no further: {no_hmb:?} vs DRAM {dram:?}"
    );
    assert_eq!(
        knee(&on),
        Some(total),
        "HMB on: fast up to SRAM + HMB (3 GiB): {on:?} vs DRAM {dram:?}"
    );
    // Past the coverage both slow, the HMB-less drive more.
    assert!(no_hmb[3] > 1.2 * on[3] && on[4] > 1.15 * dram[4]);
}

#[test]
fn random_writes_beyond_the_coverage_program_translation_pages_counted_in_wa() {
    let cfg = preset("dramless-sata", 4 * GIB);
    let span = 4 * coverage(&cfg, false);
    let point = || vec![random(Rw::Write, 32, span, "write")];
    let dl = run(&cfg, point());
    let dram = run(&twin(&cfg), point());
    let (c, c0) = (
        dl[0].phase.as_ref().unwrap().counters,
        dram[0].phase.as_ref().unwrap().counters,
    );
    let units_per_page = u64::from(cfg.geometry.page_bytes) / 4096;
    assert!(c.map_page_writes > 0 && c0.map_page_writes == 0);
    // Every programmed unit is a host unit, a GC copy or a unit of a translation page.
    assert_eq!(
        c.nand_write_units,
        c.host_write_units + c.gc_write_units + units_per_page * c.map_page_writes,
        "NAND writes = host + GC + translation pages"
    );
    let (wa, wa0) = (
        c.write_amplification().unwrap(),
        c0.write_amplification().unwrap(),
    );
    // Three quarters of the writes miss, and nearly every miss evicts a dirty page (the SRAM
    // holds 64 pages of a 256-page span): ~0.75 translation pages per write.
    let per_write = c.map_page_writes as f64 / c.host_write_units as f64;
    assert!(
        (0.6..=0.8).contains(&per_write),
        "{per_write:.3} translation-page programs per host write, expected ~0.75"
    );
    assert!(
        wa > wa0 + 0.6 * units_per_page as f64 * 0.75,
        "WA {wa:.2} with the mapping cache, {wa0:.2} with DRAM"
    );
}
