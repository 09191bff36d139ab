//! The request stream of a workload: which direction and which address each request takes, drawn
//! from the phase's seeded random generator in a fixed order, with a short look-ahead so the
//! engine can prefetch the mapping entries of requests about to be submitted.
//!
//! Addresses and sizes are in 512-byte sectors (the host's granule). Every draw is made in
//! blocks or bytes, so a workload of whole 4 KiB units draws exactly what it drew when the
//! stream counted in units: its sectors are its units times eight.

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::distribution::Sampler;
use super::sequencer::SeqState;
use super::{Pattern, Rw, Workload};
use crate::drive::IoKind;
use crate::units::{SECTOR_BYTES, UNIT_BYTES};

/// Request sizes in sectors: one size, a mix with cumulative shares (fio's `bssplit`), or a range
/// (fio's `bsrange`: `min + ⌊(max − min + 1)·u⌋` bytes, aligned down to `min` when it is a power
/// of two, else to the 4 KiB unit when `min` is a multiple of it, else to the sector).
#[derive(Clone, Debug)]
enum Sizes {
    One(u64),
    Mix(Vec<(f64, u64)>),
    Range { min: u64, max: u64 },
}

impl Sizes {
    /// The sizes of direction `d`: its own mix when the workload gives one, else the common one.
    fn for_direction(w: &Workload, block_sectors: u64, d: usize) -> Sizes {
        if w.direction_block_sizes[d].is_empty() {
            Sizes::new(w, block_sectors)
        } else {
            Sizes::mix(&w.direction_block_sizes[d])
        }
    }

    fn mix(shares: &[super::BlockShare]) -> Sizes {
        let mut acc = 0.0;
        Sizes::Mix(
            shares
                .iter()
                .map(|s| {
                    acc += s.pct / 100.0;
                    (acc, s.bytes / SECTOR_BYTES)
                })
                .collect(),
        )
    }

    fn new(w: &Workload, block_sectors: u64) -> Sizes {
        if !w.block_sizes.is_empty() {
            let mut acc = 0.0;
            let mix = w
                .block_sizes
                .iter()
                .map(|s| {
                    acc += s.pct / 100.0;
                    (acc, s.bytes / SECTOR_BYTES)
                })
                .collect();
            Sizes::Mix(mix)
        } else if let Some([lo, hi]) = w.block_range {
            Sizes::Range {
                min: lo / SECTOR_BYTES,
                max: hi / SECTOR_BYTES,
            }
        } else {
            Sizes::One(block_sectors)
        }
    }

    #[inline]
    fn next(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        match self {
            Sizes::One(u) => *u,
            Sizes::Mix(mix) => {
                let u: f64 = rng.gen();
                mix.iter()
                    .find(|&&(c, _)| u < c)
                    .map_or(mix[mix.len() - 1].1, |&(_, sectors)| sectors)
            }
            Sizes::Range { min, max } => {
                // In bytes, as fio draws it: min + ⌊(max − min + 1)·u⌋, aligned down to min (a
                // power of two), else to the 4 KiB unit (min a multiple of it), else to the sector.
                let (lo, hi) = (min * SECTOR_BYTES, max * SECTOR_BYTES);
                let len = lo + ((hi - lo + 1) as f64 * rng.gen::<f64>()) as u64;
                let len = len.min(hi);
                let align = if lo.is_power_of_two() {
                    lo
                } else if lo % UNIT_BYTES == 0 {
                    UNIT_BYTES
                } else {
                    SECTOR_BYTES
                };
                (len / align * align).max(lo) / SECTOR_BYTES
            }
        }
    }
}

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
    /// The span, in sectors.
    span_start: u64,
    span_end: u64,
    /// The (smallest) request size in sectors: random offsets align to it.
    block_sectors: u64,
    blocks_in_span: u64,
    cursor: u64,
    /// Sampled sequential passes: each bucket's first block (counted from the span's start, plus
    /// the end), the blocks to write in each, the current bucket and the blocks written in it.
    sample: Option<Sample>,
    permutation: Option<Permutation>,
    sizes: Sizes,
    /// A size mix per direction (`Workload::direction_block_sizes`), drawn after the direction.
    direction_sizes: Option<Box<[Sizes; 3]>>,
    /// Where random offsets land, for anything but one size with uniform offsets drawn from a
    /// random map.
    sampler: Sampler,
    /// Requests to come, a ring whose next request is at `head` (fixed arrays: the look-ahead
    /// never changes length), one array per field: a request stored whole was a 16-byte copy
    /// out of the generator's separately written fields, which cannot be forwarded from those
    /// stores and stalled every submission (perf).
    ahead_kind: [IoKind; LOOKAHEAD],
    ahead_sector: [u64; LOOKAHEAD],
    ahead_sectors: [u64; LOOKAHEAD],
    head: usize,
    /// fio's offset modifiers, if the workload has one (sequencer.rs), and the pass each
    /// request of `ahead` belongs to.
    seq: Option<SeqState>,
    ahead_pass: VecDeque<u64>,
}

