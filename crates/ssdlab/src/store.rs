//! The content store: what the host wrote, per 512-byte sector.
//!
//! The timing model (FTL, NAND) knows where data lives, not what it is. A drive with a store also
//! keeps the content the host wrote, so that reads can be checked (fio's `verify`) or answered
//! (a file system over `ssdlab serve`). The store is driven from the drive's request path
//! ([`Drive::submit_bytes`], [`Drive::submit`], [`Drive::trim_range`], [`Drive::secure_erase`]),
//! so what it holds is what the drive acknowledged.
//!
//! ```text
//!   sector s (512 B) -> the extent that holds s, if any (a BTreeMap by first sector):
//!       Anon(seq)      anonymous_token(seq, s)           any length: one request
//!       Run(origin, r) r.token(s - origin)               any length: one write (fio's verify)
//!       Sums([u64])    one checksum a sector             within one 4 KiB unit
//!       Bytes([u8])    the sectors' bytes (Data mode)    within one 4 KiB unit
//! ```
//!
//! * **Sparse, by extent.** Nothing is allocated per sector up front: memory grows with the
//!   writes that left content (about [`EXTENT_BYTES`] a write whose tokens follow a rule, whatever
//!   its length; content that follows none is listed, about 225 bytes per 4 KiB unit with
//!   checksums, 4.2 KB with data). An overwrite cuts the extents it covers (a listed extent's part
//!   is copied: at most a unit), TRIM and write-zeroes cut them; no extent holds a zero sector, so
//!   a unit holds content exactly when an extent reaches into it.
//! * **Zeros.** A sector never written, trimmed, or written with zeros reads as zeros: the
//!   behaviour of an NVMe drive that reports deterministic read-zero after deallocate (DLFEAT), and
//!   what fio's `trim_verify_zero` expects. TRIM and write-zeroes work at sector granularity here,
//!   even where the FTL keeps a partly trimmed 4 KiB unit mapped.
//! * **Two modes.** `Checksums` keeps a 64-bit checksum per sector: enough to verify. `Data` keeps
//!   the bytes: what a file system needs. Both answer [`Store::sum`] identically for the same
//!   content, so a check written against checksums works on either.
//! * **Synthetic content.** Workloads have no buffers: they write *tokens*. Token `t` (non-zero)
//!   stands for the 512 bytes [`synthetic_sector`]`(t)` (t itself in the first eight bytes, a
//!   stream derived from it after), whose checksum is `t`. A checksum store keeps `t`; a data
//!   store keeps the bytes. Requests that carry no content (a scenario's fill, a replayed trace)
//!   write *anonymous* tokens: non-zero and unique per request and sector, so an overwrite always
//!   changes the content.
//!
//! The checksum of real bytes ([`sector_sum`]) is 0 for zeros, `t` for `synthetic_sector(t)`, and
//! otherwise a 64-bit hash of the bytes (never 0).
//!
//! The store is off by default; a drive without one does no per-request work for it beyond one
//! test of an `Option`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::drive::{Drive, IoKind};
use crate::error::{Error, Result};
use crate::units::{SimTime, SECTORS_PER_UNIT, SECTOR_BYTES, UNIT_BYTES};

const SECTOR: usize = SECTOR_BYTES as usize;
const WORDS: usize = SECTOR / 8;
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// What the store keeps per sector.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StoreMode {
    /// A 64-bit checksum per sector (verification).
    Checksums,
    /// The sector's bytes (a file system; reads return them).
    Data,
}

impl std::str::FromStr for StoreMode {
    type Err = Error;

    fn from_str(s: &str) -> Result<StoreMode> {
        match s {
            "checksums" => Ok(StoreMode::Checksums),
            "data" => Ok(StoreMode::Data),
            other => Err(Error::Config(format!(
                "store mode '{other}' is not one of checksums, data"
            ))),
        }
    }
}

/// SplitMix64's finalizer: a bijection on `u64` with `mix64(0) == 0`.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The inverse of [`mix64`].
#[inline]
pub fn unmix64(mut z: u64) -> u64 {
    // Undo z ^= z >> 31, then the multiply by its inverse, and so on backwards.
    z ^= (z >> 31) ^ (z >> 62);
    z = z.wrapping_mul(0x3196_42B2_D24D_8EC3);
    z ^= (z >> 27) ^ (z >> 54);
    z = z.wrapping_mul(0x96DE_1B17_3F11_9089);
    z ^= (z >> 30) ^ (z >> 60);
    z
}

/// Word `i` (1..64) of the synthetic sector of token `t`.
#[inline]
fn synthetic_word(t: u64, i: usize) -> u64 {
    mix64(t.wrapping_add((i as u64).wrapping_mul(GOLDEN)) | 1)
}

/// The 512 bytes token `t` stands for: `t` (little-endian) in the first eight bytes, then 63
/// words derived from it. `synthetic_sector(0)` is all zeros.
pub fn synthetic_sector(t: u64) -> [u8; SECTOR] {
    let mut out = [0u8; SECTOR];
    if t == 0 {
        return out;
    }
    out[..8].copy_from_slice(&t.to_le_bytes());
    for i in 1..WORDS {
        out[i * 8..i * 8 + 8].copy_from_slice(&synthetic_word(t, i).to_le_bytes());
    }
    out
}

