//! Paths into a message, written with proto field names.
//!
//! Every error and warning the crate reports about a message says where it is, as a
//! path of `.proto` snake_case field names and list indices:
//! `tuple_shapes[1].layout.minor_to_major[0]`. The same path names the place in the
//! binary message, in its JSON form and in `xla_data.proto`.

use std::fmt;

/// One step of a [`Path`]: a field of a message, or an index into a repeated field.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// A field, by its proto name (`layout`, `minor_to_major`).
    Field(&'static str),
    /// A field this crate's schema does not name, by its field number.
    Number(u32),
    /// An element of a repeated field.
    Index(usize),
}

/// A path from the root of a message to one of its fields, e.g.
/// `tuple_shapes[1].layout.minor_to_major[0]`.
///
/// The empty path is the root message itself and displays as the empty string.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Path {
    segments: Vec<Segment>,
}

impl Path {
    /// The root of a message.
    pub fn root() -> Self {
        Self::default()
    }

    /// The segments of the path, outermost first.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Whether this is the root (no segments).
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// Appends a segment in place.
    pub fn push(&mut self, segment: Segment) {
        self.segments.push(segment);
    }

    /// Removes the innermost segment, if any.
    pub fn pop(&mut self) -> Option<Segment> {
        self.segments.pop()
    }

    /// This path extended by a named field.
    #[must_use]
    pub fn field(&self, name: &'static str) -> Self {
        self.with(Segment::Field(name))
    }

    /// This path extended by a list index.
    #[must_use]
    pub fn index(&self, index: usize) -> Self {
        self.with(Segment::Index(index))
    }

    /// This path extended by one segment.
    #[must_use]
    pub fn with(&self, segment: Segment) -> Self {
        let mut segments = Vec::with_capacity(self.segments.len() + 1);
        segments.extend_from_slice(&self.segments);
        segments.push(segment);
        Self { segments }
    }

    /// `prefix` followed by this path.
    #[must_use]
    pub fn prefixed(&self, prefix: &Path) -> Self {
        let mut segments = prefix.segments.clone();
        segments.extend_from_slice(&self.segments);
        Self { segments }
    }
}

impl From<Vec<Segment>> for Path {
    fn from(segments: Vec<Segment>) -> Self {
        Self { segments }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for segment in &self.segments {
            match segment {
                Segment::Field(name) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
                Segment::Number(number) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    write!(f, "#{number}")?;
                }
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
            first = false;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_like_a_field_access() {
        let path = Path::root()
            .field("tuple_shapes")
            .index(1)
            .field("layout")
            .field("minor_to_major")
            .index(0);
        assert_eq!(path.to_string(), "tuple_shapes[1].layout.minor_to_major[0]");
        assert_eq!(Path::root().to_string(), "");
        assert_eq!(
            Path::root()
                .field("layout")
                .with(Segment::Number(99))
                .to_string(),
            "layout.#99"
        );
    }
}
