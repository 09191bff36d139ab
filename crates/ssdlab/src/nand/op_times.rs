//! How long each NAND operation takes: the datasheet's typical times shaped by page type, by the
//! die and block the operation runs on, and by operation-to-operation spread
//! (shared/reference/nand-variation.md).
//!
//! - Page type: programs and reads cycle through `program_page_factors` / `read_page_factors`
//!   over the pages of a block (2D MLC: fast lower page, slow upper page).
//! - Die and block: a log-normal factor (median 1) per die and per block, drawn once.
//! - Operation: a log-normal factor per program and per erase, drawn from a seeded generator in
//!   the order the FTL books operations, so a configuration and seed give the same times.
//! - Every time is capped at `max_factor` × its typical time (datasheet max / typ).
//!
//! Per-operation factors come from a table of 256 quantiles of the log-normal, indexed by random
//! bits: one generator step and one load per operation.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use strength_reduce::StrengthReducedU32;

use crate::config::Spread;
use crate::units::SimTime;

const QUANTILES: usize = 256;

#[derive(Clone, Debug)]
pub struct OpTimes {
    /// Typical program / read time of each page type, in ns.
    program_ns: Vec<f64>,
    read_ns: Vec<f64>,
    erase_ns: f64,
    /// Per block: die × block program factor, and die × block erase factor.
    block_program: Vec<f32>,
    block_erase: Vec<f32>,
    /// Per die: read factor.
    die_read: Vec<f32>,
    /// Page-type counts as multiply-and-shift divisors (a hardware division per NAND operation
    /// was a measurable share of a full-size run).
    program_kinds: StrengthReducedU32,
    read_kinds: StrengthReducedU32,
    program_noise: [f32; QUANTILES],
    erase_noise: [f32; QUANTILES],
    program_cap: Vec<f64>,
    read_cap: Vec<f64>,
    erase_cap: f64,
    rng: Xoshiro256PlusPlus,
    /// Mean program factor over dies, blocks and operations (page types average to their mean).
    mean_program_factor: f64,
    /// Typical pSLC program and read times in ns (one bit per cell; see `nand/cell.rs`).
    pslc_program_ns: f64,
    pslc_read_ns: f64,
}

