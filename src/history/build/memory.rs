//! Hints to the hardware that keep compiling a large history fast and change
//! no result: cache-line prefetches and huge pages for the largest vector.

/// Asks for the cache line at `p` (a hint: any address will do).
#[inline(always)]
pub(super) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints at the cache; it reads nothing and
    // cannot fault, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks the kernel to back a large vector with huge pages (2 MB on x86-64,
/// where Linux's default is to use them only where asked). The compiled
/// micro-ops of a 100 MB history are some 40 MB, written once from front to
/// back: in 4 KB pages that is ten thousand page faults, each clearing its
/// page, which cost the reader about 5% of its time. Only a hint: where the
/// kernel has no huge pages to give, nothing changes.
pub(super) fn advise_huge<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        pub(super) const PAGE: usize = 4096;
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes < (4 << 20) {
            return;
        }
        let start = v.as_ptr() as usize;
        let from = start & !(PAGE - 1);
        let len = (start + bytes - from).next_multiple_of(PAGE);
        // SAFETY: MADV_HUGEPAGE changes how pages are backed, never their
        // contents; the range is the vector's own allocation, widened to
        // whole pages (a neighbour on a shared page gets the same hint).
        let _ = unsafe { libc::madvise(from as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}
