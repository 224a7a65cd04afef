//! Output that may be many times larger than its input, held in bounded memory.
//!
//! A conversion's output is written to its destination only once the whole conversion
//! has succeeded, so that a failure (a decode error at the last byte, a shape the
//! lossless text refuses) leaves nothing half-written. Held in memory, that output is
//! what bounds the conversion's memory: proto3 JSON is about 7 times XLA's text and 6
//! times the binary message. A [`Spool`] keeps the first [`Spool::HELD`] bytes in
//! memory and the rest in an anonymous temporary file (removed by the system when it is
//! closed), then copies the whole to its destination.

use std::io::{self, Read, Seek, Write};

/// Bytes written in order, the first [`Spool::HELD`] in memory, the rest in an
/// anonymous temporary file; [`Spool::write_to`] copies them all out.
#[derive(Debug, Default)]
pub struct Spool {
    held: Vec<u8>,
    file: Option<io::BufWriter<std::fs::File>>,
    len: u64,
    /// The first error writing the file: the bytes are incomplete, which
    /// [`Spool::write_to`] says instead of writing them.
    error: Option<io::Error>,
}

impl Spool {
    /// Bytes kept in memory before the rest goes to a temporary file.
    pub const HELD: usize = 8 << 20;

    /// An empty spool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `bytes`. Past [`Spool::HELD`] they go to a temporary file; when none can
    /// be made they stay in memory.
    pub fn push(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.file.is_none() && self.held.len() + bytes.len() > Self::HELD {
            if let Ok(file) = tempfile::tempfile() {
                self.file = Some(io::BufWriter::with_capacity(1 << 16, file));
            }
        }
        match &mut self.file {
            None => {
                // Grown by doubling, but never past what it may hold (doubling from
                // 6 MB took 12 MB for the 8 MB held).
                let needed = self.held.len() + bytes.len();
                if needed > self.held.capacity() && needed <= Self::HELD {
                    let doubled = self
                        .held
                        .capacity()
                        .saturating_mul(2)
                        .clamp(needed, Self::HELD);
                    self.held.reserve_exact(doubled - self.held.len());
                }
                self.held.extend_from_slice(bytes)
            }
            Some(_) if self.error.is_some() => {}
            Some(file) => {
                if let Err(e) = file.write_all(bytes) {
                    self.error = Some(spooled(e));
                }
            }
        }
    }

    /// The number of bytes written.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies every byte, in order, to `out`.
    ///
    /// # Errors
    /// A failure to write or read back the temporary file (then nothing is written to
    /// `out`), or to write `out`.
    pub fn write_to(self, out: &mut dyn Write) -> io::Result<()> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let file = match self.file {
            Some(file) => {
                let mut file = file.into_inner().map_err(|e| spooled(e.into_error()))?;
                file.seek(io::SeekFrom::Start(0)).map_err(spooled)?;
                Some(file)
            }
            None => None,
        };
        out.write_all(&self.held)?;
        if let Some(file) = file {
            let rest = self.len - self.held.len() as u64;
            let copied = io::copy(&mut file.take(rest), out)?;
            if copied != rest {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the temporary file of the output was cut short",
                ));
            }
        }
        Ok(())
    }

    /// Appends every byte of `other`. A failure to read back its temporary file is
    /// kept, as a failure to write this spool's own, for [`Spool::write_to`] to say.
    pub fn append(&mut self, other: Spool) {
        if let Err(e) = other.write_to(self) {
            self.error.get_or_insert(e);
        }
    }

    /// Every byte in one vector (in memory, however many there are).
    ///
    /// # Errors
    /// A failure to write or read back the temporary file.
    pub fn into_vec(self) -> io::Result<Vec<u8>> {
        if self.file.is_none() && self.error.is_none() {
            return Ok(self.held);
        }
        let mut out = Vec::with_capacity(usize::try_from(self.len).unwrap_or(0));
        self.write_to(&mut out)?;
        Ok(out)
    }
}

/// A failure of the temporary file, said as the temporary file's, not the
/// destination's.
fn spooled(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("the output's temporary file: {e}"))
}

impl From<Vec<u8>> for Spool {
    /// The bytes, in memory.
    fn from(held: Vec<u8>) -> Self {
        Spool {
            len: held.len() as u64,
            held,
            file: None,
            error: None,
        }
    }
}

