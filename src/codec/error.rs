//! [`DecodeError`]: why bytes are not a message, where, and in which field.

use std::fmt;

use crate::path::{Path, Segment};

/// Bytes that cannot be decoded: what is wrong, at which byte offset of the input,
/// and in which field (a proto path such as `tuple_shapes[1].layout.tiles[0]`).
///
/// Displays as `tuple_shapes[1].layout: invalid wire type 7 at byte 14`, or without
/// the path when the problem is in the top-level message.
#[derive(Clone, PartialEq, Eq)]
pub struct DecodeError {
    // Boxed: keeps `Result<_, DecodeError>` small on the decoder's hot path.
    inner: Box<Inner>,
}

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    kind: DecodeErrorKind,
    offset: usize,
    // Innermost segment first: segments are added as the error leaves each level.
    reversed_path: Vec<Segment>,
}

/// What is wrong with the bytes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input ends inside a varint.
    #[error("truncated varint")]
    TruncatedVarint,
    /// A varint has more than 10 bytes.
    #[error("varint longer than 10 bytes")]
    VarintTooLong,
    /// A 10-byte varint encodes a number of more than 64 bits.
    #[error("varint overflows 64 bits")]
    VarintOverflow,
    /// A tag varint has more than 5 bytes.
    #[error("tag longer than 5 bytes")]
    TagTooLong,
    /// A tag varint encodes a number of more than 32 bits.
    #[error("tag {0} does not fit in 32 bits")]
    TagTooLarge(u64),
    /// A tag with field number 0.
    #[error("invalid field number 0")]
    FieldNumberZero,
    /// A tag with wire type 6 or 7.
    #[error("invalid wire type {0}")]
    InvalidWireType(u8),
    /// An end-group tag with no group open.
    #[error("end-group tag for field {0} without a start-group")]
    UnexpectedEndGroup(u32),
    /// An end-group tag that does not close the innermost open group.
    #[error("end-group tag for field {found} inside group {expected}")]
    MismatchedEndGroup {
        /// The field number of the innermost open group.
        expected: u32,
        /// The field number of the end-group tag.
        found: u32,
    },
    /// The message ends inside a group.
    #[error("group {0} has no end-group tag")]
    UnterminatedGroup(u32),
    /// A length prefix runs past the end of the enclosing message.
    #[error("length {length} runs past the end of the message ({remaining} bytes left)")]
    LengthPastEnd {
        /// The length prefix.
        length: u64,
        /// The bytes left in the enclosing message.
        remaining: usize,
    },
    /// A fixed32 or fixed64 value runs past the end of the enclosing message.
    #[error("{width}-byte value runs past the end of the message ({remaining} bytes left)")]
    TruncatedFixed {
        /// 4 or 8.
        width: usize,
        /// The bytes left in the enclosing message.
        remaining: usize,
    },
    /// Messages and groups nest deeper than [`super::wire::RECURSION_LIMIT`].
    #[error("messages nest deeper than the limit of 100")]
    RecursionLimit,
    /// Bytes left over after a single field (see [`super::UnknownField::from_raw`]).
    #[error("{0} bytes after the end of the field")]
    TrailingBytes(usize),
    /// A shape's lists hold more entries in all than [`crate::MAX_LIST_ENTRIES`].
    #[error("the shape's lists hold more than {limit} entries in all (xla-shape's limit)")]
    TooManyEntries {
        /// The most entries allowed.
        limit: usize,
    },
    /// A string field holds bytes that are not UTF-8 (proto3 requires UTF-8).
    #[error("string is not valid utf-8")]
    InvalidUtf8,
}

impl DecodeError {
    /// An error of `kind` at byte `offset` of the input, in the top-level message.
    #[cold]
    pub fn new(kind: DecodeErrorKind, offset: usize) -> Self {
        DecodeError {
            inner: Box::new(Inner {
                kind,
                offset,
                reversed_path: Vec::new(),
            }),
        }
    }

    /// What is wrong.
    pub fn kind(&self) -> &DecodeErrorKind {
        &self.inner.kind
    }

    /// The byte offset in the input where the problem starts.
    pub fn offset(&self) -> usize {
        self.inner.offset
    }

    /// The field the problem is in; the root for the top-level message itself.
    pub fn path(&self) -> Path {
        Path::from(
            self.inner
                .reversed_path
                .iter()
                .rev()
                .cloned()
                .collect::<Vec<_>>(),
        )
    }

    /// The error, one level further out: `segment` is prepended to its path.
    #[cold]
    #[must_use]
    pub(crate) fn within(mut self, segment: Segment) -> Self {
        self.inner.reversed_path.push(segment);
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.inner.reversed_path.is_empty() {
            write!(f, "{}: ", self.path())?;
        }
        write!(f, "{} at byte {}", self.inner.kind, self.inner.offset)
    }
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DecodeError({self})")
    }
}

impl std::error::Error for DecodeError {}