struct Sample {
    starts: Vec<u64>,
    blocks: u64,
    bucket: usize,
    written: u64,
}

/// How far ahead requests are generated (and their mapping entries prefetched).
pub(super) const LOOKAHEAD: usize = 24;

/// A position in the look-ahead ring, from below `2 * LOOKAHEAD`.
#[inline]
fn wrap(i: usize) -> usize {
    if i >= LOOKAHEAD {
        i - LOOKAHEAD
    } else {
        i
    }
}

impl RequestStream {
    /// A stream over `span_sectors` sectors from sector `span_start`, in requests of
    /// `block_sectors` (the smallest size of a mix or range).
    pub(super) fn new(
        w: &Workload,
        seed: u64,
        span_start: u64,
        span_sectors: u64,
        block_sectors: u64,
        drive_sectors: u64,
    ) -> RequestStream {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let blocks_in_span = span_sectors / block_sectors;
        let sizes = Sizes::new(w, block_sectors);
        let direction_sizes = w
            .direction_block_sizes
            .iter()
            .any(|m| !m.is_empty())
            .then(|| Box::new([0, 1, 2].map(|d| Sizes::for_direction(w, block_sectors, d))));
        // fio's blockalign: random offsets are multiples of the alignment, over the span less
        // what the smallest request needs past an aligned offset (io_u.c `last_block`).
        let (block_sectors, blocks_in_span) = if w.block_align_bytes > 0 {
            let align = w.block_align_bytes / SECTOR_BYTES;
            (
                align,
                (span_sectors - block_sectors.saturating_sub(align)) / align,
            )
        } else {
            (block_sectors, blocks_in_span)
        };
        // A random map covers equal blocks; a size mix or a skewed distribution draws offsets
        // with replacement (as fio with norandommap).
        let mapped = matches!(sizes, Sizes::One(_))
            && direction_sizes.is_none()
            && w.distribution.is_uniform();
        let permutation = (w.random_map && mapped && w.pattern == Pattern::Random)
            .then(|| Permutation::new(blocks_in_span, &mut rng));
        let sampler = Sampler::new(
            &w.distribution,
            blocks_in_span,
            block_sectors * SECTOR_BYTES,
            &mut rng,
        );
        let mut stream = RequestStream {
            rng,
            rw: w.rw,
            pattern: w.pattern,
            read_fraction: w.read_fraction,
            span_start,
            span_end: span_start + span_sectors,
            block_sectors,
            blocks_in_span,
            cursor: span_start,
            sample: (w.pattern == Pattern::Sequential
                && w.position_buckets > 0
                && w.position_sample_blocks > 0)
                .then(|| Sample {
                    starts: super::bucket_starts(
                        span_sectors,
                        block_sectors,
                        u64::from(w.position_buckets),
                    ),
                    blocks: w.position_sample_blocks,
                    bucket: 0,
                    written: 0,
                }),
            permutation,
            sizes,
            direction_sizes,
            sampler,
            ahead_kind: [IoKind::Read; LOOKAHEAD],
            ahead_sector: [0; LOOKAHEAD],
            ahead_sectors: [0; LOOKAHEAD],
            head: 0,
            seq: w.sequencer.as_ref().map(|q| {
                SeqState::new(
                    q,
                    span_start * SECTOR_BYTES,
                    span_sectors * SECTOR_BYTES,
                    drive_sectors * SECTOR_BYTES,
                )
            }),
            ahead_pass: VecDeque::new(),
        };
        for i in 0..LOOKAHEAD {
            let r = stream.generate();
            stream.put(i, r);
        }
        stream
    }

    /// The next request (direction, first sector, sectors), and the ones queued behind it (for
    /// prefetching).
    #[inline]
    pub(super) fn next(&mut self) -> (IoKind, u64, u64) {
        let r = self.generate();
        if self.seq.is_some() {
            self.ahead_pass.pop_front();
        }
        let h = self.head;
        let next = (
            self.ahead_kind[h],
            self.ahead_sector[h],
            self.ahead_sectors[h],
        );
        self.put(h, r);
        self.head = wrap(h + 1);
        next
    }

