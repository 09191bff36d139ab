//! Large tables backed by transparent huge pages where the OS offers them.
//!
//! Why: the L2P and P2L tables of a 256 GB drive are ~250 MB each and are touched at random, one
//! 4 KiB unit per host write and per GC copy. With 4 KiB pages nearly every such access also
//! misses the TLB, and under a hypervisor a page walk costs several memory references; prefetch
//! hints stall on those walks. Asking for 2 MiB pages (`MADV_HUGEPAGE`, honoured when
//! `/sys/kernel/mm/transparent_hugepage/enabled` is `always` or `madvise`) removes most of the
//! walks: measured on the full-size consistency benchmark (see docs/architecture.md). The hint
//! changes no result, only speed; where it is unavailable the tables are ordinary vectors.

/// A vector of `len` copies of `value`, its memory advised for huge pages before it is touched.
pub fn table<T: Copy>(len: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(len);
    advise_huge(v.as_mut_ptr().cast::<u8>(), len * std::mem::size_of::<T>());
    v.resize(len, value);
    v
}

/// Below this a table is not worth a huge page.
const HUGE_PAGE: usize = 2 << 20;

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise_huge(ptr: *mut u8, bytes: usize) {
    if bytes < 2 * HUGE_PAGE {
        return;
    }
    // madvise needs a page-aligned start; round inwards to whole 4 KiB pages of the allocation.
    let page = 4096usize;
    let start = (ptr as usize).next_multiple_of(page);
    let end = (ptr as usize + bytes) / page * page;
    if end <= start {
        return;
    }
    // SAFETY: [start, end) lies inside the vector's own, still untouched allocation; MADV_HUGEPAGE
    // only changes how the kernel backs those pages, never their contents or validity. A failure
    // (THP disabled, old kernel) leaves ordinary pages, which is fine.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_ptr: *mut u8, _bytes: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn tables_hold_the_value() {
        let small = super::table(10, 7u32);
        assert_eq!(small, vec![7u32; 10]);
        let big = super::table(3 << 20, u32::MAX);
        assert_eq!(big.len(), 3 << 20);
        assert!(big.iter().all(|&x| x == u32::MAX));
    }
}
