//! Write amplification under skew (fio's `zoned:80/20:20/80`: 80 % of the writes to 20 % of the
//! LBAs), against an independent reference: a minimal page-mapped FTL written here from the
//! textbook description (one host and one GC write frontier, as ssdlab has; greedy victims), that
//! shares no code with the crate's FTL. It sees the same geometry and the same request
//! distribution, drawn by its own generator.
//!
//! The ordering of the policies under skew is checked too (docs/fio.md, "Skew and GC policies",
//! explains it against Rosenblum & Ousterhout and Desnoyers).

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use ssdlab::scenario::{run_steps, Step};
use ssdlab::workload::{Distribution, Zone};
use ssdlab::{Drive, GcPolicy, Pattern, Workload, UNIT_BYTES};

use crate::support::small_drive;

const BLOCKS: u32 = 1024;
const UNITS_PER_BLOCK: u32 = 64;
const OP: f64 = 0.15;

fn zoned() -> Distribution {
    Distribution::Zoned {
        zones: vec![
            Zone {
                access_pct: 80.0,
                size: 20.0,
            },
            Zone {
                access_pct: 20.0,
                size: 80.0,
            },
        ],
    }
}

/// ssdlab: sequential fill, `warm` drive-fulls of 4 KiB random writes, then WA over `measure` more.
fn simulated(
    policy: GcPolicy,
    distribution: &Distribution,
    warm: u64,
    measure: u64,
) -> (f64, u64, u64) {
    let cfg = small_drive(BLOCKS, UNITS_PER_BLOCK, OP, policy);
    let mut drive = Drive::new(&cfg, 5).unwrap();
    let user = drive.user_units();
    let random = |ios| Step::Run {
        workload: Workload {
            io_limit: Some(ios),
            distribution: distribution.clone(),
            ..Workload::default()
        },
    };
    let steps = [
        Step::Run {
            workload: Workload {
                pattern: Pattern::Sequential,
                block_bytes: 128 * 1024,
                span_bytes: user * UNIT_BYTES,
                ..Workload::default()
            },
        },
        random(warm * user),
        random(measure * user),
    ];
    let results = run_steps(&mut drive, &steps, 3, &mut |_, _| true).unwrap();
    let c = results[2].phase.as_ref().unwrap().counters;
    (
        c.write_amplification().unwrap(),
        user,
        u64::from(drive.layout().total_blocks),
    )
}

/// The reference FTL: `blocks` blocks of `ppb` units, `user` logical units.
struct Reference {
    ppb: usize,
    owner: Vec<u32>,
    valid: Vec<u32>,
    written: Vec<u32>,
    map: Vec<u32>,
    free: Vec<usize>,
    host: usize,
    gc: usize,
    host_writes: u64,
    nand_writes: u64,
}

const NONE: u32 = u32::MAX;

impl Reference {
    fn new(blocks: usize, ppb: usize, user: usize) -> Reference {
        let mut free: Vec<usize> = (2..blocks).rev().collect();
        free.shrink_to_fit();
        Reference {
            ppb,
            owner: vec![NONE; blocks * ppb],
            valid: vec![0; blocks],
            written: vec![0; blocks],
            map: vec![NONE; user],
            free,
            host: 0,
            gc: 1,
            host_writes: 0,
            nand_writes: 0,
        }
    }

    fn append(&mut self, lpn: u32, gc: bool) {
        let b = if gc { self.gc } else { self.host };
        let slot = b * self.ppb + self.written[b] as usize;
        self.owner[slot] = lpn;
        self.map[lpn as usize] = slot as u32;
        self.valid[b] += 1;
        self.written[b] += 1;
        self.nand_writes += 1;
        if self.written[b] as usize == self.ppb {
            if !gc {
                self.collect();
            }
            let next = self.free.pop().expect("the reserve never runs dry");
            if gc {
                self.gc = next;
            } else {
                self.host = next;
            }
        }
    }

    /// Greedy cleaning until two blocks are free: the closed block with the fewest valid units.
    fn collect(&mut self) {
        while self.free.len() < 2 {
            let victim = (0..self.valid.len())
                .filter(|&b| b != self.host && b != self.gc && self.written[b] as usize == self.ppb)
                .min_by_key(|&b| self.valid[b])
                .expect("a closed block exists");
            for s in victim * self.ppb..(victim + 1) * self.ppb {
                let lpn = self.owner[s];
                if lpn != NONE && self.map[lpn as usize] == s as u32 {
                    self.append(lpn, true);
                }
                self.owner[s] = NONE;
            }
            self.valid[victim] = 0;
            self.written[victim] = 0;
            self.free.push(victim);
        }
    }

