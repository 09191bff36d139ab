//! fio's `rate_process`: how a rate cap spaces a job's requests.
//!
//! `linear` (fio's default) is the engine's gap rule ([`super::Workload::rate_iops`]).
//! `poisson` follows fio's `usec_for_io` (backend.c): with the rate at `iops` requests per second
//! in a direction, the k-th request of that direction is due
//!
//! ```text
//!   due(k) = Σ_{i<k} ⌊ ⌊10⁶ / iops⌋ µs · (−ln uᵢ) ⌋ µs      after the job's start
//! ```
//!
//! (fio divides first, in whole microseconds, then truncates the product), with each direction's
//! `uᵢ` from its own generator (fio's `poisson_state[ddir]`). The due times do not depend on when
//! the requests actually went out: a direction that fell behind (a full queue, a stall) catches up,
//! as in fio, so the arrivals stay a Poisson process at the rate. The draws come from generators
//! of their own, so the request stream (directions, offsets, sizes) is the one a linear job draws.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use crate::units::SimTime;

/// How a rate cap spaces the requests (fio's `rate_process`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RateProcess {
    /// Evenly spaced (fio's default).
    #[default]
    Linear,
    /// Exponentially distributed gaps at the rate (fio's `poisson`).
    Poisson,
}

/// Poisson arrivals: one generator and one mean gap per direction (read, write, trim).
#[derive(Clone, Debug)]
pub(super) struct Poisson {
    rng: [Xoshiro256PlusPlus; 3],
    mean_us: [u64; 3],
}

impl Poisson {
    /// Arrivals at `iops[d]` requests per second in direction `d` (fio's `rate_bps / min_bs`:
    /// whole requests per second), from generators derived from `seed`.
    pub(super) fn new(seed: u64, iops: [f64; 3]) -> Poisson {
        let gen = |d: u64| {
            // Independent of the request stream's generator (seeded with `seed` itself).
            Xoshiro256PlusPlus::seed_from_u64(crate::scenario::derive_seed(
                seed ^ 0x706F_6973_736F_6E00,
                d,
            ))
        };
        Poisson {
            rng: [gen(0), gen(1), gen(2)],
            mean_us: iops.map(|r| {
                let whole = r.floor().max(1.0) as u64;
                1_000_000 / whole
            }),
        }
    }

    /// The gap before the next request of direction `d` is due.
    #[inline]
    pub(super) fn gap(&mut self, d: usize) -> SimTime {
        // fio's __rand_0_1 lies in [0, 1]; 1 − u keeps the logarithm finite.
        let u = 1.0 - self.rng[d].gen::<f64>();
        let us = (self.mean_us[d] as f64 * -u.ln()) as u64;
        SimTime(us * 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gaps are exponential: mean ⌊10⁶/iops⌋ µs (less the truncation to whole µs), coefficient
    /// of variation 1; a different seed gives other gaps, the same seed the same ones.
    #[test]
    fn gaps_are_exponential_at_the_rate() {
        let mut p = Poisson::new(7, [3000.0, 3000.0, 3000.0]);
        let n = 200_000;
        let gaps: Vec<f64> = (0..n).map(|_| p.gap(0).ns() as f64 / 1000.0).collect();
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let cv = var.sqrt() / mean;
        // 10^6 / 3000 = 333 whole µs; truncating each gap to whole µs takes 0.5 µs off the mean.
        assert!((mean - 332.5).abs() < 2.5, "mean gap {mean} µs");
        assert!((cv - 1.0).abs() < 0.01, "coefficient of variation {cv}");
        let again: Vec<u64> = {
            let mut q = Poisson::new(7, [3000.0; 3]);
            (0..5).map(|_| q.gap(0).ns()).collect()
        };
        let mut r = Poisson::new(7, [3000.0; 3]);
        assert_eq!(again, (0..5).map(|_| r.gap(0).ns()).collect::<Vec<_>>());
        let mut other = Poisson::new(8, [3000.0; 3]);
        assert_ne!(again, (0..5).map(|_| other.gap(0).ns()).collect::<Vec<_>>());
    }
}