impl Write for Spool {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.push(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Records (items encoded as bytes, each by its owner) appended to an anonymous
/// temporary file and read back in order, any number of times: the spill of a list
/// that keeps its first items in memory ([`crate::report::Findings`],
/// [`crate::guard::spooled::Spooled`]).
pub(crate) struct Records {
    file: std::sync::Mutex<std::fs::File>,
    /// Bytes of records in the file.
    written: u64,
    /// Records encoded and not yet written.
    pending: Vec<u8>,
    /// Records in all, and how many of them are in the file.
    count: usize,
    in_file: usize,
}

impl Records {
    /// Bytes of encoded records gathered before they are written to the file.
    const PENDING: usize = 256 * 1024;

    /// No records, in a new temporary file.
    pub(crate) fn new() -> io::Result<Self> {
        Ok(Records {
            file: std::sync::Mutex::new(tempfile::tempfile()?),
            written: 0,
            pending: Vec::new(),
            count: 0,
            in_file: 0,
        })
    }

    /// How many records there are.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Appends the record `encode` writes, writing the pending ones to the file when
    /// there are enough. When the file cannot be written, the record is not added (the
    /// others stay readable) and the error is returned.
    pub(crate) fn push(&mut self, encode: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let start = self.pending.len();
        encode(&mut self.pending);
        self.count += 1;
        if self.pending.len() >= Self::PENDING {
            if let Err(e) = self.flush() {
                self.pending.truncate(start);
                self.count -= 1;
                return Err(e);
            }
        }
        Ok(())
    }

    /// Appends the pending records to the file.
    fn flush(&mut self) -> io::Result<()> {
        {
            let mut file = self.file()?;
            file.seek(io::SeekFrom::Start(self.written))?;
            file.write_all(&self.pending)?;
        }
        self.written += self.pending.len() as u64;
        self.pending.clear();
        self.in_file = self.count;
        Ok(())
    }

    /// The file, locked for a read or a write.
    fn file(&self) -> io::Result<std::sync::MutexGuard<'_, std::fs::File>> {
        self.file
            .lock()
            .map_err(|_| io::Error::other("temporary file lock poisoned"))
    }

    /// Calls `each` once per record, in order, with a reader at its start (from which
    /// it decodes the record, and no more), until it fails.
    pub(crate) fn try_for_each(
        &self,
        mut each: impl FnMut(&mut dyn io::BufRead) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut file = self.file()?;
        file.seek(io::SeekFrom::Start(0))?;
        let mut reader = io::BufReader::with_capacity(64 * 1024, (&mut *file).take(self.written));
        for _ in 0..self.in_file {
            each(&mut reader)?;
        }
        let mut rest = &self.pending[..];
        for _ in self.in_file..self.count {
            each(&mut rest)?;
        }
        Ok(())
    }
}

/// A record of a fixed size, for a [`Table`].
pub(crate) trait Fixed: Copy {
    /// Its size in bytes.
    const SIZE: usize;
    /// Appends its [`Fixed::SIZE`] bytes.
    fn put(&self, out: &mut Vec<u8>);
    /// Reads it back from its bytes (`bytes` is [`Fixed::SIZE`] long).
    fn take(bytes: &[u8]) -> Self;
}

/// Appends `words`, each as its 4 little-endian bytes: a record of `u32`s
/// ([`Fixed::put`]).
pub(crate) fn put_words(out: &mut Vec<u8>, words: &[u32]) {
    for word in words {
        out.extend_from_slice(&word.to_le_bytes());
    }
}

/// The `k`-th `u32` of a record [`put_words`] wrote.
pub(crate) fn word(bytes: &[u8], k: usize) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[4 * k..4 * k + 4]);
    u32::from_le_bytes(word)
}

impl Fixed for u32 {
    const SIZE: usize = 4;

    fn put(&self, out: &mut Vec<u8>) {
        put_words(out, &[*self]);
    }

    fn take(bytes: &[u8]) -> Self {
        word(bytes, 0)
    }
}

/// Records of a fixed size, appended in order and then read by their index: the first
/// `keep` in memory, the rest in an anonymous temporary file, read back a block at a
/// time through a few blocks kept in memory. A table of a million records of 32 bytes
/// takes some 3 MB of memory however many more it holds.
///
/// A failure to write or read the file is kept ([`Table::lost`]): the record asked for
/// then reads as `None`, and the owner says the error instead of a result.
pub(crate) struct Table<T> {
    held: Vec<T>,
    /// How many records are kept in `held` before the rest go to the file.
    keep: usize,
    /// Boxed: a listing read back holds a table a file, most of them of a record or two.
    spill: Option<Box<TableSpill>>,
}

/// The records of a [`Table`] past its held ones.
struct TableSpill {
    /// The file and the blocks read back from it.
    file: std::sync::Mutex<(std::fs::File, Blocks)>,
    /// Records in the file.
    written: usize,
    /// Records encoded and not yet written, after those in the file.
    pending: Vec<u8>,
    /// Records in `pending`.
    pending_count: usize,
    /// The first failure of the file, if any.
    lost: std::sync::OnceLock<String>,
}

/// The blocks of a table's file kept in memory, each at the place its number gives
/// (modulo their count): the block's number ([`usize::MAX`] for none) and its bytes.
struct Blocks {
    numbers: Vec<usize>,
    bytes: Vec<u8>,
}

