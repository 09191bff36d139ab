//! `ssdlab._core.Store`: the content store (`ssdlab::store`) on its own, addressed in bytes, for
//! tests and tools; and what a simulator's store reports.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use ssdlab::store::{Store, StoreMode};

use crate::error::{panic_to_py, to_py, SsdlabError};

const SECTOR: u64 = 512;

fn mode(name: &str) -> PyResult<StoreMode> {
    name.parse::<StoreMode>().map_err(|e| to_py(e, None))
}

/// `(first sector, sectors)` of a byte range, which must be whole sectors.
fn sectors(offset: u64, length: u64) -> PyResult<(u64, u64)> {
    if offset % SECTOR != 0 || length % SECTOR != 0 {
        return Err(SsdlabError::new_err(format!(
            "offset {offset} and length {length} must be multiples of 512 bytes"
        )));
    }
    Ok((offset / SECTOR, length / SECTOR))
}

fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(panic_to_py(&*p)))
}

/// A store's figures as JSON: `mode`, `sectors`, `units_held`, `memory_bytes`.
pub fn stats_json(store: &Store) -> String {
    serde_json::json!({
        "mode": store.mode(),
        "sectors": store.sectors(),
        "units_held": store.units_held(),
        "memory_bytes": store.memory_bytes(),
    })
    .to_string()
}

/// What the host wrote, per 512-byte sector, sparse (`ssdlab::store`). Offsets and lengths are
/// bytes, multiples of 512. Never-written and trimmed sectors read as zeros.
#[pyclass(module = "ssdlab._core", name = "Store")]
pub struct PyStore {
    store: Store,
}

#[pymethods]
impl PyStore {
    /// An empty store of `mode` ("checksums" or "data") over `capacity_bytes` (whole 4 KiB units).
    #[new]
    fn new(mode_name: &str, capacity_bytes: u64) -> PyResult<Self> {
        guarded(|| {
            if capacity_bytes % 4096 != 0 {
                return Err(SsdlabError::new_err(format!(
                    "a store's capacity is whole 4 KiB units, got {capacity_bytes} bytes"
                )));
            }
            let store = Store::new(mode(mode_name)?, capacity_bytes / SECTOR)
                .map_err(|e| to_py(e, None))?;
            Ok(PyStore { store })
        })
    }

    /// Writes `data` (whole sectors) at byte `offset`.
    fn write(&mut self, offset: u64, data: &[u8]) -> PyResult<()> {
        guarded(|| {
            let (first, _) = sectors(offset, data.len() as u64)?;
            self.store.write(first, data).map_err(|e| to_py(e, None))
        })
    }

    /// Makes `length` bytes at `offset` read as zeros (TRIM, write-zeroes).
    fn trim(&mut self, offset: u64, length: u64) -> PyResult<()> {
        guarded(|| {
            let (first, count) = sectors(offset, length)?;
            self.store.zero(first, count).map_err(|e| to_py(e, None))
        })
    }

    /// The bytes at `offset` (a data store only).
    fn read<'py>(
        &self,
        py: Python<'py>,
        offset: u64,
        length: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (first, _) = sectors(offset, length)?;
        if length > 1 << 30 {
            return Err(SsdlabError::new_err(format!(
                "a read of {length} bytes is more than the 1 GiB one call returns"
            )));
        }
        let mut out = vec![0u8; length as usize];
        guarded(|| self.store.read(first, &mut out).map_err(|e| to_py(e, None)))?;
        Ok(PyBytes::new(py, &out))
    }

    /// The 64-bit checksum of the sector at byte `offset` (0: zeros); the same for the same
    /// content in either mode.
    fn checksum(&self, offset: u64) -> PyResult<u64> {
        let (first, _) = sectors(offset, SECTOR)?;
        Ok(self.store.sum(first))
    }

    /// `{"mode", "sectors", "units_held", "memory_bytes"}` as JSON.
    fn stats(&self) -> String {
        stats_json(&self.store)
    }
}