/// The checksum of one sector's bytes: 0 for zeros, `t` for [`synthetic_sector`]`(t)`, otherwise
/// a 64-bit hash of the bytes that is never 0.
pub fn sector_sum(bytes: &[u8]) -> u64 {
    assert_eq!(bytes.len(), SECTOR, "a sector is 512 bytes");
    let word = |i: usize| {
        u64::from_le_bytes(
            bytes[i * 8..i * 8 + 8]
                .try_into()
                .expect("eight bytes make a word"),
        )
    };
    let t = word(0);
    if t != 0 && (1..WORDS).all(|i| word(i) == synthetic_word(t, i)) {
        return t;
    }
    let mut h: u64 = 0x243F_6A88_85A3_08D3;
    let mut nonzero = false;
    for i in 0..WORDS {
        let w = word(i);
        nonzero |= w != 0;
        h = (h.rotate_left(23) ^ w).wrapping_mul(0x9FB2_1C65_1E98_DF25);
    }
    if !nonzero {
        return 0;
    }
    match mix64(h) {
        0 => 1,
        s => s,
    }
}

/// Content whose per-sector tokens follow from a few numbers: sector `rel` (counted from the
/// write's first sector) of a write made of chunks of `period` sectors holds `head` if it starts a
/// chunk and `head` is not 0, else `mix64(base + (rel % period) * step)` (wrapping). fio's verify
/// content without a pattern is such a run (a header, then data sectors numbered in the chunk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub period: u64,
    pub head: u64,
    pub base: u64,
    pub step: u64,
}

impl Run {
    /// The token of sector `rel` of the write.
    #[inline]
    pub fn token(&self, rel: u64) -> u64 {
        let pos = rel % self.period;
        if pos == 0 && self.head != 0 {
            self.head
        } else {
            mix64(self.base.wrapping_add(pos.wrapping_mul(self.step)))
        }
    }

    /// Whether some sector of a write of `count` sectors would be zero (the store keeps no zero
    /// sectors in an extent: such a write is stored sector by sector).
    fn has_zero(&self, count: u64) -> bool {
        let from = u64::from(self.head != 0);
        (from..self.period.min(count))
            .any(|pos| self.base.wrapping_add(pos.wrapping_mul(self.step)) == 0)
    }
}

/// What an extent holds. `Anon` and `Run` describe any length in a few words; `Sums` and
/// `Bytes` list their sectors and never cross a 4 KiB unit boundary, so splitting one copies at
/// most a unit.
#[derive(Clone, Debug)]
enum Content {
    /// An anonymous request's sectors: [`anonymous_token`]`(seq, s)`.
    Anon(u64),
    /// A [`Run`] written from sector `origin`.
    Run { origin: u64, run: Run },
    /// One checksum per sector (none of them 0).
    Sums(Box<[u64]>),
    /// The sectors' bytes (`Data` mode; no sector all zeros).
    Bytes(Box<[u8]>),
}

/// A stretch of sectors that all hold content, from its key (a sector number) on.
#[derive(Clone, Debug)]
struct Extent {
    len: u64,
    content: Content,
}

/// The allocator's overhead per heap block (glibc: a 16-byte header, 16-byte rounding).
const ALLOC_OVERHEAD: u64 = 16;

impl Extent {
    /// The checksum of sector `s` of this extent, which starts at `start`.
    #[inline]
    fn sum_at(&self, start: u64, s: u64) -> u64 {
        match &self.content {
            Content::Anon(seq) => anonymous_token(*seq, s),
            Content::Run { origin, run } => run.token(s - origin),
            Content::Sums(v) => v[(s - start) as usize],
            Content::Bytes(b) => {
                let i = (s - start) as usize * SECTOR;
                sector_sum(&b[i..i + SECTOR])
            }
        }
    }

    /// The extent's sectors `from..to` (absolute; within it), as an extent of its own.
    fn slice(&self, start: u64, from: u64, to: u64) -> Extent {
        let (a, b) = ((from - start) as usize, (to - start) as usize);
        let content = match &self.content {
            Content::Anon(seq) => Content::Anon(*seq),
            Content::Run { origin, run } => Content::Run {
                origin: *origin,
                run: *run,
            },
            Content::Sums(v) => Content::Sums(v[a..b].into()),
            Content::Bytes(d) => Content::Bytes(d[a * SECTOR..b * SECTOR].into()),
        };
        Extent {
            len: to - from,
            content,
        }
    }

    /// Heap bytes the extent's content takes beyond its map entry.
    fn heap_bytes(&self) -> u64 {
        match &self.content {
            Content::Anon(_) | Content::Run { .. } => 0,
            Content::Sums(v) => v.len() as u64 * 8 + ALLOC_OVERHEAD,
            Content::Bytes(b) => b.len() as u64 + ALLOC_OVERHEAD,
        }
    }
}

/// Memory one extent's map entry takes, about: a B-tree leaf of 11 entries (keys, values, a
/// parent link) over the 6 entries a leaf keeps when it splits at its end (the tree is filled
/// in ascending order within each writer's stream), plus the allocator's header and the inner
/// nodes (about one per six leaves). Measured against the allocator in `tests/store_memory.rs`.
pub const EXTENT_BYTES: u64 = {
    let leaf = 16 + 11 * (8 + std::mem::size_of::<Extent>() as u64) + ALLOC_OVERHEAD;
    let inner = leaf + 12 * 8;
    (leaf + inner / 6) / 6
};

/// What the host wrote, per 512-byte sector, sparse (see the module doc).
#[derive(Clone, Debug)]
pub struct Store {
    mode: StoreMode,
    sectors: u64,
    /// Non-overlapping extents of sectors that hold content, by first sector; a sector in none
    /// reads zero.
    extents: BTreeMap<u64, Extent>,
    /// The extents' heap bytes beyond their entries (`Sums`, `Bytes`).
    heap: u64,
    /// At most this much memory (`memory_bytes`) may hold content (the memory budget), if set.
    max_bytes: Option<u64>,
    /// Requests written with anonymous content so far (their tokens' sequence number).
    anonymous: u64,
}

