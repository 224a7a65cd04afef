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

#[cfg(test)]
mod tests {
    use super::Spool;

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
