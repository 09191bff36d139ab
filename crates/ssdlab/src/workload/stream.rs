//! The request stream of a workload: which direction and which address each request takes, drawn
//! from the phase's seeded random generator in a fixed order, with a short look-ahead so the
//! engine can prefetch the mapping entries of requests about to be submitted.

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{Pattern, Rw, Workload};
use crate::drive::IoKind;

/// A pseudo-random permutation of `0..n`: a keyed bijection on the next power of two, walked in
/// order, skipping values at or above `n`.
#[derive(Clone, Debug)]
struct Permutation {
    n: u64,
    bits: u32,
    keys: [u64; 3],
    next: u64,
}

impl Permutation {
    fn new(n: u64, rng: &mut Xoshiro256PlusPlus) -> Permutation {
        let bits = 64 - (n.max(2) - 1).leading_zeros();
        Permutation {
            n,
            bits,
            keys: [
                rng.gen::<u64>() | 1,
                rng.gen::<u64>() | 1,
                rng.gen::<u64>() | 1,
            ],
            next: 0,
        }
    }

    #[inline]
    fn mix(&self, mut x: u64) -> u64 {
        let mask = if self.bits == 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        };
        let half = self.bits.div_ceil(2).max(1);
        for &k in &self.keys {
            x = (x ^ (k & mask)) & mask;
            x = x.wrapping_mul(k) & mask;
            x ^= x >> half;
        }
        x & mask
    }

    /// The next value, or `None` once all `n` were given.
    fn next(&mut self) -> Option<u64> {
        let m = 1u64 << self.bits;
        while self.next < m {
            let v = self.mix(self.next);
            self.next += 1;
            if v < self.n {
                return Some(v);
            }
        }
        None
    }
}

/// Requests to come, generated `LOOKAHEAD` ahead of submission.
pub(super) struct RequestStream {
    rng: Xoshiro256PlusPlus,
    rw: Rw,
    pattern: Pattern,
    read_fraction: f64,
    span_start: u64,
    span_end: u64,
    block_units: u64,
    blocks_in_span: u64,
    cursor: u64,
    /// Sampled sequential passes: each bucket's first block (units from the span's start, plus
    /// the end), the blocks to write in each, the current bucket and the blocks written in it.
    sample: Option<Sample>,
    permutation: Option<Permutation>,
    ahead: VecDeque<(IoKind, u64)>,
}

struct Sample {
    starts: Vec<u64>,
    blocks: u64,
    bucket: usize,
    written: u64,
}

/// How far ahead requests are generated (and their mapping entries prefetched).
pub(super) const LOOKAHEAD: usize = 16;

impl RequestStream {
    pub(super) fn new(
        w: &Workload,
        seed: u64,
        span_start: u64,
        span_units: u64,
        block_units: u64,
    ) -> RequestStream {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let blocks_in_span = span_units / block_units;
        let permutation = (w.random_map && w.pattern == Pattern::Random)
            .then(|| Permutation::new(blocks_in_span, &mut rng));
        let mut stream = RequestStream {
            rng,
            rw: w.rw,
            pattern: w.pattern,
            read_fraction: w.read_fraction,
            span_start,
            span_end: span_start + span_units,
            block_units,
            blocks_in_span,
            cursor: span_start,
            sample: (w.pattern == Pattern::Sequential
                && w.position_buckets > 0
                && w.position_sample_blocks > 0)
                .then(|| Sample {
                    starts: super::bucket_starts(
                        span_units,
                        block_units,
                        u64::from(w.position_buckets),
                    ),
                    blocks: w.position_sample_blocks,
                    bucket: 0,
                    written: 0,
                }),
            permutation,
            ahead: VecDeque::with_capacity(LOOKAHEAD + 1),
        };
        for _ in 0..LOOKAHEAD {
            let r = stream.generate();
            stream.ahead.push_back(r);
        }
        stream
    }

    /// The next request, and the ones queued behind it (for prefetching).
    #[inline]
    pub(super) fn next(&mut self) -> (IoKind, u64) {
        let r = self.generate();
        self.ahead.push_back(r);
        self.ahead
            .pop_front()
            .expect("the look-ahead is never empty")
    }

    /// The request `i` places behind the next one.
    #[inline]
    pub(super) fn peek(&self, i: usize) -> Option<(IoKind, u64)> {
        self.ahead.get(i).copied()
    }

    fn generate(&mut self) -> (IoKind, u64) {
        let kind = match self.rw {
            Rw::Read => IoKind::Read,
            Rw::Write | Rw::TrimWrite => IoKind::Write,
            Rw::Trim => IoKind::Trim,
            Rw::Mixed => {
                if self.rng.gen::<f64>() < self.read_fraction {
                    IoKind::Read
                } else {
                    IoKind::Write
                }
            }
        };
        let lpn = match self.pattern {
            Pattern::Random => {
                let block = match &mut self.permutation {
                    Some(p) => {
                        if let Some(b) = p.next() {
                            b
                        } else {
                            let mut fresh = Permutation::new(self.blocks_in_span, &mut self.rng);
                            let b = fresh.next().expect("a span holds at least one block");
                            *p = fresh;
                            b
                        }
                    }
                    None => self.rng.gen_range(0..self.blocks_in_span),
                };
                self.span_start + block * self.block_units
            }
            Pattern::Sequential if self.sample.is_some() => {
                let s = self.sample.as_mut().expect("checked");
                // Past this bucket's sample (or at the end of a bucket too small for it): on to
                // the next bucket's start, wrapping after the last.
                let n = s.starts.len() - 1;
                loop {
                    let size = s.starts[s.bucket + 1] - s.starts[s.bucket];
                    if s.written < s.blocks.min(size) {
                        break;
                    }
                    s.bucket = (s.bucket + 1) % n;
                    s.written = 0;
                }
                let l = self.span_start + (s.starts[s.bucket] + s.written) * self.block_units;
                s.written += 1;
                l
            }
            Pattern::Sequential => {
                if self.cursor + self.block_units > self.span_end {
                    self.cursor = self.span_start;
                }
                let l = self.cursor;
                self.cursor += self.block_units;
                l
            }
        };
        (kind, lpn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_visit_every_value_once() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let mut p = Permutation::new(n, &mut rng);
            let mut seen: Vec<u64> = std::iter::from_fn(|| p.next()).collect();
            assert_eq!(seen.len() as u64, n);
            seen.sort_unstable();
            assert!(seen.iter().enumerate().all(|(i, &v)| i as u64 == v));
        }
        let mut p = Permutation::new(1000, &mut rng);
        let first: Vec<u64> = (0..10).filter_map(|_| p.next()).collect();
        assert_ne!(first, (0..10).collect::<Vec<_>>(), "not the identity");
    }
}