impl Store {
    /// An empty store (every sector zero) over `sectors` 512-byte sectors, a whole number of
    /// 4 KiB units.
    pub fn new(mode: StoreMode, sectors: u64) -> Result<Store> {
        if sectors == 0 || sectors % SECTORS_PER_UNIT != 0 {
            return Err(Error::Config(format!(
                "a store covers whole 4 KiB units (a multiple of {SECTORS_PER_UNIT} sectors), got {sectors} sectors"
            )));
        }
        Ok(Store {
            mode,
            sectors,
            extents: BTreeMap::new(),
            heap: 0,
            max_bytes: None,
            anonymous: 0,
        })
    }

    /// Refuses (with an error naming the budget) writes that would make the store hold more than
    /// about `bytes` of memory.
    pub fn set_memory_budget(&mut self, bytes: u64) {
        self.max_bytes = Some(bytes);
    }

    pub fn mode(&self) -> StoreMode {
        self.mode
    }

    /// Sectors covered.
    pub fn sectors(&self) -> u64 {
        self.sectors
    }

    /// Extents held (records in the store's map).
    pub fn extents_held(&self) -> u64 {
        self.extents.len() as u64
    }

    /// The units that hold content, in ascending order (each once).
    fn units(&self) -> impl Iterator<Item = u64> + '_ {
        let mut next = 0u64; // the first unit not yet given
        self.extents.iter().flat_map(move |(&s, e)| {
            let a = (s / SECTORS_PER_UNIT).max(next);
            let b = (s + e.len - 1) / SECTORS_PER_UNIT + 1;
            next = next.max(b);
            a..b
        })
    }

    /// 4 KiB units that hold content (not all zeros) at the moment (a walk over the extents).
    pub fn units_held(&self) -> u64 {
        let mut next = 0u64;
        let mut n = 0;
        for (&s, e) in &self.extents {
            let a = (s / SECTORS_PER_UNIT).max(next);
            let b = (s + e.len - 1) / SECTORS_PER_UNIT + 1;
            n += b.saturating_sub(a);
            next = next.max(b);
        }
        n
    }

    /// Whether 4 KiB unit `unit` holds content (a unit that does not reads all zeros).
    pub fn unit_held(&self, unit: u64) -> bool {
        let (a, b) = (unit * SECTORS_PER_UNIT, (unit + 1) * SECTORS_PER_UNIT);
        self.extents
            .range(..b)
            .next_back()
            .is_some_and(|(&s, e)| s + e.len > a)
    }

    /// The units that hold content, in ascending order.
    pub fn held_units(&self) -> Vec<u64> {
        self.units().collect()
    }

    /// Memory one 4 KiB unit of content that follows no rule costs, about: its extent's entry and
    /// its eight sums (`Checksums`) or 4 KiB of bytes (`Data`). Content the store can describe
    /// (anonymous writes, runs) costs [`EXTENT_BYTES`] a write, whatever its length.
    pub fn bytes_per_unit(&self) -> u64 {
        match self.mode {
            StoreMode::Checksums => EXTENT_BYTES + 8 * SECTORS_PER_UNIT + ALLOC_OVERHEAD,
            StoreMode::Data => EXTENT_BYTES + UNIT_BYTES + ALLOC_OVERHEAD,
        }
    }

    /// The memory the store uses now, in bytes, about: its map's entries ([`EXTENT_BYTES`] each)
    /// and the sums or bytes listed in them.
    pub fn memory_bytes(&self) -> u64 {
        std::mem::size_of::<Store>() as u64 + self.extents.len() as u64 * EXTENT_BYTES + self.heap
    }

    /// Forgets everything: every sector reads zero again (a secure erase or format).
    pub fn clear(&mut self) {
        self.extents = BTreeMap::new();
        self.heap = 0;
    }

    fn check(&self, first: u64, count: u64) -> Result<()> {
        if first
            .checked_add(count)
            .is_none_or(|end| end > self.sectors)
        {
            return Err(Error::Workload(format!(
                "sectors {first}..{} are outside the store's {} sectors",
                first.saturating_add(count),
                self.sectors
            )));
        }
        Ok(())
    }

    /// Refuses a write that adds `extents` entries and `heap` bytes past the budget (checked
    /// before anything is written: a refused write leaves the store as it was).
    fn room(&self, first: u64, end: u64, extents: u64, heap: u64) -> Result<()> {
        let Some(max) = self.max_bytes else {
            return Ok(());
        };
        // A write inside an extent splits it in two (a listed one: each part keeps its sectors).
        let split = self
            .extents
            .range(..first)
            .next_back()
            .filter(|(&s, e)| s + e.len > end)
            .map_or(0, |(_, e)| EXTENT_BYTES + e.heap_bytes());
        if self.memory_bytes() + split + extents * EXTENT_BYTES + heap <= max {
            return Ok(());
        }
        Err(Error::Workload(format!(
            "the content store would need more than its memory budget ({} MB in {} extents); \
             simulate a smaller drive (--capacity) or write less",
            self.memory_bytes() / 1_000_000,
            self.extents.len()
        )))
    }

    fn insert(&mut self, start: u64, e: Extent) {
        self.heap += e.heap_bytes();
        let old = self.extents.insert(start, e);
        debug_assert!(old.is_none(), "extents overlap at sector {start}");
    }

    /// Makes `first..end` hold nothing: extents inside it go, extents across its ends are cut.
    fn cut(&mut self, first: u64, end: u64) {
        if first >= end {
            return;
        }
        // An extent that starts before `first` and reaches into the range.
        if let Some((&s, e)) = self.extents.range_mut(..first).next_back() {
            let e_end = s + e.len;
            if e_end > first {
                let right = (e_end > end).then(|| e.slice(s, end, e_end));
                let left = e.slice(s, s, first);
                let freed = e.heap_bytes() - left.heap_bytes();
                *e = left;
                self.heap -= freed;
                if let Some(r) = right {
                    self.insert(end, r);
                    return;
                }
            }
        }
        // Extents that start inside the range.
        while let Some((&s, _)) = self.extents.range(first..end).next() {
            let e = self.extents.remove(&s).expect("the extent just found");
            self.heap -= e.heap_bytes();
            if s + e.len > end {
                let r = e.slice(s, end, s + e.len);
                self.insert(end, r);
            }
        }
    }

    /// Stores explicit per-sector sums (`tokens[i]` for sector `first + i`) or bytes, for a range
    /// already cut: each run of non-zero sectors within a unit becomes one extent.
    fn put_listed(&mut self, first: u64, tokens: &[u64], bytes: Option<&[u8]>) {
        let end = first + tokens.len() as u64;
        let mut s = first;
        while s < end {
            if tokens[(s - first) as usize] == 0 {
                s += 1;
                continue;
            }
            let unit_end = ((s / SECTORS_PER_UNIT + 1) * SECTORS_PER_UNIT).min(end);
            let mut e = s + 1;
            while e < unit_end && tokens[(e - first) as usize] != 0 {
                e += 1;
            }
            let (a, b) = ((s - first) as usize, (e - first) as usize);
            let content = match bytes {
                Some(d) => Content::Bytes(d[a * SECTOR..b * SECTOR].into()),
                None => Content::Sums(tokens[a..b].into()),
            };
            self.insert(
                s,
                Extent {
                    len: e - s,
                    content,
                },
            );
            s = e;
        }
    }

    /// Entries and heap bytes that `tokens` take when listed (see `put_listed`).
    fn listed_cost(first: u64, tokens: &[u64], per_sector: u64) -> (u64, u64) {
        let (mut n, mut heap) = (0, 0);
        for (i, &t) in tokens.iter().enumerate() {
            let s = first + i as u64;
            if t == 0 {
                continue;
            }
            let starts = i == 0 || tokens[i - 1] == 0 || s % SECTORS_PER_UNIT == 0;
            if starts {
                n += 1;
                heap += ALLOC_OVERHEAD;
            }
            heap += per_sector;
        }
        (n, heap)
    }

    /// Writes synthetic content: sector `s` of `first..first + count` gets `token(s)` (0 writes
    /// zeros). See the module doc. The sums are listed per sector; content that follows a rule
    /// is cheaper written with [`Store::write_run`] or [`Store::write_anonymous`].
    pub fn write_tokens(
        &mut self,
        first: u64,
        count: u64,
        token: impl FnMut(u64) -> u64,
    ) -> Result<()> {
        self.check(first, count)?;
        let tokens: Vec<u64> = (first..first + count).map(token).collect();
        let (n, heap) = Store::listed_cost(first, &tokens, 8);
        self.room(first, first + count, n, heap)?;
        self.cut(first, first + count);
        self.put_listed(first, &tokens, None);
        Ok(())
    }

    /// Writes `run` over `first..first + count` (sector `first + rel` gets `run.token(rel)`): one
    /// extent, whatever its length.
    pub fn write_run(&mut self, first: u64, count: u64, run: Run) -> Result<()> {
        if run.period == 0 {
            return Err(Error::Workload(
                "a run's period is at least one sector".into(),
            ));
        }
        if run.has_zero(count) {
            return self.write_tokens(first, count, |s| run.token(s - first));
        }
        self.put(first, count, Content::Run { origin: first, run })
    }

    /// Puts `content` over `first..first + count` as one extent (after the range check and the
    /// memory budget's), replacing whatever was there.
    fn put(&mut self, first: u64, count: u64, content: Content) -> Result<()> {
        self.check(first, count)?;
        if count == 0 {
            return Ok(());
        }
        self.room(first, first + count, 1, 0)?;
        self.cut(first, first + count);
        self.insert(
            first,
            Extent {
                len: count,
                content,
            },
        );
        Ok(())
    }

    /// Writes `bytes` (a whole number of sectors) from sector `first`.
    pub fn write(&mut self, first: u64, bytes: &[u8]) -> Result<()> {
        if bytes.len() % SECTOR != 0 {
            return Err(Error::Workload(format!(
                "a write to the store is whole 512-byte sectors, got {} bytes",
                bytes.len()
            )));
        }
        let count = (bytes.len() / SECTOR) as u64;
        self.check(first, count)?;
        let sums: Vec<u64> = bytes.chunks_exact(SECTOR).map(sector_sum).collect();
        let (listed, per_sector) = match self.mode {
            StoreMode::Checksums => (None, 8),
            StoreMode::Data => (Some(bytes), SECTOR_BYTES),
        };
        let (n, heap) = Store::listed_cost(first, &sums, per_sector);
        self.room(first, first + count, n, heap)?;
        self.cut(first, first + count);
        self.put_listed(first, &sums, listed);
        Ok(())
    }

    /// Makes `first..first + count` read as zeros (TRIM / deallocate, write-zeroes).
    pub fn zero(&mut self, first: u64, count: u64) -> Result<()> {
        self.check(first, count)?;
        self.room(first, first + count, 0, 0)?;
        self.cut(first, first + count);
        Ok(())
    }

    /// The checksum of sector `s` (0: zeros). The same for the same content in either mode.
    pub fn sum(&self, s: u64) -> u64 {
        match self.extents.range(..=s).next_back() {
            Some((&start, e)) if s < start + e.len => e.sum_at(start, s),
            _ => 0,
        }
    }

    /// The checksums of sectors `first..first + count` (one walk over the extents, rather than a
    /// look-up a sector).
    pub fn sums(&self, first: u64, count: u64) -> SectorSums<'_> {
        let end = first.saturating_add(count);
        let mut sums = vec![0u64; (end - first) as usize];
        let before = self.extents.range(..first).next_back();
        for (&start, e) in before.into_iter().chain(self.extents.range(first..end)) {
            for s in start.max(first)..(start + e.len).min(end) {
                sums[(s - first) as usize] = e.sum_at(start, s);
            }
        }
        SectorSums {
            store: self,
            first,
            sums,
        }
    }

    /// Reads the bytes of `out.len() / 512` sectors from `first` (a data store only).
    pub fn read(&self, first: u64, out: &mut [u8]) -> Result<()> {
        if self.mode != StoreMode::Data {
            return Err(Error::Workload(
                "this store keeps checksums, not data; reading bytes needs a data store".into(),
            ));
        }
        if out.len() % SECTOR != 0 {
            return Err(Error::Workload(format!(
                "a read from the store is whole 512-byte sectors, got {} bytes",
                out.len()
            )));
        }
        let count = (out.len() / SECTOR) as u64;
        self.check(first, count)?;
        out.fill(0);
        let end = first + count;
        let before = self.extents.range(..first).next_back();
        for (&start, e) in before.into_iter().chain(self.extents.range(first..end)) {
            for s in start.max(first)..(start + e.len).min(end) {
                let dst = &mut out[((s - first) as usize) * SECTOR..][..SECTOR];
                match &e.content {
                    Content::Bytes(b) => {
                        dst.copy_from_slice(&b[(s - start) as usize * SECTOR..][..SECTOR]);
                    }
                    _ => dst.copy_from_slice(&synthetic_sector(e.sum_at(start, s))),
                }
            }
        }
        Ok(())
    }

    /// Writes anonymous content (unique per call and sector, never zero) over
    /// `first..first + count`: a request that carries no content of its own. One extent.
    pub fn write_anonymous(&mut self, first: u64, count: u64) -> Result<()> {
        self.anonymous += 1;
        self.put(first, count, Content::Anon(self.anonymous))
    }
}