impl<T: Fixed> Table<T> {
    /// Records held in memory by default before the rest go to a temporary file.
    #[cfg(not(any(test, feature = "fuzz-small-tables")))]
    pub(crate) const HELD: usize = 1 << 16;
    /// Bytes of records gathered before they are written.
    #[cfg(not(any(test, feature = "fuzz-small-tables")))]
    const PENDING: usize = 256 * 1024;
    /// Bytes of one block read back.
    #[cfg(not(any(test, feature = "fuzz-small-tables")))]
    const BLOCK: usize = 4 * 1024;
    /// Blocks kept in memory.
    #[cfg(not(any(test, feature = "fuzz-small-tables")))]
    const BLOCKS: usize = 256;
    // Tiny in the crate's own tests and under fuzzing, so that records are written,
    // read back and evicted after a few.
    #[cfg(any(test, feature = "fuzz-small-tables"))]
    pub(crate) const HELD: usize = 3;
    #[cfg(any(test, feature = "fuzz-small-tables"))]
    const PENDING: usize = 200;
    #[cfg(any(test, feature = "fuzz-small-tables"))]
    const BLOCK: usize = 64;
    #[cfg(any(test, feature = "fuzz-small-tables"))]
    const BLOCKS: usize = 3;

    /// An empty table that keeps its first `keep` records in memory.
    pub(crate) fn new(keep: usize) -> Self {
        Table {
            held: Vec::new(),
            keep,
            spill: None,
        }
    }

    /// How many records it keeps in memory before the rest go to its file.
    pub(crate) fn keep(&self) -> usize {
        self.keep
    }

    /// How many records there are.
    pub(crate) fn len(&self) -> usize {
        self.held.len()
            + self
                .spill
                .as_ref()
                .map_or(0, |s| s.written + s.pending_count)
    }

    /// The first failure to write or read the temporary file: records were lost.
    pub(crate) fn lost(&self) -> Option<&str> {
        self.spill.as_ref()?.lost.get().map(String::as_str)
    }

    /// How many records it holds in memory.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.held.len()
    }

    /// Records per block.
    fn per_block() -> usize {
        (Self::BLOCK / T::SIZE).max(1)
    }

    /// Appends `record`. Past the held ones it goes to the temporary file; when none
    /// can be made, it is held in memory.
    pub(crate) fn push(&mut self, record: T) {
        if self.spill.is_none() && self.held.len() < self.keep {
            // One slot first (many tables hold a record or two), then by doubling.
            if self.held.capacity() == 0 {
                self.held.reserve_exact(1);
            }
            self.held.push(record);
            return;
        }
        if self.spill.is_none() {
            match tempfile::tempfile() {
                Ok(file) => {
                    let blocks = Blocks {
                        numbers: vec![usize::MAX; Self::BLOCKS],
                        bytes: Vec::new(),
                    };
                    self.spill = Some(Box::new(TableSpill {
                        file: std::sync::Mutex::new((file, blocks)),
                        written: 0,
                        pending: Vec::with_capacity(Self::PENDING),
                        pending_count: 0,
                        lost: std::sync::OnceLock::new(),
                    }));
                }
                Err(_) => {
                    // Held in memory from here on, without asking for a file again
                    // for each record.
                    self.keep = usize::MAX;
                    self.held.push(record);
                    return;
                }
            }
        }
        let Some(spill) = self.spill.as_mut() else {
            return;
        };
        record.put(&mut spill.pending);
        spill.pending_count += 1;
        // Whole blocks only, so that a block read back is never cut by records written
        // after it; after a failure, nothing more (the rest stays pending, in memory).
        let full = Self::PENDING / T::SIZE / Self::per_block() * Self::per_block();
        if spill.pending_count == full.max(Self::per_block()) && spill.lost.get().is_none() {
            let written = spill
                .file
                .get_mut()
                .map_err(|_| poisoned())
                .and_then(|(file, _)| {
                    file.seek(io::SeekFrom::Start((spill.written * T::SIZE) as u64))?;
                    file.write_all(&spill.pending)
                });
            match written {
                Ok(()) => {
                    spill.written += spill.pending_count;
                    spill.pending.clear();
                    spill.pending_count = 0;
                }
                Err(e) => {
                    // Kept in memory, and the loss said: the next write would leave a
                    // hole in the file.
                    let _ = spill.lost.set(format!("a temporary file: {e}"));
                }
            }
        }
    }

    /// The record at `index`; `None` past the end, or when it could not be read back
    /// (see [`Table::lost`]).
    pub(crate) fn get(&self, index: usize) -> Option<T> {
        if let Some(record) = self.held.get(index) {
            return Some(*record);
        }
        let spill = self.spill.as_ref()?;
        let at = index - self.held.len();
        if at >= spill.written {
            let start = (at - spill.written).checked_mul(T::SIZE)?;
            let bytes = spill.pending.get(start..start.checked_add(T::SIZE)?)?;
            return Some(T::take(bytes));
        }
        let per_block = Self::per_block();
        let within = at % per_block;
        self.in_block(spill, at / per_block, |bytes| {
            let start = within * T::SIZE;
            bytes.get(start..start + T::SIZE).map(T::take)
        })?
    }

    /// `read` of the bytes of the records of block `number` of the file (read back
    /// into its place among the blocks kept, if it is not there); `None` when it could
    /// not be read back (see [`Table::lost`]).
    fn in_block<R>(
        &self,
        spill: &TableSpill,
        number: usize,
        read: impl FnOnce(&[u8]) -> R,
    ) -> Option<R> {
        let per_block = Self::per_block();
        let mut guard = match spill.file.lock() {
            Ok(guard) => guard,
            Err(_) => {
                let _ = spill.lost.set(poisoned().to_string());
                return None;
            }
        };
        let (file, blocks) = &mut *guard;
        let place = number % Self::BLOCKS;
        let block_bytes = per_block * T::SIZE;
        if blocks.bytes.is_empty() {
            blocks.bytes = vec![0; Self::BLOCKS * block_bytes];
        }
        let bytes = &mut blocks.bytes[place * block_bytes..(place + 1) * block_bytes];
        let records = per_block.min(spill.written - number * per_block);
        if blocks.numbers[place] != number {
            let read = file
                .seek(io::SeekFrom::Start((number * block_bytes) as u64))
                .and_then(|_| file.read_exact(&mut bytes[..records * T::SIZE]));
            if let Err(e) = read {
                blocks.numbers[place] = usize::MAX;
                let _ = spill.lost.set(format!("a temporary file: {e}"));
                return None;
            }
            blocks.numbers[place] = number;
        }
        Some(read(&bytes[..records * T::SIZE]))
    }

    /// The records in order, from `start` on (ending early where one could not be read
    /// back: see [`Table::lost`]). Those in the file are read a block at a time, each
    /// copied out under one lock, not looked up one by one.
    pub(crate) fn iter_from(&self, start: usize) -> impl Iterator<Item = T> + '_ {
        let mut block: Vec<T> = Vec::new();
        let mut block_start = 0;
        (start..self.len()).map_while(move |i| {
            let Some(at) = i.checked_sub(self.held.len()) else {
                return self.held.get(i).copied();
            };
            let spill = self.spill.as_ref()?;
            if at >= spill.written {
                return self.get(i);
            }
            let per_block = Self::per_block();
            let number = at / per_block;
            if block.is_empty() || block_start != number * per_block {
                block.clear();
                block_start = number * per_block;
                self.in_block(spill, number, |bytes| {
                    block.extend(bytes.chunks_exact(T::SIZE).map(T::take));
                })?;
            }
            block.get(at - block_start).copied()
        })
    }

    /// No records (the held ones' memory kept; the file dropped).
    pub(crate) fn clear(&mut self) {
        self.held.clear();
        self.spill = None;
    }
}

