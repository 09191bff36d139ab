//! # ssdlab: a deterministic SSD simulator
//!
//! ssdlab models a NAND SSD closely enough to reproduce what SSD reviewers measured when they
//! tortured drives: the fresh-out-of-box burst, the cliff when the spare area runs out, the steady
//! state that garbage collection leaves, and how over-provisioning and the GC policy change it.
//!
//! ```text
//!   workload engine (closed loop, QD N)      scenario: secure erase -> fill -> random writes ...
//!            |  Io {kind, lpn, units} at t
//!            v
//!   drive: host link -> write buffer ------> ack time
//!            |  one 4 KiB unit at a time
//!            v
//!   FTL: L2P/P2L map, per-die free pools, host + GC frontiers, victim policy (gc/)
//!            |  program / read / erase on die d at t
//!            v
//!   NAND: layout (geometry, timing), die and channel timelines, block state
//! ```
//!
//! Time is simulated, in integer nanoseconds ([`SimTime`]); nothing reads the wall clock. The
//! same configuration and seed give the same numbers, bit for bit.
//!
//! ```
//! use ssdlab::{scenario::Consistency, Drive, DriveConfig};
//!
//! let cfg = DriveConfig::default().with_user_capacity(2 << 30).unwrap();
//! let mut drive = Drive::new(&cfg, 7).unwrap();
//! let test = Consistency { duration_s: 5.0, ..Consistency::default() };
//! let steps = test.steps(drive.user_bytes()).unwrap();
//! let results = ssdlab::scenario::run_steps(&mut drive, &steps, 7, &mut |_, _| true).unwrap();
//! let summary = test.summarize(results[2].phase.as_ref().unwrap());
//! assert!(summary.iops_clean > 1000.0);
//! ```

pub mod config;
pub mod drive;
pub mod error;
pub mod ftl;
pub mod gc;
mod hugepages;
mod least;
pub mod limits;
pub mod memory;
pub mod metrics;
pub mod nand;
mod prefetch;
pub mod presets;
pub mod scenario;
pub mod spare;
pub mod store;
pub mod theory;
pub mod units;
pub mod workload;
mod write_buffer;

pub use config::{CellType, DriveConfig, GcMode, GcPolicy, IdleGc, SlcCache, Striping};
pub use drive::{Drive, Io, IoKind};
pub use error::{Error, Result};
pub use units::{SimTime, UNIT_BYTES};
pub use workload::{Pattern, PhaseResult, Progress, Rw, Workload};