/// The checksums of a range of sectors, read from a store at once ([`Store::sums`]); a sector
/// outside the range is looked up in the store.
pub struct SectorSums<'a> {
    store: &'a Store,
    first: u64,
    sums: Vec<u64>,
}

impl SectorSums<'_> {
    /// The checksum of sector `s` (0: zeros), as [`Store::sum`] gives it.
    #[inline]
    pub fn sum(&self, s: u64) -> u64 {
        match s.checked_sub(self.first) {
            Some(i) if (i as usize) < self.sums.len() => self.sums[i as usize],
            _ => self.store.sum(s),
        }
    }
}

/// The token of sector `s` of the `seq`-th anonymous request: `mix64` of a value whose top 16
/// bits are 0 (no writer: see `workload::verify`), non-zero.
pub fn anonymous_token(seq: u64, s: u64) -> u64 {
    let packed = ((seq.wrapping_mul(GOLDEN) ^ s.wrapping_mul(0xD6E8_FEB8_6659_FD93))
        & ((1u64 << 48) - 1))
        | 1;
    mix64(packed)
}

/// What a request given to [`Drive::submit_payload`] carries for the content store.
#[derive(Clone, Copy, Debug)]
pub enum Payload<'a> {
    /// The host's bytes (a write: exactly the request's length).
    Bytes(&'a [u8]),
    /// Zeros (a write of zeros, or a TRIM: the range reads zero after it).
    Zeros,
    /// Nothing (a read), or content the store makes up (a write: anonymous tokens).
    None,
}