/// Byte strings appended end to end and read back by where they stand: the first
/// [`Heap::KEEP`] bytes in memory, the rest in an anonymous temporary file (a string
/// wholly in the one or the other). Where no file can be made or written, the rest is
/// held too.
#[derive(Default)]
pub(crate) struct Heap {
    held: Vec<u8>,
    /// The file, once one is needed, with the bytes written to it.
    file: Option<std::sync::Mutex<std::fs::File>>,
    written: u64,
    /// Bytes after those in the file, not yet written.
    pending: Vec<u8>,
    /// Whether the file failed: the rest held in `pending` from there on.
    in_memory: bool,
    /// Blocks of the file read back, each where its number (modulo their count) puts
    /// it, with where it starts: strings read near one another are read a block at a
    /// time, not a read each.
    blocks: std::sync::Mutex<Vec<(u64, Vec<u8>)>>,
}

impl Heap {
    /// Bytes held before the rest go to the file.
    #[cfg(not(any(test, feature = "fuzz-small-tables")))]
    const KEEP: usize = 1 << 20;
    /// Bytes gathered before they are written.
    #[cfg(not(any(test, feature = "fuzz-small-tables")))]
    const PENDING: usize = 64 << 10;
    /// Bytes read back at a time, and blocks of them kept.
    #[cfg(not(any(test, feature = "fuzz-small-tables")))]
    const BLOCK: usize = 4 << 10;
    #[cfg(not(any(test, feature = "fuzz-small-tables")))]
    const BLOCKS: usize = 64;
    #[cfg(any(test, feature = "fuzz-small-tables"))]
    const KEEP: usize = 10;
    #[cfg(any(test, feature = "fuzz-small-tables"))]
    const PENDING: usize = 16;
    #[cfg(any(test, feature = "fuzz-small-tables"))]
    const BLOCK: usize = 12;
    #[cfg(any(test, feature = "fuzz-small-tables"))]
    const BLOCKS: usize = 2;

