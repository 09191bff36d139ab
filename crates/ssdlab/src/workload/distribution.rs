//! Where random requests land: fio's `random_distribution` (lib/zipf.c, lib/gauss.c and the
//! zoned distributions of io_u.c), over `n` ranges of a span (a range is one aligned block).
//!
//! * `Uniform`: every range equally likely.
//! * `Zipf { theta }`: range ranks drawn by Gray et al.'s quick Zipf generator ("Quickly
//!   generating billion-record synthetic databases", SIGMOD 1994), as fio draws them; rank 1 is
//!   the most popular.
//! * `Pareto { h }`: rank `(n - 1) * u^(ln h / ln(1 - h))` for a uniform `u`, as fio: `h` = 0.2
//!   puts about 80 % of the accesses on 20 % of the ranges.
//! * `Normal { sigma_pct }`: as fio's gauss.c: the mean of 12 uniform draws over the ranges (an
//!   Irwin–Hall bell around the middle), plus a uniform deviation of `sigma_pct` % of the ranges.
//!
//! Like fio (unless its `random_distribution` hashing is turned off), the ranks of these three are
//! scattered over the span, so the hot ranges are spread out, not packed at the start. fio
//! scatters by a hash modulo the range count, which folds some ranks onto one range; here the
//! scatter is a bijection (`rank · a + b mod n` with `a` coprime to `n`), so every rank has a
//! range of its own and the distribution's shares hold exactly.
//!
//! * `Zoned { zones }`: `access_pct` % of the accesses go to the next `size_pct` % of the span,
//!   zone after zone from the start, uniformly within a zone (fio's `zoned:60/10:30/20:10/70`).
//! * `ZonedAbs { zones }`: the same with zone sizes in bytes (fio's `zoned_abs`).

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One zone of a zoned distribution.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Zone {
    /// Share of the accesses, in percent.
    pub access_pct: f64,
    /// Share of the span in percent (`zoned`) or its size in bytes (`zoned_abs`).
    pub size: f64,
}

/// fio's `random_distribution`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Distribution {
    #[default]
    Uniform,
    Zipf {
        theta: f64,
    },
    Pareto {
        h: f64,
    },
    Normal {
        sigma_pct: f64,
    },
    Zoned {
        zones: Vec<Zone>,
    },
    ZonedAbs {
        zones: Vec<Zone>,
    },
}

impl Distribution {
    /// Checks the parameters (`span_bytes` for `zoned_abs`).
    pub fn validate(&self, span_bytes: u64) -> Result<()> {
        let bad = |m: String| Err(Error::Workload(m));
        match self {
            Distribution::Uniform => Ok(()),
            Distribution::Zipf { theta } => {
                if !(theta.is_finite()
                    && *theta > 0.0
                    && (*theta - 1.0).abs() > 1e-9
                    && *theta < 100.0)
                {
                    return bad(format!(
                        "zipf theta must be positive and not 1 (fio's rule), got {theta}"
                    ));
                }
                Ok(())
            }
            Distribution::Pareto { h } => {
                if !(h.is_finite() && *h > 0.0 && *h < 1.0) {
                    return bad(format!("pareto h must be between 0 and 1, got {h}"));
                }
                Ok(())
            }
            Distribution::Normal { sigma_pct } => {
                if !(sigma_pct.is_finite() && *sigma_pct >= 0.0 && *sigma_pct <= 100.0) {
                    return bad(format!("normal sigma must be 0..100 %, got {sigma_pct}"));
                }
                Ok(())
            }
            Distribution::Zoned { zones } | Distribution::ZonedAbs { zones } => {
                let abs = matches!(self, Distribution::ZonedAbs { .. });
                if zones.is_empty() {
                    return bad("a zoned distribution needs at least one zone".into());
                }
                let access: f64 = zones.iter().map(|z| z.access_pct).sum();
                let size: f64 = zones.iter().map(|z| z.size).sum();
                if zones.iter().any(|z| {
                    !(z.access_pct.is_finite()
                        && z.access_pct >= 0.0
                        && z.size.is_finite()
                        && z.size > 0.0)
                }) {
                    return bad("zone shares must be non-negative and zone sizes positive".into());
                }
                if (access - 100.0).abs() > 1e-6 {
                    return bad(format!(
                        "the zones' access shares add up to {access} %, not 100 %"
                    ));
                }
                if abs {
                    if size > span_bytes as f64 {
                        return bad(format!(
                            "the zones add up to {size} bytes, more than the {span_bytes}-byte span"
                        ));
                    }
                } else if (size - 100.0).abs() > 1e-6 {
                    return bad(format!("the zones' sizes add up to {size} %, not 100 %"));
                }
                Ok(())
            }
        }
    }