/// The inverse normal CDF (Acklam's rational approximation, relative error < 1.2e-9).
fn probit(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.024_25 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.024_25 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// 256 equiprobable quantiles (midpoints) of a log-normal with median 1.
fn lognormal_table(sigma: f64) -> [f32; QUANTILES] {
    let mut t = [1.0f32; QUANTILES];
    if sigma > 0.0 {
        for (i, v) in t.iter_mut().enumerate() {
            let p = (i as f64 + 0.5) / QUANTILES as f64;
            *v = (sigma * probit(p)).exp() as f32;
        }
    }
    t
}

/// A log-normal factor with median 1.
fn draw(rng: &mut Xoshiro256PlusPlus, sigma: f64) -> f64 {
    if sigma == 0.0 {
        return 1.0;
    }
    // Open interval (0, 1): never 0 or 1.
    let p = (f64::from(rng.gen::<u32>()) + 0.5) / 4_294_967_296.0;
    (sigma * probit(p)).exp()
}

impl OpTimes {
    /// Operation times for `dies` dies of `blocks_per_die` blocks.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        program_us: f64,
        program_page_factors: &[f64],
        read_us: f64,
        read_page_factors: &[f64],
        erase_us: f64,
        spread: &Spread,
        dies: u32,
        blocks_per_die: u32,
        seed: u64,
    ) -> OpTimes {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6E61_6E64_7469_6D65);
        let n = (dies * blocks_per_die) as usize;
        let mut block_program = Vec::with_capacity(n);
        let mut block_erase = Vec::with_capacity(n);
        let mut die_read = Vec::with_capacity(dies as usize);
        for _ in 0..dies {
            let die = draw(&mut rng, spread.die_sigma);
            die_read.push(die as f32);
            for _ in 0..blocks_per_die {
                block_program.push((die * draw(&mut rng, spread.block_sigma)) as f32);
                block_erase.push((die * draw(&mut rng, spread.erase_sigma)) as f32);
            }
        }
        let lognormal_mean = |s: f64| (s * s / 2.0).exp();
        let cap = spread.max_factor;
        let program_ns: Vec<f64> = program_page_factors
            .iter()
            .map(|f| program_us * 1000.0 * f)
            .collect();
        let read_ns: Vec<f64> = read_page_factors
            .iter()
            .map(|f| read_us * 1000.0 * f)
            .collect();
        let program_kinds = StrengthReducedU32::new(program_ns.len() as u32);
        let read_kinds = StrengthReducedU32::new(read_ns.len() as u32);
        OpTimes {
            program_cap: program_ns.iter().map(|t| t * cap).collect(),
            read_cap: read_ns.iter().map(|t| t * cap).collect(),
            program_ns,
            read_ns,
            erase_ns: erase_us * 1000.0,
            erase_cap: erase_us * 1000.0 * cap,
            block_program,
            block_erase,
            die_read,
            program_kinds,
            read_kinds,
            program_noise: lognormal_table(spread.program_sigma),
            erase_noise: lognormal_table(spread.erase_sigma),
            rng,
            mean_program_factor: lognormal_mean(spread.die_sigma)
                * lognormal_mean(spread.block_sigma)
                * lognormal_mean(spread.program_sigma),
            pslc_program_ns: program_us * 1000.0,
            pslc_read_ns: read_us * 1000.0,
        }
    }

    /// Sets the typical pSLC program and read times (a drive with an SLC cache).
    pub fn set_pslc(&mut self, program_us: f64, read_us: f64) {
        self.pslc_program_ns = program_us * 1000.0;
        self.pslc_read_ns = read_us * 1000.0;
    }

    /// Time to program a page of `block` in pSLC mode: every page alike, with the block's and the
    /// operation's spread of a native program, capped like them.
    #[inline]
    pub fn program_pslc(&mut self, block: u32) -> SimTime {
        let typ = self.pslc_program_ns;
        let t = typ * f64::from(self.block_program[block as usize]) * self.noise(0);
        let cap = self.program_cap[0] / self.program_ns[0] * typ;
        SimTime(t.min(cap) as u64)
    }

    /// Time to read a page programmed in pSLC mode on `die`.
    #[inline]
    pub fn read_pslc(&self, die: u32) -> SimTime {
        let die = die as usize;
        let typ = self.pslc_read_ns;
        let cap = self.read_cap[0] / self.read_ns[0] * typ;
        SimTime((typ * f64::from(self.die_read[die])).min(cap) as u64)
    }

    /// Mean time of a pSLC page program, in ns (typical × the mean spread factors).
    pub fn mean_pslc_program_ns(&self) -> f64 {
        self.pslc_program_ns * self.mean_program_factor
    }

    #[inline]
    fn noise(&mut self, table: usize) -> f64 {
        let i = (self.rng.next_u32_fast() >> 24) as usize;
        f64::from(if table == 0 {
            self.program_noise[i]
        } else {
            self.erase_noise[i]
        })
    }

    /// Time to program page `page` (its index in the block) of `block`.
    #[inline]
    pub fn program(&mut self, block: u32, page: u32) -> SimTime {
        let k = (page % self.program_kinds) as usize;
        let t = self.program_ns[k] * f64::from(self.block_program[block as usize]) * self.noise(0);
        SimTime(t.min(self.program_cap[k]) as u64)
    }

    /// Time to read page `page` (its index in its block) on `die` into the die's register.
    #[inline]
    pub fn read(&self, die: u32, page: u32) -> SimTime {
        let k = (page % self.read_kinds) as usize;
        let t = self.read_ns[k] * f64::from(self.die_read[die as usize]);
        SimTime(t.min(self.read_cap[k]) as u64)
    }

    /// Time to erase `block`.
    #[inline]
    pub fn erase(&mut self, block: u32) -> SimTime {
        let t = self.erase_ns * f64::from(self.block_erase[block as usize]) * self.noise(1);
        SimTime(t.min(self.erase_cap) as u64)
    }

    /// The typical erase time, for whole-drive erases.
    pub fn typical_erase(&self) -> SimTime {
        SimTime(self.erase_ns as u64)
    }

    /// Mean program time over page types, dies, blocks and operations, in ns (before the cap).
    pub fn mean_program_ns(&self) -> f64 {
        self.program_ns.iter().sum::<f64>() / self.program_ns.len() as f64
            * self.mean_program_factor
    }

    /// The shortest time any program can take (the fastest page type at the lowest factors seen).
    pub fn min_program_ns(&self) -> f64 {
        let fastest = self
            .program_ns
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let block = self
            .block_program
            .iter()
            .copied()
            .fold(f32::INFINITY, f32::min);
        let noise = self.program_noise[0];
        fastest * f64::from(block) * f64::from(noise)
    }
}

