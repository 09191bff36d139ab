//! `--store PATH`: the export's bytes in a sparse file, for drives larger than memory. The file
//! is created by the server (an existing non-empty file is refused: it is never overwritten),
//! sized to the export and left sparse: never-written ranges are holes and read zeros. TRIM and
//! write-zeroes punch holes (`fallocate(PUNCH_HOLE | KEEP_SIZE)`), so a trimmed range gives its
//! space back; where the file system cannot punch holes, zeros are written instead.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use ssdlab::{Error, Result};

/// A sparse backing file of the export.
#[derive(Debug)]
pub struct FileStore {
    file: File,
    path: PathBuf,
    size: u64,
    punch: bool,
}

fn io_error(path: &Path, what: &str, e: &std::io::Error) -> Error {
    Error::Workload(format!("backing file {}: {what}: {e}", path.display()))
}

impl FileStore {
    /// Creates the backing file at `path` (or takes an existing empty regular file), `size` bytes,
    /// all holes.
    pub fn create(path: &Path, size: u64) -> Result<FileStore> {
        if let Ok(meta) = std::fs::metadata(path) {
            if !meta.is_file() {
                return Err(Error::Workload(format!(
                    "--store {}: exists and is not a regular file; give a new path for the backing file",
                    path.display()
                )));
            }
            if meta.len() != 0 {
                return Err(Error::Workload(format!(
                    "--store {}: the file exists and holds data, which ssdlab serve does not overwrite; give a new path",
                    path.display()
                )));
            }
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| io_error(path, "cannot create it", &e))?;
        file.set_len(size)
            .map_err(|e| io_error(path, "cannot size it", &e))?;
        Ok(FileStore {
            file,
            path: path.to_path_buf(),
            size,
            punch: true,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes the file occupies on disk (its allocated blocks).
    pub fn allocated_bytes(&self) -> u64 {
        use std::os::unix::fs::MetadataExt;
        self.file.metadata().map_or(0, |m| m.blocks() * 512)
    }

    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.file
            .write_all_at(data, offset)
            .map_err(|e| io_error(&self.path, "write failed", &e))
    }

    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        self.file
            .read_exact_at(out, offset)
            .map_err(|e| io_error(&self.path, "read failed", &e))
    }

    /// Makes `[offset, offset + length)` read zeros.
    pub fn zero(&mut self, offset: u64, length: u64) -> Result<()> {
        let length = length.min(self.size.saturating_sub(offset));
        if self.punch {
            match punch_hole(&self.file, offset, length) {
                Ok(()) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => self.punch = false,
                Err(e) => return Err(io_error(&self.path, "punching a hole failed", &e)),
            }
        }
        let zeros = vec![0u8; 1 << 20];
        let mut at = offset;
        while at < offset + length {
            let n = (offset + length - at).min(zeros.len() as u64) as usize;
            self.write(at, &zeros[..n])?;
            at += n as u64;
        }
        Ok(())
    }
}

#[allow(unsafe_code)]
fn punch_hole(file: &File, offset: u64, length: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    if length == 0 {
        return Ok(());
    }
    let (Ok(off), Ok(len)) = (i64::try_from(offset), i64::try_from(length)) else {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    };
    // SAFETY: fallocate only reads its integer arguments; the descriptor is the open file's own,
    // alive for the call. PUNCH_HOLE | KEEP_SIZE deallocates the range and leaves the size alone.
    let r = unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            off,
            len,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_round_trip_and_holes() {
        let dir = std::env::temp_dir().join(format!("ssdlab-nbd-fs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("backing");
        let _ = std::fs::remove_file(&path);
        let mut s = FileStore::create(&path, 1 << 30).unwrap();
        assert!(s.allocated_bytes() < 1 << 20, "created sparse");
        let data = vec![7u8; 1 << 20];
        s.write(4096, &data).unwrap();
        let mut out = vec![1u8; 8192];
        s.read(0, &mut out).unwrap();
        assert!(out[..4096].iter().all(|&b| b == 0) && out[4096..].iter().all(|&b| b == 7));
        let before = s.allocated_bytes();
        s.zero(4096, 512 * 1024).unwrap();
        s.read(4096, &mut out).unwrap();
        assert!(out.iter().all(|&b| b == 0));
        assert!(s.allocated_bytes() < before, "the trim gave space back");
        drop(s);
        let e = FileStore::create(&path, 1 << 30).unwrap_err().to_string();
        assert!(e.contains("does not overwrite"), "{e}");
        std::fs::remove_file(&path).unwrap();
    }
}