    pub fn is_uniform(&self) -> bool {
        matches!(self, Distribution::Uniform)
    }
}

/// A bijection of `0..n` that spreads neighbouring ranks apart: `x · a + b mod n`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Scatter {
    n: u64,
    a: u64,
    b: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Scatter {
    fn new(n: u64, rng: &mut Xoshiro256PlusPlus) -> Scatter {
        // Start near n times the golden ratio's fraction, then step to a value coprime with n.
        let mut a = ((n as f64 * 0.618_033_988_749_895) as u64).max(1) % n.max(1);
        while n > 1 && gcd(a, n) != 1 {
            a = (a + 1) % n;
        }
        Scatter {
            n,
            a: a.max(1),
            b: rng.gen_range(0..n),
        }
    }

    #[inline]
    fn apply(&self, x: u64) -> u64 {
        ((u128::from(x) * u128::from(self.a) + u128::from(self.b)) % u128::from(self.n)) as u64
    }
}

/// A ready sampler of range indices in `0..n`.
#[derive(Clone, Debug)]
pub(super) enum Sampler {
    Uniform {
        n: u64,
    },
    Zipf {
        n: u64,
        theta: f64,
        zetan: f64,
        alpha: f64,
        eta: f64,
        scatter: Scatter,
    },
    Pareto {
        n: u64,
        power: f64,
        scatter: Scatter,
    },
    Normal {
        n: u64,
        stddev: u64,
        scatter: Scatter,
    },
    /// Cumulative access shares and zone bounds (first range, ranges) in ranges.
    Zoned {
        cumulative: Vec<f64>,
        zones: Vec<(u64, u64)>,
    },
}

