//! The one error type of the core. Every message says what is wrong and how to mend it.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A drive configuration that cannot be simulated.
    #[error("{0}")]
    Config(String),
    /// A workload or scenario step that cannot run on this drive.
    #[error("{0}")]
    Workload(String),
    /// GC found no block with reclaimable space: the drive holds more valid data than it can manage.
    #[error("die {die} has no block with invalid data to reclaim; give the drive more over-provisioning (--op) or spare area")]
    NoReclaimableSpace { die: u32 },
    /// The caller's progress observer asked to stop.
    #[error("cancelled")]
    Cancelled,
}

pub type Result<T> = std::result::Result<T, Error>;