impl Drive {
    /// Serves a request whose content is known ([`Payload`]): the store (if the drive has one)
    /// takes the bytes or zeros, then the request is timed exactly as [`Drive::submit_bytes`]
    /// times it. A write of [`Payload::Zeros`] is timed as a write (the drive programs zeros).
    pub fn submit_payload(
        &mut self,
        kind: IoKind,
        offset: u64,
        length: u64,
        payload: Payload<'_>,
        t: SimTime,
    ) -> Result<(SimTime, crate::drive::Touched)> {
        if offset % SECTOR_BYTES != 0 || length % SECTOR_BYTES != 0 {
            return Err(Error::Workload(format!(
                "a request is whole 512-byte sectors, got {length} bytes at offset {offset}"
            )));
        }
        if let Payload::Bytes(b) = payload {
            if b.len() as u64 != length {
                return Err(Error::Workload(format!(
                    "a write of {length} bytes carried {} bytes",
                    b.len()
                )));
            }
        }
        if let Some(store) = self.store.as_deref_mut() {
            let (first, count) = (offset / SECTOR_BYTES, length / SECTOR_BYTES);
            match (kind, payload) {
                (IoKind::Read, _) => {}
                (IoKind::Write, Payload::Bytes(b)) => store.write(first, b)?,
                (IoKind::Write, Payload::None) => store.write_anonymous(first, count)?,
                (IoKind::Write | IoKind::Trim, Payload::Zeros) | (IoKind::Trim, _) => {
                    store.zero(first, count)?;
                }
            }
        }
        self.submit_bytes_timed(kind, offset, length, 1.0, t)
    }