    /// The pass (1, 2, ...) of the request `next` returns; 1 without an offset modifier.
    #[inline]
    pub(super) fn next_pass(&self) -> u64 {
        self.ahead_pass.front().copied().unwrap_or(1)
    }

    /// The request `i` places behind the next one.
    #[inline]
    pub(super) fn peek(&self, i: usize) -> Option<(IoKind, u64, u64)> {
        (i < LOOKAHEAD).then(|| {
            let at = wrap(self.head + i);
            (
                self.ahead_kind[at],
                self.ahead_sector[at],
                self.ahead_sectors[at],
            )
        })
    }

    #[inline]
    fn put(&mut self, at: usize, (kind, sector, sectors): (IoKind, u64, u64)) {
        self.ahead_kind[at] = kind;
        self.ahead_sector[at] = sector;
        self.ahead_sectors[at] = sectors;
    }

    fn generate(&mut self) -> (IoKind, u64, u64) {
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
        let sectors = match &self.direction_sizes {
            Some(d) => d[kind as usize].next(&mut self.rng),
            None => self.sizes.next(&mut self.rng),
        };
        let sector = match self.pattern {
            _ if self.seq.is_some() => self.sequenced(sectors),
            Pattern::Random if self.permutation.is_none() => {
                let block = self.sampler.next(&mut self.rng);
                let sector = self.span_start + block * self.block_sectors;
                if sector + sectors > self.span_end {
                    // A large request near the end moves back to fit, keeping the alignment.
                    (self.span_end - sectors - self.span_start) / self.block_sectors
                        * self.block_sectors
                        + self.span_start
                } else {
                    sector
                }
            }
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
                self.span_start + block * self.block_sectors
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
                let l = self.span_start + (s.starts[s.bucket] + s.written) * self.block_sectors;
                s.written += 1;
                l
            }
            Pattern::Sequential => {
                if self.cursor + sectors > self.span_end {
                    self.cursor = self.span_start;
                }
                let l = self.cursor;
                self.cursor += sectors;
                l
            }
        };
        if let Some(q) = &self.seq {
            self.ahead_pass.push_back(q.pass);
        }
        (kind, sector, sectors)
    }

    /// The first sector of a request of `sectors` under fio's offset modifier: a random offset
    /// on the modifier's turn, else the one following on (or repeated); a new pass when the
    /// pass is over.
    fn sequenced(&mut self, sectors: u64) -> u64 {
        let len = sectors * SECTOR_BYTES;
        let random = self.pattern == Pattern::Random;
        loop {
            let q = self.seq.as_mut().expect("called with a sequencer");
            let pos = if random && q.random_turn() {
                None
            } else {
                match q.follow(len) {
                    Ok(Some(pos)) => Some(pos),
                    Ok(None) => {
                        self.new_pass();
                        continue;
                    }
                    Err(()) if !random => {
                        self.new_pass();
                        continue;
                    }
                    Err(()) => None, // fio draws a random offset instead
                }
            };
            let sector = match pos {
                Some(pos) => self.span_start + pos / SECTOR_BYTES,
                None => match self.random_sector(sectors) {
                    Some(sector) => sector,
                    None => {
                        self.new_pass(); // the random map is used up
                        continue;
                    }
                },
            };
            let q = self.seq.as_mut().expect("called with a sequencer");
            q.issued((sector - self.span_start) * SECTOR_BYTES, len);
            return sector;
        }
    }

    /// A new pass: back to the span's start, with a fresh random map (fio opens the file again).
    fn new_pass(&mut self) {
        if let Some(q) = self.seq.as_mut() {
            q.new_pass();
        }
        if self.permutation.is_some() {
            self.permutation = Some(Permutation::new(self.blocks_in_span, &mut self.rng));
        }
    }

    /// A random offset for a request of `sectors`, or `None` when the random map is used up.
    fn random_sector(&mut self, sectors: u64) -> Option<u64> {
        if let Some(p) = self.permutation.as_mut() {
            return p.next().map(|b| self.span_start + b * self.block_sectors);
        }
        let block = self.sampler.next(&mut self.rng);
        let sector = self.span_start + block * self.block_sectors;
        if sector + sectors > self.span_end {
            // A large request near the end moves back to fit, keeping the alignment.
            return Some(
                (self.span_end - sectors - self.span_start) / self.block_sectors
                    * self.block_sectors
                    + self.span_start,
            );
        }
        Some(sector)
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
