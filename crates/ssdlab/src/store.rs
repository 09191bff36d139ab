//! The content store: what the host wrote, per 512-byte sector.
//!
//! The timing model (FTL, NAND) knows where data lives, not what it is. A drive with a store also
//! keeps the content the host wrote, so that reads can be checked (fio's `verify`) or answered
//! (a file system over `ssdlab serve`). The store is driven from the drive's request path
//! ([`Drive::submit_bytes`], [`Drive::submit`], [`Drive::trim_range`], [`Drive::secure_erase`]),
//! so what it holds is what the drive acknowledged.
//!
//! ```text
//!   sector s (512 B) -> unit s / 8 -> sparse map: unit -> [sum; 8]      (StoreMode::Checksums)
//!                                                unit -> [u8; 4096]    (StoreMode::Data)
//! ```
//!
//! * **Sparse.** Nothing is allocated per sector up front: memory grows with the units written
//!   (about 90 bytes per written 4 KiB unit with checksums, 4.1 KB with data) and shrinks when a
//!   unit is trimmed whole. A 256 GB drive with 1,000 sectors written uses about a hundred KB.
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

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

use crate::drive::{Drive, IoKind};
use crate::error::{Error, Result};
use crate::units::{SimTime, SECTORS_PER_UNIT, SECTOR_BYTES, UNIT_BYTES};

const SECTOR: usize = SECTOR_BYTES as usize;
const PER_UNIT: usize = SECTORS_PER_UNIT as usize;
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

/// A multiplicative hasher for unit numbers: deterministic (no per-process keys) and cheap.
#[derive(Default, Clone, Copy)]
pub struct UnitHasher(u64);

impl Hasher for UnitHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517C_C1B7_2722_0A95);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type UnitMap<V> = HashMap<u64, V, BuildHasherDefault<UnitHasher>>;

/// Bytes a map of `capacity` buckets of `value` bytes takes (key, value and a control byte each).
fn map_bytes(capacity: usize, value: usize) -> u64 {
    (capacity * (8 + value + 1)) as u64
}

