//! An allocator for fuzz test binaries that remembers the largest single allocation each
//! thread asked for, so that a campaign can fail an input that made a reader allocate far more
//! than the input could justify (a declared length or shape trusted before it was checked).
//!
//! This is the workspace's only `unsafe` code: a `GlobalAlloc` must be an `unsafe impl`. It
//! forwards every call to [`System`] unchanged and only reads and writes a thread-local
//! counter; it is compiled with the `fuzz` feature alone, which only test binaries enable.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;

/// Requests larger than this, made while a campaign runs an input, are refused (the process
/// aborts with Rust's "memory allocation failed" message) after naming the input on stderr:
/// granting them could take the machine's memory down with the test.
pub const HARD_LIMIT: usize = 1 << 30;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
    /// Reader name and input index while a campaign runs an input on this thread.
    static CURRENT: Cell<Option<(&'static str, usize)>> = const { Cell::new(None) };
}

/// The tracking allocator. Declare it in a test binary that runs campaigns:
/// `#[global_allocator] static ALLOC: envdist_core::fuzz::TrackingAllocator = envdist_core::fuzz::TrackingAllocator;`
pub struct TrackingAllocator;

#[inline]
fn note(size: usize) -> bool {
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
    if size <= HARD_LIMIT {
        return true;
    }
    match CURRENT.try_with(Cell::get) {
        Ok(Some((reader, index))) => {
            // Unbuffered stderr, integers and static text: formatting this allocates nothing.
            let mut err = std::io::stderr();
            let _ = if index == usize::MAX {
                writeln!(
                    err,
                    "fuzz {reader}: a seed or regression input asked for {size} bytes in one allocation (more than {HARD_LIMIT})"
                )
            } else {
                writeln!(
                    err,
                    "fuzz {reader}: mutant #{index} asked for {size} bytes in one allocation (more than {HARD_LIMIT}); \
                     rerun with ENVDIST_FUZZ_KEEP={index} to keep that input"
                )
            };
            false
        }
        _ => true,
    }
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; refusing a request (null) is allowed by that contract. `note` only
// touches `const`-initialised thread-locals without destructors, which never allocate.
unsafe impl GlobalAlloc for TrackingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !note(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's `layout` is passed on as received.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !note(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation is).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !note(new_size) {
            return std::ptr::null_mut();
        }
        // SAFETY: as in `dealloc`; `new_size` is the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Start measuring this thread's largest allocation for mutant `index` of `reader`
/// (`usize::MAX`: a seed or regression input).
pub(super) fn arm(reader: &'static str, index: usize) {
    LARGEST.with(|l| l.set(0));
    CURRENT.with(|c| c.set(Some((reader, index))));
}

/// Stop measuring; the largest single allocation since [`arm`].
pub(super) fn disarm() -> usize {
    CURRENT.with(|c| c.set(None));
    LARGEST.with(Cell::get)
}

/// Whether this binary's global allocator is the tracking one.
pub(super) fn installed() -> bool {
    LARGEST.with(|l| l.set(0));
    let probe = std::hint::black_box(vec![0u8; 4096]);
    drop(probe);
    LARGEST.with(Cell::get) >= 4096
}