    /// How many bytes it holds in memory, pending ones included.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.held.len() + self.pending.len()
    }

    /// Appends `bytes`; where they start.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> u64 {
        // Held only while none has gone past the held part: a string's place is its
        // place in the held bytes, else past them all.
        let past = self.written > 0 || !self.pending.is_empty();
        if !past && self.held.len() + bytes.len() <= Self::KEEP {
            self.held.extend_from_slice(bytes);
            return (self.held.len() - bytes.len()) as u64;
        }
        let at = self.held.len() as u64 + self.written + self.pending.len() as u64;
        self.pending.extend_from_slice(bytes);
        if self.pending.len() >= Self::PENDING && !self.in_memory && self.flush().is_err() {
            self.in_memory = true;
        }
        at
    }

    /// Writes the pending bytes to the file (kept pending when it fails).
    fn flush(&mut self) -> io::Result<()> {
        if self.file.is_none() {
            self.file = Some(std::sync::Mutex::new(tempfile::tempfile()?));
        }
        let file = self.file.as_mut().ok_or_else(poisoned)?;
        let file = file.get_mut().map_err(|_| poisoned())?;
        file.seek(io::SeekFrom::Start(self.written))?;
        file.write_all(&self.pending)?;
        self.written += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }

    /// The `len` bytes from `at`.
    ///
    /// # Errors
    /// They are past the end, or the file could not be read back.
    pub(crate) fn get(&self, at: u64, len: usize) -> io::Result<Vec<u8>> {
        let held = self.held.len() as u64;
        let end = at.checked_add(len as u64).ok_or_else(broken_run)?;
        if end <= held {
            return Ok(self.held[at as usize..end as usize].to_vec());
        }
        let in_file = at.checked_sub(held).ok_or_else(broken_run)?;
        if let Some(from) = in_file.checked_sub(self.written) {
            let from = from as usize;
            let bytes = self.pending.get(from..from + len).ok_or_else(broken_run)?;
            return Ok(bytes.to_vec());
        }
        let file = self.file.as_ref().ok_or_else(broken_run)?;
        let read = |at: u64, bytes: &mut Vec<u8>, len: usize| {
            let mut file = file.lock().map_err(|_| poisoned())?;
            bytes.clear();
            bytes.resize(len, 0);
            let read = file
                .seek(io::SeekFrom::Start(at))
                .and_then(|_| file.read_exact(bytes));
            if read.is_err() {
                bytes.clear();
            }
            read
        };
        let block = Self::BLOCK as u64;
        let start = in_file - in_file % block;
        if in_file + len as u64 > start + block {
            // Across blocks: read alone.
            let mut bytes = Vec::new();
            read(in_file, &mut bytes, len)?;
            return Ok(bytes);
        }
        let mut blocks = self.blocks.lock().map_err(|_| poisoned())?;
        if blocks.is_empty() {
            blocks.resize_with(Self::BLOCKS, || (u64::MAX, Vec::new()));
        }
        let (at, bytes) = &mut blocks[(in_file / block) as usize % Self::BLOCKS];
        if *at != start || bytes.is_empty() {
            *at = u64::MAX;
            read(start, bytes, block.min(self.written - start) as usize)?;
            *at = start;
        }
        let from = (in_file - start) as usize;
        bytes
            .get(from..from + len)
            .map(<[u8]>::to_vec)
            .ok_or_else(broken_run)
    }
}

/// A name of the system's (a path, a file name) as bytes, for a temporary file:
/// [`os_string`] reads it back.
pub(crate) fn os_bytes(name: &std::ffi::OsStr) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        name.as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        name.to_string_lossy().into_owned().into_bytes()
    }
}

/// The name [`os_bytes`] gave `bytes` of.
pub(crate) fn os_string(bytes: Vec<u8>) -> std::ffi::OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        std::ffi::OsString::from_vec(bytes)
    }
    #[cfg(not(unix))]
    {
        String::from_utf8_lossy(&bytes).into_owned().into()
    }
}

/// A record of a [`Sorter`]: ordered, and written as bytes.
pub(crate) trait Sortable: Ord + Sized {
    /// Appends its bytes.
    fn put(&self, out: &mut Vec<u8>);
    /// Reads it back from the bytes [`Sortable::put`] wrote (`None` for bytes it did
    /// not write).
    fn take(bytes: &[u8]) -> Option<Self>;
    /// About the memory it takes when held, in bytes (its heap parts included).
    fn held_size(&self) -> usize;
}

/// Records sorted in a bounded memory (an external merge sort): gathered in memory up
/// to a budget, each batch sorted and written to an anonymous temporary file as a run,
/// the runs then merged ([`Sorter::sorted`]), at most [`Sorter::WAYS`] at a time (more
/// are first merged into longer runs, in the file). Where no temporary file can be
/// made or written, the records are held and sorted in memory: nothing is lost.
pub(crate) struct Sorter<T> {
    held: Vec<T>,
    held_bytes: usize,
    /// The file of runs, once one is written, and the runs in it (start and end).
    file: Option<std::fs::File>,
    runs: Vec<(u64, u64)>,
    /// Bytes in the file.
    written: u64,
    /// Whether the file failed to be made or written: held in memory from there on.
    in_memory: bool,
}

impl<T: Sortable> Default for Sorter<T> {
    fn default() -> Self {
        Sorter {
            held: Vec::new(),
            held_bytes: 0,
            file: None,
            runs: Vec::new(),
            written: 0,
            in_memory: false,
        }
    }
}