/// What the host wrote, per 512-byte sector, sparse (see the module doc).
#[derive(Clone, Debug)]
pub struct Store {
    mode: StoreMode,
    sectors: u64,
    /// `Checksums`: each written unit's eight sector sums (0: zeros).
    sums: UnitMap<[u64; PER_UNIT]>,
    /// `Data`: each written unit's bytes.
    data: UnitMap<Box<[u8; UNIT_BYTES as usize]>>,
    /// At most this many units may hold content (the memory budget), if set.
    max_units: Option<u64>,
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
            sums: UnitMap::default(),
            data: UnitMap::default(),
            max_units: None,
            anonymous: 0,
        })
    }

    /// Refuses (with an error naming the budget) writes that would make the store hold more than
    /// about `bytes` of memory.
    pub fn set_memory_budget(&mut self, bytes: u64) {
        self.max_units = Some(bytes / self.bytes_per_unit());
    }

    pub fn mode(&self) -> StoreMode {
        self.mode
    }

    /// Sectors covered.
    pub fn sectors(&self) -> u64 {
        self.sectors
    }

    /// 4 KiB units that hold content (not all zeros) at the moment.
    pub fn units_held(&self) -> u64 {
        match self.mode {
            StoreMode::Checksums => self.sums.len() as u64,
            StoreMode::Data => self.data.len() as u64,
        }
    }

    /// Whether 4 KiB unit `unit` holds content (a unit that does not reads all zeros).
    pub fn unit_held(&self, unit: u64) -> bool {
        match self.mode {
            StoreMode::Checksums => self.sums.contains_key(&unit),
            StoreMode::Data => self.data.contains_key(&unit),
        }
    }

    /// The units that hold content, in ascending order.
    pub fn held_units(&self) -> Vec<u64> {
        let mut v: Vec<u64> = match self.mode {
            StoreMode::Checksums => self.sums.keys().copied().collect(),
            StoreMode::Data => self.data.keys().copied().collect(),
        };
        v.sort_unstable();
        v
    }

    /// Memory one held unit costs, about (its map entry at a typical load, its bytes).
    pub fn bytes_per_unit(&self) -> u64 {
        match self.mode {
            StoreMode::Checksums => 2 * map_bytes(1, 8 * PER_UNIT),
            StoreMode::Data => 2 * map_bytes(1, 8) + UNIT_BYTES + 16,
        }
    }

    /// The memory the store uses now, in bytes: its map's buckets and, with data, the 4 KiB
    /// blocks (plus the allocator's 16 bytes each).
    pub fn memory_bytes(&self) -> u64 {
        let fixed = std::mem::size_of::<Store>() as u64;
        match self.mode {
            StoreMode::Checksums => fixed + map_bytes(self.sums.capacity(), 8 * PER_UNIT),
            StoreMode::Data => {
                fixed
                    + map_bytes(self.data.capacity(), 8)
                    + self.data.len() as u64 * (UNIT_BYTES + 16)
            }
        }
    }

    /// Forgets everything: every sector reads zero again (a secure erase or format).
    pub fn clear(&mut self) {
        self.sums = UnitMap::default();
        self.data = UnitMap::default();
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

    fn full(&self) -> Error {
        Error::Workload(format!(
            "the content store would need more than its memory budget ({} units of 4 KiB hold content); \
             simulate a smaller drive (--capacity) or write less",
            self.units_held()
        ))
    }

    /// Writes synthetic content: sector `s` of `first..first + count` gets `token(s)` (0 writes
    /// zeros). See the module doc.
    pub fn write_tokens(
        &mut self,
        first: u64,
        count: u64,
        mut token: impl FnMut(u64) -> u64,
    ) -> Result<()> {
        self.check(first, count)?;
        let mut s = first;
        let end = first + count;
        while s < end {
            let unit = s / SECTORS_PER_UNIT;
            let unit_end = ((unit + 1) * SECTORS_PER_UNIT).min(end);
            match self.mode {
                StoreMode::Checksums => {
                    let room = self.max_units.is_none_or(|m| (self.sums.len() as u64) < m);
                    let sums = match self.sums.get_mut(&unit) {
                        Some(v) => v,
                        None if !room => return Err(self.full()),
                        None => self.sums.entry(unit).or_insert([0; PER_UNIT]),
                    };
                    for x in s..unit_end {
                        sums[(x % SECTORS_PER_UNIT) as usize] = token(x);
                    }
                    if sums.iter().all(|&v| v == 0) {
                        self.sums.remove(&unit);
                    }
                }
                StoreMode::Data => {
                    let room = self.max_units.is_none_or(|m| (self.data.len() as u64) < m);
                    let block = match self.data.get_mut(&unit) {
                        Some(v) => v,
                        None if !room => return Err(self.full()),
                        None => self
                            .data
                            .entry(unit)
                            .or_insert_with(|| Box::new([0; UNIT_BYTES as usize])),
                    };
                    for x in s..unit_end {
                        let i = (x % SECTORS_PER_UNIT) as usize * SECTOR;
                        block[i..i + SECTOR].copy_from_slice(&synthetic_sector(token(x)));
                    }
                    if block.iter().all(|&b| b == 0) {
                        self.data.remove(&unit);
                    }
                }
            }
            s = unit_end;
        }
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
        match self.mode {
            StoreMode::Checksums => self.write_tokens(first, count, |s| {
                let i = ((s - first) as usize) * SECTOR;
                sector_sum(&bytes[i..i + SECTOR])
            }),
            StoreMode::Data => {
                let mut s = first;
                let end = first + count;
                while s < end {
                    let unit = s / SECTORS_PER_UNIT;
                    let unit_end = ((unit + 1) * SECTORS_PER_UNIT).min(end);
                    let src = &bytes
                        [((s - first) as usize) * SECTOR..((unit_end - first) as usize) * SECTOR];
                    let at = (s % SECTORS_PER_UNIT) as usize * SECTOR;
                    let zeros = src.iter().all(|&b| b == 0);
                    if let Some(block) = self.data.get_mut(&unit) {
                        block[at..at + src.len()].copy_from_slice(src);
                        if zeros && block.iter().all(|&b| b == 0) {
                            self.data.remove(&unit);
                        }
                    } else if !zeros {
                        if self.max_units.is_some_and(|m| self.data.len() as u64 >= m) {
                            return Err(self.full());
                        }
                        let mut block = Box::new([0u8; UNIT_BYTES as usize]);
                        block[at..at + src.len()].copy_from_slice(src);
                        self.data.insert(unit, block);
                    }
                    s = unit_end;
                }
                Ok(())
            }
        }
    }

    /// Makes `first..first + count` read as zeros (TRIM / deallocate, write-zeroes).
    pub fn zero(&mut self, first: u64, count: u64) -> Result<()> {
        self.check(first, count)?;
        let mut s = first;
        let end = first + count;
        while s < end {
            let unit = s / SECTORS_PER_UNIT;
            let unit_end = ((unit + 1) * SECTORS_PER_UNIT).min(end);
            let whole = s % SECTORS_PER_UNIT == 0 && unit_end - s == SECTORS_PER_UNIT;
            match self.mode {
                StoreMode::Checksums => {
                    if whole {
                        self.sums.remove(&unit);
                    } else if let Some(sums) = self.sums.get_mut(&unit) {
                        for x in s..unit_end {
                            sums[(x % SECTORS_PER_UNIT) as usize] = 0;
                        }
                        if sums.iter().all(|&v| v == 0) {
                            self.sums.remove(&unit);
                        }
                    }
                }
                StoreMode::Data => {
                    if whole {
                        self.data.remove(&unit);
                    } else if let Some(block) = self.data.get_mut(&unit) {
                        let a = (s % SECTORS_PER_UNIT) as usize * SECTOR;
                        let b = a + (unit_end - s) as usize * SECTOR;
                        block[a..b].fill(0);
                        if block.iter().all(|&x| x == 0) {
                            self.data.remove(&unit);
                        }
                    }
                }
            }
            s = unit_end;
        }
        Ok(())
    }

    /// The checksum of sector `s` (0: zeros). The same for the same content in either mode.
    pub fn sum(&self, s: u64) -> u64 {
        if s >= self.sectors {
            return 0;
        }
        let unit = s / SECTORS_PER_UNIT;
        let i = (s % SECTORS_PER_UNIT) as usize;
        match self.mode {
            StoreMode::Checksums => self.sums.get(&unit).map_or(0, |v| v[i]),
            StoreMode::Data => self
                .data
                .get(&unit)
                .map_or(0, |b| sector_sum(&b[i * SECTOR..(i + 1) * SECTOR])),
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
        let mut s = first;
        let end = first + count;
        while s < end {
            let unit = s / SECTORS_PER_UNIT;
            let unit_end = ((unit + 1) * SECTORS_PER_UNIT).min(end);
            let dst =
                &mut out[((s - first) as usize) * SECTOR..((unit_end - first) as usize) * SECTOR];
            match self.data.get(&unit) {
                Some(block) => {
                    let at = (s % SECTORS_PER_UNIT) as usize * SECTOR;
                    dst.copy_from_slice(&block[at..at + dst.len()]);
                }
                None => dst.fill(0),
            }
            s = unit_end;
        }
        Ok(())
    }

    /// Writes anonymous content (unique per call and sector, never zero) over
    /// `first..first + count`: a request that carries no content of its own.
    pub fn write_anonymous(&mut self, first: u64, count: u64) -> Result<()> {
        self.anonymous += 1;
        let seq = self.anonymous;
        self.write_tokens(first, count, |s| anonymous_token(seq, s))
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
        s.set_memory_budget(s.bytes_per_unit());
        s.write_tokens(0, 8, |_| 1).unwrap();
        let e = s.write_tokens(8, 1, |_| 1).unwrap_err().to_string();
        assert!(e.contains("memory budget"), "{e}");
    }
}
