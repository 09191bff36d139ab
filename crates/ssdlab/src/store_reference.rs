//! The content store as it was before extents (one record per written 4 KiB unit): kept,
//! test-only, as the reference model the extent store's property test compares against.

#![allow(dead_code)]

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{anonymous_token, sector_sum, synthetic_sector, StoreMode};
use crate::error::{Error, Result};
use crate::units::{SECTORS_PER_UNIT, SECTOR_BYTES, UNIT_BYTES};

const SECTOR: usize = SECTOR_BYTES as usize;
const PER_UNIT: usize = SECTORS_PER_UNIT as usize;

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
pub struct RefStore {
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

impl RefStore {
    /// An empty store (every sector zero) over `sectors` 512-byte sectors, a whole number of
    /// 4 KiB units.
    pub fn new(mode: StoreMode, sectors: u64) -> Result<RefStore> {
        if sectors == 0 || sectors % SECTORS_PER_UNIT != 0 {
            return Err(Error::Config(format!(
                "a store covers whole 4 KiB units (a multiple of {SECTORS_PER_UNIT} sectors), got {sectors} sectors"
            )));
        }
        Ok(RefStore {
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
        let fixed = std::mem::size_of::<RefStore>() as u64;
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