    /// Gives the drive a content store of `mode` over its user space (replacing any), empty:
    /// every sector reads zero. Without one the drive keeps no content.
    pub fn enable_store(&mut self, mode: StoreMode) -> Result<()> {
        let mut store = Store::new(mode, self.user_bytes() / SECTOR_BYTES)?;
        if let Some(available) = crate::memory::available_memory() {
            store.set_memory_budget(available / 10 * 8);
        }
        self.store = Some(Box::new(store));
        Ok(())
    }

    /// The content store, if the drive has one.
    pub fn store(&self) -> Option<&Store> {
        self.store.as_deref()
    }

    /// The content store, if the drive has one: a workload that knows what it writes
    /// (`workload::verify`) writes its tokens here right after the request.
    pub fn store_mut(&mut self) -> Option<&mut Store> {
        self.store.as_deref_mut()
    }

    /// What a request does to the store (called from the request path only when there is one):
    /// a write leaves anonymous content, a TRIM zeros, a read nothing.
    #[inline(never)]
    pub(crate) fn store_request(&mut self, kind: IoKind, offset: u64, length: u64) -> Result<()> {
        let Some(store) = self.store.as_deref_mut() else {
            return Ok(());
        };
        let (first, count) = (offset / SECTOR_BYTES, length / SECTOR_BYTES);
        match kind {
            IoKind::Read => Ok(()),
            IoKind::Write => store.write_anonymous(first, count),
            IoKind::Trim => store.zero(first, count),
        }
    }