impl<T: Sortable> Sorter<T> {
    /// Bytes of records held before they are sorted and written as a run.
    #[cfg(not(any(test, feature = "fuzz-small-tables")))]
    const BUDGET: usize = 1 << 20;
    /// Runs merged at once.
    #[cfg(not(any(test, feature = "fuzz-small-tables")))]
    const WAYS: usize = 64;
    /// Bytes read ahead from each run while they are merged.
    #[cfg(not(any(test, feature = "fuzz-small-tables")))]
    const READ: usize = 16 << 10;
    // Tiny in the crate's own tests and under fuzzing, so that runs are written and
    // merged in several passes after a few records.
    #[cfg(any(test, feature = "fuzz-small-tables"))]
    const BUDGET: usize = 200;
    #[cfg(any(test, feature = "fuzz-small-tables"))]
    const WAYS: usize = 3;
    #[cfg(any(test, feature = "fuzz-small-tables"))]
    const READ: usize = 16;

    /// Adds `record`: past the budget, the records held are sorted and written as a
    /// run.
    pub(crate) fn push(&mut self, record: T) {
        // Its heap part in a block of the allocator's (some 16 bytes more).
        let heap = match record.held_size() {
            0 => 0,
            size => size + 16,
        };
        self.held_bytes += std::mem::size_of::<T>() + heap;
        self.held.push(record);
        if self.held_bytes >= Self::BUDGET && !self.in_memory && self.spill().is_err() {
            // The records stay held, and no file is asked for again.
            self.in_memory = true;
        }
    }

    /// Sorts the records held and writes them to the file as a run (none written when
    /// it fails: they are still held).
    fn spill(&mut self) -> io::Result<()> {
        if self.file.is_none() {
            self.file = Some(tempfile::tempfile()?);
        }
        self.held.sort_unstable();
        let mut bytes = Vec::new();
        for record in &self.held {
            put_framed(record, &mut bytes)?;
        }
        let file = self.file.as_mut().ok_or_else(poisoned)?;
        file.seek(io::SeekFrom::Start(self.written))?;
        file.write_all(&bytes)?;
        let end = self.written + bytes.len() as u64;
        self.runs.push((self.written, end));
        self.written = end;
        self.held.clear();
        self.held_bytes = 0;
        Ok(())
    }

    /// The records in order.
    ///
    /// # Errors
    /// The temporary file could not be read back.
    pub(crate) fn sorted(mut self) -> io::Result<Merged<T>> {
        self.held.sort_unstable();
        let mut file = self.file.take();
        // Runs past the ways merged into longer ones, the first ones first.
        while self.runs.len() > Self::WAYS {
            let first: Vec<(u64, u64)> = self.runs.drain(..Self::WAYS).collect();
            let start = self.written;
            let mut merged = Merged::<T>::of(file.take(), first)?;
            let mut bytes = Vec::new();
            while let Some(record) = merged.next_record()? {
                put_framed(&record, &mut bytes)?;
                if bytes.len() >= Self::READ {
                    merged.write_at(self.written, &bytes)?;
                    self.written += bytes.len() as u64;
                    bytes.clear();
                }
            }
            merged.write_at(self.written, &bytes)?;
            self.written += bytes.len() as u64;
            self.runs.push((start, self.written));
            file = merged.file.take();
        }
        let mut merged = Merged::of(file, std::mem::take(&mut self.runs))?;
        merged.held = std::mem::take(&mut self.held).into_iter();
        merged.next_held = merged.held.next();
        Ok(merged)
    }
}

impl<T: Sortable> Extend<T> for Sorter<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, records: I) {
        for record in records {
            self.push(record);
        }
    }
}

/// Appends `record`'s bytes after their length (four bytes, little-endian).
fn put_framed<T: Sortable>(record: &T, bytes: &mut Vec<u8>) -> io::Result<()> {
    let start = bytes.len();
    bytes.extend_from_slice(&[0; 4]);
    record.put(bytes);
    let len = u32::try_from(bytes.len() - start - 4)
        .map_err(|_| io::Error::other("a record of 4 GiB or more"))?;
    bytes[start..start + 4].copy_from_slice(&len.to_le_bytes());
    Ok(())
}

/// The records of a [`Sorter`] in order: its runs merged, with those it held.
pub(crate) struct Merged<T> {
    file: Option<std::fs::File>,
    /// Each run's bytes read ahead, and where the rest of it stands in the file.
    runs: Vec<RunReader>,
    /// Each run's next record, least first (with its run, for ties in the run order).
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(T, usize)>>,
    held: std::vec::IntoIter<T>,
    next_held: Option<T>,
}

/// A run of a [`Sorter`]'s file, read a part at a time.
struct RunReader {
    at: u64,
    end: u64,
    bytes: Vec<u8>,
    used: usize,
}

impl<T: Sortable> Merged<T> {
    /// The merge of `runs` of `file` (none without a file).
    fn of(file: Option<std::fs::File>, runs: Vec<(u64, u64)>) -> io::Result<Self> {
        if file.is_none() && !runs.is_empty() {
            return Err(broken_run());
        }
        let mut merged = Merged {
            file,
            runs: runs
                .into_iter()
                .map(|(at, end)| RunReader {
                    at,
                    end,
                    bytes: Vec::new(),
                    used: 0,
                })
                .collect(),
            heap: std::collections::BinaryHeap::new(),
            held: Vec::new().into_iter(),
            next_held: None,
        };
        for run in 0..merged.runs.len() {
            if let Some(record) = merged.read(run)? {
                merged.heap.push(std::cmp::Reverse((record, run)));
            }
        }
        Ok(merged)
    }