impl Sampler {
    /// A sampler over `n` ranges of `range_bytes` each.
    pub(super) fn new(
        d: &Distribution,
        n: u64,
        range_bytes: u64,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Sampler {
        let n = n.max(1);
        match d {
            Distribution::Uniform => Sampler::Uniform { n },
            Distribution::Zipf { theta } => {
                let theta = *theta;
                let zetan: f64 = (1..=n).map(|i| (1.0 / i as f64).powf(theta)).sum();
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                let nf = n as f64;
                Sampler::Zipf {
                    n,
                    theta,
                    zetan,
                    alpha: 1.0 / (1.0 - theta),
                    eta: (1.0 - (2.0 / nf).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
                    scatter: Scatter::new(n, rng),
                }
            }
            Distribution::Pareto { h } => Sampler::Pareto {
                n,
                power: h.ln() / (1.0 - h).ln(),
                scatter: Scatter::new(n, rng),
            },
            Distribution::Normal { sigma_pct } => {
                let stddev = ((n as f64 * sigma_pct) / 100.0).ceil() as u64;
                Sampler::Normal {
                    n,
                    stddev: stddev.min(n / 2),
                    scatter: Scatter::new(n, rng),
                }
            }
            Distribution::Zoned { zones } | Distribution::ZonedAbs { zones } => {
                let abs = matches!(d, Distribution::ZonedAbs { .. });
                let mut cumulative = Vec::with_capacity(zones.len());
                let mut bounds = Vec::with_capacity(zones.len());
                let (mut acc, mut start) = (0.0, 0u64);
                for (i, z) in zones.iter().enumerate() {
                    acc += z.access_pct / 100.0;
                    cumulative.push(acc);
                    let ranges = if abs {
                        (z.size / range_bytes as f64).floor() as u64
                    } else if i + 1 == zones.len() {
                        n - start.min(n)
                    } else {
                        (z.size / 100.0 * n as f64).round() as u64
                    };
                    let ranges = ranges.clamp(1, n.saturating_sub(start).max(1));
                    bounds.push((start.min(n - 1), ranges));
                    start += ranges;
                }
                Sampler::Zoned {
                    cumulative,
                    zones: bounds,
                }
            }
        }
    }

    /// The next range index.
    #[inline]
    pub(super) fn next(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        match self {
            Sampler::Uniform { n } => rng.gen_range(0..*n),
            Sampler::Zipf {
                n,
                theta,
                zetan,
                alpha,
                eta,
                scatter,
            } => {
                let u: f64 = rng.gen();
                let z = u * zetan;
                let rank = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(*theta) {
                    2
                } else {
                    1 + (*n as f64 * (eta * u - eta + 1.0).powf(*alpha)) as u64
                };
                scatter.apply((rank - 1).min(n - 1))
            }
            Sampler::Pareto { n, power, scatter } => {
                let u: f64 = rng.gen();
                let rank = ((n - 1) as f64 * u.powf(*power)) as u64;
                scatter.apply(rank.min(n - 1))
            }
            Sampler::Normal { n, stddev, scatter } => {
                let mut sum = 0u64;
                for _ in 0..12 {
                    sum += rng.gen_range(0..=*n);
                }
                sum = sum.div_ceil(12);
                if *stddev > 0 {
                    let (base, top) = (i128::from(sum), i128::from(*n));
                    let mut dev = i128::from(rng.gen_range(0..*stddev)) - i128::from(*stddev / 2);
                    while base + dev >= top || base + dev < 0 {
                        dev /= 2;
                    }
                    sum = u64::try_from(base + dev).expect("kept within 0..n");
                }
                scatter.apply(sum.min(n - 1))
            }
            Sampler::Zoned { cumulative, zones } => {
                let u: f64 = rng.gen();
                let i = cumulative
                    .iter()
                    .position(|&c| u < c)
                    .unwrap_or(cumulative.len() - 1);
                let (start, len) = zones[i];
                start + rng.gen_range(0..len)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn shares(d: &Distribution, n: u64, draws: usize) -> Vec<u64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let s = Sampler::new(d, n, 4096, &mut rng);
        let mut hits = vec![0u64; n as usize];
        for _ in 0..draws {
            hits[s.next(&mut rng) as usize] += 1;
        }
        hits
    }

    /// Share of the accesses that the most-hit `fraction` of the ranges received.
    fn top_share(hits: &[u64], fraction: f64) -> f64 {
        let mut h = hits.to_vec();
        h.sort_unstable_by(|a, b| b.cmp(a));
        let k = (h.len() as f64 * fraction) as usize;
        h[..k].iter().sum::<u64>() as f64 / h.iter().sum::<u64>() as f64
    }

    #[test]
    fn zoned_puts_the_accesses_in_the_zones() {
        let d = Distribution::Zoned {
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
        };
        let hits = shares(&d, 1000, 200_000);
        let first: u64 = hits[..200].iter().sum();
        assert!((first as f64 / 200_000.0 - 0.8).abs() < 0.01);
        // Uniform within a zone: no range of the hot zone is far from 800 hits.
        assert!(hits[..200].iter().all(|&h| (600..1000).contains(&h)));
    }

    #[test]
    fn pareto_h_is_the_share_of_the_hot_ranges() {
        // fio's pareto:0.2 is the 80/20 rule: the hottest 20 % take about 80 %.
        let hits = shares(&Distribution::Pareto { h: 0.2 }, 10_000, 400_000);
        let top = top_share(&hits, 0.2);
        assert!((top - 0.8).abs() < 0.05, "{top}");
        let uniform = top_share(&shares(&Distribution::Uniform, 10_000, 400_000), 0.2);
        assert!(uniform < 0.3, "{uniform}");
    }

    #[test]
    fn zipf_rank_frequencies_fall_as_rank_to_the_minus_theta() {
        // Zipf's law: the k-th most popular range is drawn about 1/k^theta as often as the first
        // (Gray et al.'s generator is exact for ranks 1 and 2 and close beyond for theta < 1).
        let theta = 0.8;
        let mut hits = shares(&Distribution::Zipf { theta }, 100_000, 1_000_000);
        hits.sort_unstable_by(|a, b| b.cmp(a));
        for k in [2usize, 4, 8] {
            let ratio = hits[k - 1] as f64 / hits[0] as f64;
            let expected = (1.0 / k as f64).powf(theta);
            assert!(
                (ratio / expected - 1.0).abs() < 0.1,
                "k={k}: {ratio} vs {expected}"
            );
        }
    }

    #[test]
    fn normal_concentrates_and_scatters() {
        let hits = shares(&Distribution::Normal { sigma_pct: 5.0 }, 10_000, 200_000);
        // The Irwin–Hall bell of 12 draws has a standard deviation of n/12: about 68 % of the
        // draws land in the 1/6 of the ranks around the middle, a sixth of the ranges.
        let top = top_share(&hits, 1.0 / 6.0);
        assert!(top > 0.6, "{top}");
    }
}