    /// Checks the store against the FTL's mapping: every unit that holds content must be mapped
    /// (a unit the FTL unmapped reads zero). Returns the first unit that breaks it, if any (a
    /// test's debug assertion).
    pub fn check_store(&self) -> std::result::Result<(), String> {
        let Some(store) = self.store.as_deref() else {
            return Ok(());
        };
        for unit in store.held_units() {
            if self
                .ftl()
                .mapping()
                .current(unit as crate::units::Lpn)
                .is_none()
            {
                return Err(format!(
                    "unit {unit} (sectors {}..{}) holds content in the store but the FTL has it unmapped",
                    unit * SECTORS_PER_UNIT,
                    (unit + 1) * SECTORS_PER_UNIT
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "store_reference.rs"]
mod reference;

#[cfg(test)]
mod tests {
    use super::*;

    const GB: u64 = 1_000_000_000;

    #[test]
    fn mix_inverts() {
        for x in [0u64, 1, 2, 0xacca, u64::MAX, GOLDEN, 1 << 63] {
            assert_eq!(unmix64(mix64(x)), x);
            assert_eq!(mix64(unmix64(x)), x);
        }
        assert_eq!(mix64(0), 0);
    }

    #[test]
    fn sums_are_functions_of_content() {
        assert_eq!(sector_sum(&[0u8; SECTOR]), 0);
        for t in [1u64, 7, 0xdead_beef, u64::MAX] {
            assert_eq!(sector_sum(&synthetic_sector(t)), t);
        }
        let mut b = synthetic_sector(99);
        b[300] ^= 1;
        let s = sector_sum(&b);
        assert!(s != 0 && s != 99);
        let mut c = [0u8; SECTOR];
        c[511] = 1;
        assert_ne!(sector_sum(&c), 0);
    }

    /// Writing 1,000 scattered sectors of a 256 GB drive costs kilobytes, not the 4 GB a dense
    /// table of sums would take; trimming them gives the memory back.
    #[test]
    fn sparse_memory_bound() {
        for mode in [StoreMode::Checksums, StoreMode::Data] {
            let sectors = 256 * GB / 4096 * 8;
            let mut s = Store::new(mode, sectors).unwrap();
            let empty = s.memory_bytes();
            assert!(empty < 1024, "{mode:?}: an empty store takes {empty} bytes");
            let mut x = 12_345u64;
            for _ in 0..1000 {
                x = mix64(x + 1);
                s.write_tokens(x % sectors, 1, |_| 5).unwrap();
            }
            assert_eq!(s.units_held(), 1000);
            let used = s.memory_bytes();
            let bound = match mode {
                StoreMode::Checksums => 256 * 1024,
                StoreMode::Data => 1000 * 4112 + 64 * 1024,
            };
            assert!(used < bound, "{mode:?}: {used} bytes for 1,000 sectors");
            s.zero(0, sectors).unwrap();
            assert_eq!(s.units_held(), 0);
        }
    }

    #[test]
    fn round_trip_and_zero_reads() {
        let mut s = Store::new(StoreMode::Data, 64).unwrap();
        let bytes: Vec<u8> = (0..3 * SECTOR).map(|i| (i * 7 + 3) as u8).collect();
        s.write(5, &bytes).unwrap(); // sectors 5..8: crosses a unit boundary
        let mut out = vec![0xffu8; 5 * SECTOR];
        s.read(4, &mut out).unwrap();
        assert!(
            out[..SECTOR].iter().all(|&b| b == 0),
            "never written reads zero"
        );
        assert_eq!(&out[SECTOR..4 * SECTOR], &bytes[..]);
        assert!(out[4 * SECTOR..].iter().all(|&b| b == 0));
        assert_eq!(s.sum(6), sector_sum(&bytes[SECTOR..2 * SECTOR]));
        assert_eq!(s.sum(4), 0);
        // A checksum store agrees on every sum.
        let mut c = Store::new(StoreMode::Checksums, 64).unwrap();
        c.write(5, &bytes).unwrap();
        for x in 0..64 {
            assert_eq!(c.sum(x), s.sum(x), "sector {x}");
        }
        assert!(
            c.read(0, &mut out).is_err(),
            "a checksum store has no bytes"
        );
    }

    #[test]
    fn trim_reads_zero_at_sector_granularity() {
        for mode in [StoreMode::Checksums, StoreMode::Data] {
            let mut s = Store::new(mode, 64).unwrap();
            s.write_tokens(0, 24, |x| x + 100).unwrap();
            s.zero(3, 2).unwrap(); // part of unit 0
            s.zero(8, 8).unwrap(); // unit 1 whole
            for x in 0..24 {
                let want = if (3..5).contains(&x) || (8..16).contains(&x) {
                    0
                } else {
                    x + 100
                };
                assert_eq!(s.sum(x), want, "{mode:?} sector {x}");
            }
            assert_eq!(s.units_held(), 2);
        }
    }

    /// A 512-byte overwrite of part of a unit changes that sector only.
    #[test]
    fn partial_unit_overwrite() {
        for mode in [StoreMode::Checksums, StoreMode::Data] {
            let mut s = Store::new(mode, 16).unwrap();
            s.write_tokens(0, 8, |x| 1000 + x).unwrap();
            s.write_tokens(5, 1, |_| 42).unwrap();
            let got: Vec<u64> = (0..8).map(|x| s.sum(x)).collect();
            assert_eq!(got, vec![1000, 1001, 1002, 1003, 1004, 42, 1006, 1007]);
            // Zeros written over a whole unit free it.
            s.write(0, &[0u8; 8 * SECTOR]).unwrap();
            assert_eq!(s.units_held(), 0);
        }
    }

    #[test]
    fn anonymous_content_changes_on_every_write() {
        let mut s = Store::new(StoreMode::Checksums, 16).unwrap();
        s.write_anonymous(0, 8).unwrap();
        let first: Vec<u64> = (0..8).map(|x| s.sum(x)).collect();
        s.write_anonymous(0, 8).unwrap();
        assert!(first.iter().all(|&v| v != 0));
        assert!((0..8).all(|x| s.sum(x) != first[x as usize]));
        assert!((0..8).all(|x| unmix64(s.sum(x)) >> 48 == 0));
        // Deterministic: the same calls give the same sums.
        let mut t = Store::new(StoreMode::Checksums, 16).unwrap();
        t.write_anonymous(0, 8).unwrap();
        assert_eq!((0..8).map(|x| t.sum(x)).collect::<Vec<_>>(), first);
    }

    /// `submit_payload` stores the host's bytes and zeros exactly, times a request as
    /// `submit_bytes` does, and a flush waits for the buffered data's programs.
    #[test]
    fn payloads_are_stored_and_timed_as_requests() {
        let cfg = crate::DriveConfig::default()
            .with_user_capacity(1 << 30)
            .unwrap();
        let mut a = Drive::new(&cfg, 1).unwrap();
        let mut b = Drive::new(&cfg, 1).unwrap();
        a.enable_store(StoreMode::Data).unwrap();
        let bytes: Vec<u8> = (0..8192u32).map(|i| (i % 253) as u8 + 1).collect();
        let t = SimTime::ZERO;
        let (ta, ua) = a
            .submit_payload(IoKind::Write, 4096, 8192, Payload::Bytes(&bytes), t)
            .unwrap();
        let (tb, ub) = b.submit_bytes(IoKind::Write, 4096, 8192, 1.0, t).unwrap();
        assert_eq!((ta, ua), (tb, ub));
        let mut out = vec![0u8; 8192];
        a.store().unwrap().read(8, &mut out).unwrap();
        assert_eq!(out, bytes);
        a.submit_payload(IoKind::Write, 4096 + 512, 1024, Payload::Zeros, ta)
            .unwrap();
        a.store().unwrap().read(8, &mut out).unwrap();
        assert!(out[512..1536].iter().all(|&x| x == 0) && out[..512] == bytes[..512]);
        assert!(a
            .submit_payload(IoKind::Write, 100, 512, Payload::None, ta)
            .is_err());
        // A megabyte is acknowledged from the buffer; the flush waits for its programs (the last,
        // partly filled host page is taken as covered by power-loss protection).
        let big = vec![9u8; 1 << 20];
        let (acked, _) = a
            .submit_payload(IoKind::Write, 1 << 20, 1 << 20, Payload::Bytes(&big), ta)
            .unwrap();
        let flushed = a.flush(acked);
        assert!(
            flushed.ns() > acked.ns() + 500_000,
            "{flushed:?} vs {acked:?}"
        );
        assert_eq!(a.flush(flushed), flushed + a.layout().t_command);
    }

    #[test]
    fn out_of_range_and_budget_are_errors() {
        let mut s = Store::new(StoreMode::Checksums, 16).unwrap();
        assert!(s.write_tokens(10, 7, |_| 1).is_err());
        assert!(s.zero(u64::MAX, 2).is_err());
        assert!(Store::new(StoreMode::Data, 12).is_err());
        s.set_memory_budget(s.memory_bytes() + s.bytes_per_unit());
        s.write_tokens(0, 8, |_| 1).unwrap();
        let e = s.write_tokens(8, 1, |_| 1).unwrap_err().to_string();
        assert!(e.contains("memory budget"), "{e}");
    }
}

/// The extent store against the per-unit store it replaced (`store_reference.rs`): the same
/// sums, held units, bytes and errors after every step of random sequences of writes (tokens,
/// runs, anonymous, bytes; whole, partial and 512-byte), overwrites, TRIMs and write-zeroes, in
/// both modes.
#[cfg(test)]
mod model {
    use super::reference::RefStore;
    use super::*;
    use proptest::prelude::*;

    const SECTORS: u64 = 96;

    #[derive(Clone, Debug)]
    enum Op {
        Tokens(u64, u64, Vec<u64>),
        Run(u64, u64, Run),
        Anon(u64, u64),
        Bytes(u64, Vec<u8>),
        Zero(u64, u64),
    }

    /// A range, mostly inside the store, sometimes past its end.
    fn range() -> impl Strategy<Value = (u64, u64)> {
        prop_oneof![
            (0..SECTORS, 0..=24u64),
            (0..SECTORS / 8, 1..=3u64).prop_map(|(u, n)| (u * 8, n * 8)),
            (0..SECTORS, 1..=1u64),
            (SECTORS - 8..SECTORS + 8, 0..=16u64),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (
                range(),
                prop::collection::vec(prop_oneof![Just(0u64), 1..5u64, any::<u64>()], 24)
            )
                .prop_map(|((f, c), t)| Op::Tokens(f, c, t)),
            (
                range(),
                1..10u64,
                prop_oneof![Just(0u64), any::<u64>()],
                prop_oneof![Just(0u64), Just(u64::MAX - 1), any::<u64>()],
                prop_oneof![Just(0u64), Just(1u64), Just(1 << 34), any::<u64>()]
            )
                .prop_map(|((f, c), period, head, base, step)| Op::Run(
                    f,
                    c,
                    Run {
                        period,
                        head,
                        base,
                        step
                    }
                )),
            range().prop_map(|(f, c)| Op::Anon(f, c)),
            (range(), 0..4u8, any::<u64>()).prop_map(|((f, c), kind, seed)| {
                // Zeros, synthetic sectors, or other bytes, sector by sector.
                let mut b = vec![0u8; (c * 512) as usize];
                for (i, sec) in b.chunks_exact_mut(512).enumerate() {
                    let x = mix64(seed ^ i as u64);
                    match (kind + (x % 3) as u8) % 4 {
                        0 => {}
                        1 => sec.copy_from_slice(&synthetic_sector(x | 1)),
                        2 => sec[(x % 512) as usize] = 1,
                        _ => sec
                            .iter_mut()
                            .enumerate()
                            .for_each(|(j, v)| *v = (x >> (j % 8)) as u8),
                    }
                }
                Op::Bytes(f, b)
            }),
            range().prop_map(|(f, c)| Op::Zero(f, c)),
        ]
    }

    fn apply(s: &mut Store, r: &mut RefStore, op: &Op) {
        let (a, b) = match op {
            Op::Tokens(f, c, t) => {
                let f0 = *f;
                (
                    s.write_tokens(*f, *c, |x| t[(x - f0) as usize]).is_ok(),
                    r.write_tokens(*f, *c, |x| t[(x - f0) as usize]).is_ok(),
                )
            }
            Op::Run(f, c, run) => {
                let f0 = *f;
                (
                    s.write_run(*f, *c, *run).is_ok(),
                    r.write_tokens(*f, *c, |x| run.token(x - f0)).is_ok(),
                )
            }
            Op::Anon(f, c) => (
                s.write_anonymous(*f, *c).is_ok(),
                r.write_anonymous(*f, *c).is_ok(),
            ),
            Op::Bytes(f, b) => (s.write(*f, b).is_ok(), r.write(*f, b).is_ok()),
            Op::Zero(f, c) => (s.zero(*f, *c).is_ok(), r.zero(*f, *c).is_ok()),
        };
        assert_eq!(a, b, "{op:?}: accepted by one store only");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn same_sums_as_the_per_unit_store(
            data in any::<bool>(),
            ops in prop::collection::vec(op(), 1..40),
        ) {
            let mode = if data { StoreMode::Data } else { StoreMode::Checksums };
            let mut s = Store::new(mode, SECTORS).unwrap();
            let mut r = RefStore::new(mode, SECTORS).unwrap();
            for (i, op) in ops.iter().enumerate() {
                apply(&mut s, &mut r, op);
                for x in 0..SECTORS + 2 {
                    prop_assert_eq!(s.sum(x), r.sum(x), "step {} {:?}: sector {}", i, op, x);
                }
                let many = s.sums(0, SECTORS);
                for x in 0..SECTORS + 2 {
                    prop_assert_eq!(many.sum(x), r.sum(x), "sums(): sector {}", x);
                }
                prop_assert_eq!(s.units_held(), r.units_held());
                prop_assert_eq!(s.held_units(), r.held_units());
                for u in 0..SECTORS / 8 {
                    prop_assert_eq!(s.unit_held(u), r.unit_held(u));
                }
                if data {
                    let (mut x, mut y) = (vec![1u8; 40 * 512], vec![2u8; 40 * 512]);
                    let at = (i as u64 * 13) % (SECTORS - 40);
                    s.read(at, &mut x).unwrap();
                    r.read(at, &mut y).unwrap();
                    prop_assert!(x == y, "read at {}", at);
                }
            }
            s.clear();
            prop_assert_eq!(s.memory_bytes(), std::mem::size_of::<Store>() as u64);
        }
    }
}