    /// Writes `bytes` at `at` of the file.
    fn write_at(&mut self, at: u64, bytes: &[u8]) -> io::Result<()> {
        let file = self.file.as_mut().ok_or_else(poisoned)?;
        file.seek(io::SeekFrom::Start(at))?;
        file.write_all(bytes)
    }

    /// The next record of run `run`, if any.
    fn read(&mut self, run: usize) -> io::Result<Option<T>> {
        let Some(file) = self.file.as_mut() else {
            return Ok(None);
        };
        let reader = &mut self.runs[run];
        let mut take = |reader: &mut RunReader, len: usize| -> io::Result<Option<Vec<u8>>> {
            if reader.bytes.len() - reader.used < len {
                let left = reader.end - reader.at;
                let want = (len.max(Sorter::<T>::READ) as u64).min(left) as usize;
                reader.bytes.drain(..reader.used);
                reader.used = 0;
                let have = reader.bytes.len();
                if have + want < len {
                    // The run's end, between records; else cut within one.
                    return match have + want {
                        0 => Ok(None),
                        _ => Err(broken_run()),
                    };
                }
                reader.bytes.resize(have + want, 0);
                file.seek(io::SeekFrom::Start(reader.at))?;
                file.read_exact(&mut reader.bytes[have..])?;
                reader.at += want as u64;
            }
            let bytes = reader.bytes[reader.used..reader.used + len].to_vec();
            reader.used += len;
            Ok(Some(bytes))
        };
        let Some(len) = take(reader, 4)? else {
            return Ok(None);
        };
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let bytes = take(reader, len)?.ok_or_else(broken_run)?;
        T::take(&bytes).map(Some).ok_or_else(broken_run)
    }

    /// The next record in order.
    ///
    /// # Errors
    /// The temporary file could not be read back.
    pub(crate) fn next_record(&mut self) -> io::Result<Option<T>> {
        let from_runs = match (self.heap.peek(), &self.next_held) {
            (None, None) => return Ok(None),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(std::cmp::Reverse((run, _))), Some(held)) => run <= held,
        };
        if !from_runs {
            let next = self.held.next();
            return Ok(std::mem::replace(&mut self.next_held, next));
        }
        let Some(std::cmp::Reverse((record, run))) = self.heap.pop() else {
            return Ok(None);
        };
        if let Some(next) = self.read(run)? {
            self.heap.push(std::cmp::Reverse((next, run)));
        }
        Ok(Some(record))
    }
}

/// A temporary file (a sorter's runs, a heap's strings, or what is kept in them) that
/// does not read back as written.
pub(crate) fn broken_run() -> io::Error {
    io::Error::other("a temporary file does not read back as written")
}

/// A poisoned lock on a temporary file, as an error.
fn poisoned() -> io::Error {
    io::Error::other("temporary file lock poisoned")
}

#[cfg(test)]
mod tests {
    use super::{Fixed, Heap, Sortable, Sorter, Spool, Table};

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Pair(u64, u32);

    /// What a spool holds in memory never takes more than [`Spool::HELD`]: grown by
    /// doubling from 1,000 bytes, it took 16 MB for its last 8.
    #[test]
    fn a_spool_holds_no_more_than_its_bound() {
        let mut spool = Spool::new();
        let chunk = [7u8; 1000];
        while spool.len() + 1000 <= Spool::HELD as u64 {
            spool.push(&chunk);
        }
        assert!(spool.file.is_none());
        assert!(
            spool.held.capacity() <= Spool::HELD,
            "{}",
            spool.held.capacity()
        );
        spool.push(&chunk);
        assert!(spool.file.is_some());
        let len = spool.len();
        let bytes = spool.into_vec().unwrap();
        assert_eq!(bytes.len() as u64, len);
        assert!(bytes.iter().all(|&b| b == 7));
    }

    impl Fixed for Pair {
        const SIZE: usize = 12;
        fn put(&self, out: &mut Vec<u8>) {
            out.extend_from_slice(&self.0.to_le_bytes());
            out.extend_from_slice(&self.1.to_le_bytes());
        }
        fn take(bytes: &[u8]) -> Self {
            let (a, b) = bytes.split_at(8);
            Pair(
                u64::from_le_bytes(a.try_into().unwrap()),
                u32::from_le_bytes(b.try_into().unwrap()),
            )
        }
    }

