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
            None => self.held.extend_from_slice(bytes),
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

/// A poisoned lock on a temporary file, as an error.
fn poisoned() -> io::Error {
    io::Error::other("temporary file lock poisoned")
}

#[cfg(test)]
mod tests {
    use super::{Fixed, Spool, Table};

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Pair(u64, u32);

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
