//! A software prefetch hint (with `hugepages.rs`, the crate's only unsafe code).
//!
//! Why: the simulator's cost is dominated by one cache miss per moved or overwritten 4 KiB unit
//! in the L2P table (hundreds of MB for a 256 GB drive). The workload engine knows upcoming
//! logical addresses and GC knows upcoming victims' units, so hinting them a few requests ahead
//! overlaps those misses. Measured on the full-size consistency benchmark (see README).
//!
//! Safety: `_mm_prefetch` never faults and has no observable effect besides cache state; it only
//! needs SSE, which every x86-64 CPU has. Callers pass pointers into live slices.

#[inline]
#[allow(unsafe_code)]
pub fn prefetch<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: see the module doc: a hint on a valid address, SSE is baseline on x86-64.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}
