//! Units shared by every layer: simulated time, mapping units and byte sizes.
//!
//! Simulated time is explicit and integral (nanoseconds since the drive was created), so runs are
//! deterministic and never depend on wall time.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// The mapping unit of the FTL: 4 KiB. A flash page holds several.
pub const UNIT_BYTES: u64 = 4096;

/// The host's addressing granule: a 512-byte logical sector. Requests are whole sectors at
/// sector-aligned offsets; one that covers a mapping unit only in part costs the drive a
/// read-modify-write of that unit ([`crate::drive::Drive::submit_bytes`]).
pub const SECTOR_BYTES: u64 = 512;

/// Sectors in one mapping unit.
pub const SECTORS_PER_UNIT: u64 = UNIT_BYTES / SECTOR_BYTES;

/// Nanoseconds in one second of simulated time.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// A point in simulated time, in nanoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);

    /// Whole nanoseconds.
    #[inline]
    pub const fn ns(self) -> u64 {
        self.0
    }

    /// A time `secs` seconds after zero (or a duration of that length).
    #[inline]
    pub const fn from_secs(secs: u64) -> SimTime {
        SimTime(secs * NS_PER_SEC)
    }

    /// Seconds as a float, for reporting only.
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_SEC as f64
    }

    /// Converts a duration in microseconds (as configured) to whole nanoseconds.
    #[inline]
    pub fn from_us_f64(us: f64) -> SimTime {
        SimTime((us * 1000.0).round() as u64)
    }

    /// Time to move `bytes` over a link of `bytes_per_s`, rounded up to whole nanoseconds.
    #[inline]
    pub fn transfer(bytes: u64, bytes_per_s: f64) -> SimTime {
        SimTime((bytes as f64 * NS_PER_SEC as f64 / bytes_per_s).ceil() as u64)
    }

    #[inline]
    #[must_use]
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 + rhs.0)
    }
}

impl AddAssign for SimTime {
    #[inline]
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 += rhs.0;
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    #[inline]
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6} s", self.as_secs_f64())
    }
}

/// A logical page number: the index of a 4 KiB mapping unit in the user LBA space.
pub type Lpn = u32;

/// A physical unit address: `block * units_per_block + offset` over the whole drive.
pub type Ppa = u32;

/// Marks an unmapped L2P entry.
pub const UNMAPPED: u32 = u32::MAX;

/// Formats a byte count with binary prefixes, for messages.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_rounds_up() {
        // 16 KiB over 200 MB/s is 81.92 us.
        assert_eq!(SimTime::transfer(16_384, 200e6), SimTime(81_920));
        assert_eq!(SimTime::transfer(1, 3e9), SimTime(1));
    }

    #[test]
    fn formats_sizes() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(8 << 30), "8.00 GiB");
    }
}