/// The 32 high bits of the generator, without `rand`'s range machinery.
trait FastU32 {
    fn next_u32_fast(&mut self) -> u32;
}

impl FastU32 for Xoshiro256PlusPlus {
    #[inline]
    fn next_u32_fast(&mut self) -> u32 {
        (rand::RngCore::next_u64(self) >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(spread: &Spread) -> OpTimes {
        OpTimes::new(
            1300.0,
            &[0.54, 1.46],
            50.0,
            &[1.0],
            3000.0,
            spread,
            4,
            64,
            1,
        )
    }

    #[test]
    fn probit_inverts_the_normal_cdf() {
        assert!(probit(0.5).abs() < 1e-9);
        assert!((probit(0.975) - 1.959_964).abs() < 1e-5);
        assert!((probit(0.001) + 3.090_232).abs() < 1e-5);
    }

    #[test]
    fn without_spread_every_page_type_takes_its_time() {
        let mut t = times(&Spread::NONE);
        assert_eq!(t.program(5, 0), SimTime(702_000));
        assert_eq!(t.program(5, 1), SimTime(1_898_000));
        assert_eq!(t.program(5, 2), SimTime(702_000));
        assert_eq!(t.erase(3), SimTime(3_000_000));
        assert!((t.mean_program_ns() - 1_300_000.0).abs() < 1.0);
    }

    #[test]
    fn spread_is_right_skewed_around_the_typical_median_and_capped() {
        let spread = Spread {
            program_sigma: 0.3,
            block_sigma: 0.0,
            die_sigma: 0.0,
            erase_sigma: 0.0,
            max_factor: 1.5,
        };
        let mut t = times(&spread);
        let mut v: Vec<u64> = (0..20_000).map(|_| t.program(0, 0).ns()).collect();
        v.sort_unstable();
        let median = v[v.len() / 2] as f64;
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        assert!((median / 702_000.0 - 1.0).abs() < 0.02, "median {median}");
        assert!(mean > median, "right skew: mean {mean} > median {median}");
        assert_eq!(*v.last().unwrap(), 1_053_000, "capped at 1.5x typ");
    }

    #[test]
    fn blocks_and_dies_differ_deterministically() {
        let spread = Spread::default();
        let (mut a, mut b) = (times(&spread), times(&spread));
        let ta: Vec<SimTime> = (0..256).map(|blk| a.program(blk, 0)).collect();
        let tb: Vec<SimTime> = (0..256).map(|blk| b.program(blk, 0)).collect();
        assert_eq!(ta, tb, "same seed, same times");
        let distinct: std::collections::BTreeSet<_> = ta.iter().collect();
        assert!(distinct.len() > 200, "blocks differ");
    }
}
