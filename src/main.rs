//! The `xla-shape` command line: argument parsing and error rendering only; every
//! piece of logic lives in the library.
//!
//! Its one unsafe call sets glibc's allocator to map every large block on its own
//! ([`large_blocks_mapped`]); the library forbids unsafe code.
#![deny(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    large_blocks_mapped();
    cli::run()
}

/// The size from which glibc maps a block on its own (its default starting value).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 128 * 1024;

/// Has glibc map every block of 128 KiB or more on its own and unmap it when freed,
/// as it does until the first such block is freed. Left to itself, glibc then raises
/// that size up to the block's (up to 32 MiB) and serves later blocks below it from
/// its heaps, where what is freed between blocks still in use stays with the process.
/// `diff` of two modules of 600,000 short lines (20 MB) peaked at 96 MB of memory so,
/// and at 76 MB with the size kept (docs/hardening.md, "The allocator's share"). A
/// size set by the user
/// (`MALLOC_MMAP_THRESHOLD_`, or `GLIBC_TUNABLES` naming `mmap_threshold`) is left
/// as set.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn large_blocks_mapped() {
    let tunables = std::env::var_os("GLIBC_TUNABLES").unwrap_or_default();
    let user_set = std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_some()
        || tunables.to_string_lossy().contains("malloc.mmap_threshold");
    if user_set {
        return;
    }
    // SAFETY: `mallopt` only sets a parameter of glibc's allocator, which it reads
    // under its own lock; it is called before any thread is started, with an option
    // and a value glibc documents (M_MMAP_THRESHOLD takes 0 to 32 MiB on 64-bit
    // systems). A refusal (its result 0) leaves the allocator as it was.
    #[allow(unsafe_code)]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}

/// Elsewhere the allocator is left as it is.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn large_blocks_mapped() {}