    /// A table gives back every record at its index, in any order, wherever it is
    /// (held, in the file, pending), as a list does; and is filled again once cleared.
    #[test]
    fn table_records_read_back_by_index_as_a_list() {
        let mut next = crate::guard::draws(0x5851_f42d_4c95_7f2d);
        for keep in [0, 1, 7, 1000] {
            let mut table = Table::new(keep);
            for round in 0..2 {
                let count = 1 + next(300);
                let mut list = Vec::new();
                for k in 0..count {
                    let record = Pair(next(1 << 30) as u64 * 7919 + k as u64, k as u32);
                    table.push(record);
                    list.push(record);
                    // Read while being written: the last one, and one at random.
                    assert_eq!(table.get(k), Some(record));
                    let at = next(k + 1);
                    assert_eq!(table.get(at), Some(list[at]));
                }
                assert_eq!(table.len(), count);
                assert!(table.spill.is_some() == (count > keep), "{keep} {count}");
                for _ in 0..3 * count {
                    let at = next(count + 2);
                    assert_eq!(table.get(at), list.get(at).copied());
                }
                // From the start, past the held ones, and anywhere; also with records
                // read at random between (blocks evicted while a block is gone through).
                for from in [0, keep.min(count), next(count), count] {
                    assert!(table.iter_from(from).eq(list[from..].iter().copied()));
                    let mut read = Vec::new();
                    for record in table.iter_from(from) {
                        let at = next(count);
                        assert_eq!(table.get(at), Some(list[at]));
                        read.push(record);
                    }
                    assert_eq!(read, list[from..]);
                }
                assert!(table.lost().is_none(), "round {round}");
                table.clear();
                assert_eq!(table.len(), 0);
                assert_eq!(table.get(0), None);
            }
        }
    }

    /// Strings appended to a heap read back where they stand, held, in the file and
    /// pending, while more are added.
    #[test]
    fn strings_read_back_from_a_heap_where_they_stand() {
        let mut next = crate::guard::draws(0x9e37_79b9_7f4a_7c15);
        let mut heap = Heap::default();
        let mut list: Vec<(u64, Vec<u8>)> = Vec::new();
        for _ in 0..300 {
            let bytes: Vec<u8> = (0..next(9)).map(|_| next(256) as u8).collect();
            let at = heap.push(&bytes);
            list.push((at, bytes));
            let (at, bytes) = &list[next(list.len())];
            assert_eq!(heap.get(*at, bytes.len()).unwrap(), *bytes);
        }
        assert!(heap.written > 0);
        for (at, bytes) in &list {
            assert_eq!(heap.get(*at, bytes.len()).unwrap(), *bytes);
        }
        let end = list.last().map_or(0, |(at, b)| at + b.len() as u64);
        assert!(heap.get(end, 1).is_err());
        // A string too long for the held part, then a short one that would fit in it:
        // each where it was put.
        let mut heap = Heap::default();
        let (long, short) = (heap.push(b"0123456789ab"), heap.push(b"x"));
        assert_eq!(heap.get(long, 12).unwrap(), b"0123456789ab");
        assert_eq!(heap.get(short, 1).unwrap(), b"x");
    }

    impl Sortable for (String, u64) {
        fn put(&self, out: &mut Vec<u8>) {
            out.extend_from_slice(&self.1.to_le_bytes());
            out.extend_from_slice(self.0.as_bytes());
        }
        fn take(bytes: &[u8]) -> Option<Self> {
            let (n, text) = bytes.split_at_checked(8)?;
            let n = u64::from_le_bytes(n.try_into().ok()?);
            Some((String::from_utf8(text.to_vec()).ok()?, n))
        }
        fn held_size(&self) -> usize {
            self.0.len()
        }
    }

    /// Records sorted through the file (runs written, merged a few at a time in
    /// several passes, with those still held) come out as a sort in memory gives them,
    /// equal keys too.
    #[test]
    fn records_sorted_through_a_file_come_out_as_sorted_in_memory() {
        let mut next = crate::guard::draws(0x2545_f491_4f6c_dd1d);
        for count in [0, 1, 2, 5, 17, 60, 400, 3000] {
            let mut sorter = Sorter::default();
            let mut list = Vec::new();
            for _ in 0..count {
                let len = next(12);
                let text: String = (0..len).map(|_| char::from(b'a' + next(3) as u8)).collect();
                let record = (text, next(4) as u64);
                sorter.push(record.clone());
                list.push(record);
            }
            // A few held; past the budget, runs (more than are merged at once).
            assert!(count > 2 || sorter.runs.is_empty(), "{count}");
            assert!(count < 17 || !sorter.runs.is_empty(), "{count}");
            assert!(count < 400 || sorter.runs.len() > Sorter::<(String, u64)>::WAYS);
            list.sort();
            let mut merged = sorter.sorted().unwrap();
            let mut out = Vec::new();
            while let Some(record) = merged.next_record().unwrap() {
                out.push(record);
            }
            assert_eq!(out, list, "{count}");
        }
    }

    #[test]
    fn bytes_past_the_held_part_come_back_in_order() {
        let mut spool = Spool::new();
        let mut expected = Vec::new();
        let mut i = 0u32;
        while expected.len() < Spool::HELD + (3 << 20) {
            let chunk: Vec<u8> = (0..(i % 5000)).map(|j| (i ^ j) as u8).collect();
            spool.push(&chunk);
            expected.extend_from_slice(&chunk);
            i += 1;
        }
        assert!(spool.file.is_some(), "the spool spilled to a file");
        assert_eq!(spool.len(), expected.len() as u64);
        assert!(spool.into_vec().unwrap() == expected);
        let small = Spool::from(b"abc".to_vec());
        assert_eq!(small.into_vec().unwrap(), b"abc");
    }
}
