//! Rayon's global thread pool, started before any work with as many threads as can be
//! started. Left to itself, rayon starts one thread per core at its first parallel
//! loop and panics when it cannot start them (an address-space limit, `ulimit -v`, on
//! a machine of many cores; a process limit in a container): `validate` on a 64-core
//! machine in a 100 MB address space exited 101. Now the pool is started before any
//! work, and when its threads cannot be started the command runs on this thread alone.
//! The command line starts it before the commands that run parallel loops; the Python
//! binding before its first one.
//!
//! Each thread's stack takes address space (2 MB) whether it is used or not, so under
//! an address-space limit the pool has at most one thread per [`SPACE_PER_THREAD`] of
//! what the process has not taken yet: threads that start but leave the work no room
//! would only move the failure.

/// Address space allowed per thread when the process's is limited.
pub const SPACE_PER_THREAD: u64 = 64 << 20;

/// The most threads a pool gets, however many are asked for (`-j N`,
/// `RAYON_NUM_THREADS`): the work is files and parts of arrays, which more threads
/// only contend for, and `-j 100000` spent minutes starting threads.
pub const MAX_THREADS: usize = 256;

/// How many of `wanted` threads a pool gets: at most [`MAX_THREADS`], and at most one
/// per [`SPACE_PER_THREAD`] of a limited address space not yet taken.
fn threads_for(wanted: usize) -> usize {
    let room = address_space_limit().map_or(usize::MAX, |limit| {
        let free = limit.saturating_sub(address_space_used().unwrap_or(0));
        usize::try_from(free / SPACE_PER_THREAD).unwrap_or(usize::MAX)
    });
    wanted.min(MAX_THREADS).min(room)
}

/// A pool of `jobs` threads, at most [`MAX_THREADS`] and one per [`SPACE_PER_THREAD`]
/// of a limited address space not yet taken; `None` for 0 (every core: the global
/// pool) or when none can be started (the work then runs on the pool it is called
/// from).
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
/// [`MAX_THREADS`] and one per [`SPACE_PER_THREAD`] of a limited address space not yet
/// taken; when they cannot be started, this thread alone.
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
