//! Rayon's global thread pool, started before any work with as many threads as can be
//! started. Left to itself, rayon starts one thread per core at its first parallel
//! loop and panics when it cannot start them (an address-space limit, `ulimit -v`, on
//! a machine of many cores; a process limit in a container): `validate` on a 64-core
//! machine in a 100 MB address space exited 101. Now the pool is started before any
//! work, and when its threads cannot be started the command runs on this thread alone.
//! The command line starts it before the commands that run parallel loops; the Python
//! binding before its first one.
//!
//! Each thread takes address space whether it uses it or not: its stack (2 MB) and,
//! from its first allocation, a malloc arena of its own (glibc reserves 64 MB for
//! each). So under an address-space limit the threads take at most half of what the
//! process has not taken yet, [`SPACE_PER_THREAD`] each, and the other half is the
//! work's: threads that start but leave the work no room would only move the failure
//! (with one per [`SPACE_PER_THREAD`], `shapes` of a 2.9 MB line aborted in 170 MB and
//! ran in 130 MB, and `diff`, whose reading threads were not counted, aborted from
//! 170 MB to 250 MB).

/// Address space counted per thread when the process's is limited.
pub const SPACE_PER_THREAD: u64 = 64 << 20;

/// The most threads a pool gets, however many are asked for (`-j N`,
/// `RAYON_NUM_THREADS`): the work is files and parts of arrays, which more threads
/// only contend for, and `-j 100000` spent minutes starting threads.
pub const MAX_THREADS: usize = 256;

/// How many threads the address space has room for: no bound without a limit; under
/// one, one per two [`SPACE_PER_THREAD`] of what the process has not taken yet (the
/// threads take at most half of it).
fn room() -> usize {
    address_space_limit().map_or(usize::MAX, |limit| {
        // Unknown use counts as all of it taken: no thread.
        let free = limit.saturating_sub(address_space_used().unwrap_or(limit));
        usize::try_from(free / SPACE_PER_THREAD / 2).unwrap_or(usize::MAX)
    })
}

/// How many of `wanted` threads a pool gets: at most [`MAX_THREADS`], and at most
/// [`room`] of a limited address space.
fn threads_for(wanted: usize) -> usize {
    wanted.min(MAX_THREADS).min(room())
}

/// Whether `more` threads may be started beside the pool's (the threads that read the
/// two sides of a `diff`): always without an address-space limit; under one, when the
/// pool's threads and these together take at most half of what the process has not
/// taken yet, [`SPACE_PER_THREAD`] each. The pool's threads are counted whole, though
/// part of their space may be taken already: an arena is taken only at a thread's
/// first allocation.
pub fn room_for(more: usize) -> bool {
    let pool = STARTED.load(std::sync::atomic::Ordering::Relaxed);
    pool.saturating_add(more) <= room()
}

/// The threads of the global pool [`start`] started (0 before, or when it runs on the
/// calling thread alone).
static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A pool of `jobs` threads, at most [`MAX_THREADS`] and at most half of a limited
/// address space not yet taken, [`SPACE_PER_THREAD`] each; `None` for 0 (every core:
/// the global pool) or when none can be started (the work then runs on the pool it is
/// called from).
pub fn pool(jobs: usize) -> Option<rayon::ThreadPool> {
    if jobs == 0 {
        return None;
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads_for(jobs).max(1))
        .build()
        .ok()
}

/// Starts the global pool: `RAYON_NUM_THREADS` threads, or one per core, at most
/// [`MAX_THREADS`] and at most half of a limited address space not yet taken,
/// [`SPACE_PER_THREAD`] each; when they cannot be started, this thread alone.
pub fn start() {
    let wanted = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1);
    let threads = threads_for(wanted);
    if threads > 1
        && rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .is_ok()
    {
        STARTED.store(threads, std::sync::atomic::Ordering::Relaxed);
        return;
    }
    // This thread alone: the only worker of a pool of its own, so that every parallel
    // loop it starts runs here and the global pool (which can be started only once) is
    // never asked for. The pool lives as long as the process (rayon keeps a thread's
    // pool alive once the thread has joined it).
    if let Ok(pool) = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build()
    {
        std::mem::forget(pool);
    }
}

/// The address space the process takes already in bytes (`VmSize` of
/// `/proc/self/status`: a Python interpreter with numpy and this library loaded takes
/// hundreds of MB of a limit before any thread starts), when known.
fn address_space_used() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmSize:"))?;
    let kb: u64 = line
        .trim_start_matches("VmSize:")
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

/// The process's address-space limit in bytes (`ulimit -v`), when it has one: the soft
/// limit of `/proc/self/limits` (Linux; elsewhere none is known).
fn address_space_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max address space"))?;
    line.trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