    fn write(&mut self, lpn: u32) {
        let old = self.map[lpn as usize];
        if old != NONE {
            self.valid[old as usize / self.ppb] -= 1;
            self.owner[old as usize] = NONE;
        }
        self.host_writes += 1;
        self.append(lpn, false);
    }
}

/// The reference's steady WA: fill, `warm` drive-fulls, WA over `measure` more. `hot` is the share
/// of writes sent to the first fifth of the LBAs (0.2: uniform).
fn reference(blocks: usize, ppb: usize, user: usize, hot: f64, warm: u64, measure: u64) -> f64 {
    let mut r = Reference::new(blocks, ppb, user);
    for lpn in 0..user as u32 {
        r.write(lpn);
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
    let hot_units = (0.2 * user as f64).round() as u32;
    let draw = |rng: &mut Xoshiro256PlusPlus| {
        if rng.gen::<f64>() < hot {
            rng.gen_range(0..hot_units)
        } else {
            rng.gen_range(hot_units..user as u32)
        }
    };
    for _ in 0..warm * user as u64 {
        let l = draw(&mut rng);
        r.write(l);
    }
    let (h0, n0) = (r.host_writes, r.nand_writes);
    for _ in 0..measure * user as u64 {
        let l = draw(&mut rng);
        r.write(l);
    }
    (r.nand_writes - n0) as f64 / (r.host_writes - h0) as f64
}

#[test]
fn skew_raises_greedy_wa_as_the_reference_ftl_does() {
    let (uniform, user, blocks) = simulated(GcPolicy::Greedy, &Distribution::Uniform, 4, 3);
    let (skewed, _, _) = simulated(GcPolicy::Greedy, &zoned(), 4, 3);
    let (b, ppb, u) = (blocks as usize, UNITS_PER_BLOCK as usize, user as usize);
    let ref_uniform = reference(b, ppb, u, 0.2, 4, 3);
    let ref_skewed = reference(b, ppb, u, 0.8, 4, 3);
    eprintln!("greedy WA: ssdlab uniform {uniform:.3} zoned {skewed:.3}; reference uniform {ref_uniform:.3} zoned {ref_skewed:.3}");
    // Under skew, greedy's steady WA rises above uniform's: cold data sits in blocks that greedy
    // cleans late and full, hot blocks are cleaned before their data has finished dying
    // (Rosenblum & Ousterhout's observation for LFS; Desnoyers' hot/cold analysis). With GC
    // copies on their own frontier (partial hot/cold separation) the rise at 15 % OP is modest:
    // about 7 % in both simulators; the measurement noise of 3 drive-fulls is well under 1 %.
    let rise = skewed / uniform - 1.0;
    let ref_rise = ref_skewed / ref_uniform - 1.0;
    assert!(rise > 0.04, "zoned {skewed:.3} vs uniform {uniform:.3}");
    assert!(
        ref_rise > 0.04,
        "the reference: zoned {ref_skewed:.3} vs uniform {ref_uniform:.3}"
    );
    assert!(
        (rise - ref_rise).abs() < 0.02,
        "rise {rise:.3} vs the reference's {ref_rise:.3}"
    );
    // And the simulator agrees with the reference on both figures.
    for (what, s, r) in [
        ("uniform", uniform, ref_uniform),
        ("zoned", skewed, ref_skewed),
    ] {
        assert!(
            (s / r - 1.0).abs() < 0.03,
            "{what}: ssdlab {s:.3}, reference {r:.3}"
        );
    }
}

#[test]
fn under_skew_cost_benefit_beats_greedy_and_greedy_beats_fifo() {
    let wa = |p| simulated(p, &zoned(), 4, 3).0;
    let (greedy, fifo, cb) = (
        wa(GcPolicy::Greedy),
        wa(GcPolicy::Fifo),
        wa(GcPolicy::CostBenefit),
    );
    eprintln!("zoned 80/20 WA: greedy {greedy:.3}, fifo {fifo:.3}, cost-benefit {cb:.3}");
    // FIFO ignores how much of a victim is still valid: the worst under skew (Desnoyers: LRU
    // suffers most from non-uniform traffic). Cost-benefit weighs free space by age, leaving
    // cold blocks to fill up before cleaning them (Rosenblum & Ousterhout): the best.
    assert!(fifo > greedy * 1.05, "fifo {fifo:.3} vs greedy {greedy:.3}");
    assert!(cb < greedy, "cost-benefit {cb:.3} vs greedy {greedy:.3}");
}
