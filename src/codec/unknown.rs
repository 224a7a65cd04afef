//! Fields the schema does not know, kept byte for byte at their place in the tree.

use std::collections::BTreeMap;
use std::fmt;

use super::error::DecodeError;
use super::messages::Kind;
use super::wire::{self, Reader, WireType};
use crate::path::{Path, Segment};

/// One field of a message that the schema does not know (a number from a newer
/// XLA), or with a known number but not readable as that field (a wire type the
/// field never has), or a copy of a retired layout field (see
/// [`UnknownField::is_retired_layout_field`]). Kept as its exact bytes: tag and
/// value as they were in the input.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct UnknownField {
    number: u32,
    wire_type: WireType,
    raw: Vec<u8>,
    retired: bool,
    /// For a retired copy: it came before every field numbered above 5.
    leading: bool,
}

impl UnknownField {
    /// Reads one whole field (tag and value) from `raw`, which must hold exactly
    /// that field. Fails on malformed or trailing bytes.
    pub fn from_raw(raw: &[u8]) -> Result<UnknownField, DecodeError> {
        let mut reader = Reader::new(raw);
        let field = reader.read_field(0)?;
        if !reader.is_at_end() {
            return Err(DecodeError::new(
                super::DecodeErrorKind::TrailingBytes(reader.remaining()),
                reader.position(),
            ));
        }
        Ok(UnknownField::from_parts(field.number, field.wire_type, raw))
    }

    /// Builds a field from parts already checked by the reader.
    pub(crate) fn from_parts(number: u32, wire_type: WireType, raw: &[u8]) -> UnknownField {
        UnknownField {
            number,
            wire_type,
            raw: raw.to_vec(),
            retired: false,
            leading: false,
        }
    }

    fn build(number: u32, wire_type: WireType, value: impl FnOnce(&mut Vec<u8>)) -> Self {
        assert!(
            (1..=wire::MAX_FIELD_NUMBER).contains(&number),
            "field number {number} is out of range 1..=2^29-1"
        );
        let mut raw = Vec::new();
        wire::put_tag(&mut raw, number, wire_type);
        value(&mut raw);
        UnknownField {
            number,
            wire_type,
            raw,
            retired: false,
            leading: false,
        }
    }

    /// A varint field, canonically encoded.
    ///
    /// # Panics
    /// If `number` is 0 or above 2^29 - 1.
    pub fn varint(number: u32, value: u64) -> Self {
        Self::build(number, WireType::Varint, |raw| wire::put_varint(raw, value))
    }

    /// A fixed64 field.
    ///
    /// # Panics
    /// If `number` is 0 or above 2^29 - 1.
    pub fn fixed64(number: u32, value: u64) -> Self {
        Self::build(number, WireType::Fixed64, |raw| {
            raw.extend_from_slice(&value.to_le_bytes())
        })
    }

    /// A fixed32 field.
    ///
    /// # Panics
    /// If `number` is 0 or above 2^29 - 1.
    pub fn fixed32(number: u32, value: u32) -> Self {
        Self::build(number, WireType::Fixed32, |raw| {
            raw.extend_from_slice(&value.to_le_bytes())
        })
    }

    /// A length-delimited field holding `bytes`.
    ///
    /// # Panics
    /// If `number` is 0 or above 2^29 - 1.
    pub fn length_delimited(number: u32, bytes: &[u8]) -> Self {
        Self::build(number, WireType::LengthDelimited, |raw| {
            wire::put_varint(raw, bytes.len() as u64);
            raw.extend_from_slice(bytes);
        })
    }

    /// The field number.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// The wire type of its tag.
    pub fn wire_type(&self) -> WireType {
        self.wire_type
    }

    /// The field's bytes, exactly as read: tag, value (and end-group tag).
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// Whether this is a copy of one of LayoutProto's retired fields 2-5
    /// (`padded_dimensions`, `padding_value`, `format`, `max_sparse_elements`).
    ///
    /// XLA's schema only reserves those numbers, so Google's runtime keeps them as
    /// unknown fields, in their place among the others. The codec decodes them into
    /// the named fields of [`crate::proto::LayoutProto`] and also keeps their bytes
    /// here, to write them back where Google's runtime would as long as the named
    /// fields still hold what they say. Such copies are not listed, counted or
    /// compared as unknown fields.
    pub fn is_retired_layout_field(&self) -> bool {
        self.retired
    }
}

impl fmt::Debug for UnknownField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let retired = if self.retired { " retired" } else { "" };
        write!(
            f,
            "UnknownField(#{} {}{retired} ",
            self.number, self.wire_type
        )?;
        for byte in &self.raw {
            write!(f, "{byte:02x}")?;
        }
        f.write_str(")")
    }
}

/// The unknown fields of a message and of every message nested in it: a tree
/// keyed by message position.
///
/// Each node holds the unknown fields of one message in their original order;
/// its children are the nodes of its submessages, keyed by field number and
/// repeated index (0 for a singular field). On encoding, a message's unknown
/// fields are written after its known fields, in their original order, as Google's
/// runtime does.
///
/// Equality ignores children that hold no unknown field and copies of retired
/// layout fields (their values are in the named fields).
#[derive(Clone, Debug, Default)]
pub struct UnknownFields {
    // `None` for a message with nothing kept: the common case costs one word, no
    // allocation, and nothing to drop.
    node: Option<Box<Node>>,
}

/// What one message keeps: its own fields and the nodes of its submessages.
///
/// The own fields are kept packed: their bytes one after another (each a whole
/// field, tag and value, read again to walk them) and, once a copy of a retired
/// field is among them, one byte of flags each, so that a message of millions of
/// small unknown fields costs about its own size (a struct and a heap block per field
/// cost 40 times a 3-byte field).
#[derive(Clone, Debug, Default)]
struct Node {
    /// The own fields' bytes, one whole field after another.
    raw: Vec<u8>,
    /// How many own fields there are.
    count: usize,
    /// One entry per own field, [`RETIRED`] and [`LEADING`]; empty while no field has
    /// a flag.
    flags: Vec<u8>,
    /// How many own fields are no copy of a retired field.
    unknown: usize,
    children: BTreeMap<(u32, usize), UnknownFields>,
}

/// A flag of a field kept in a [`Node`]: a copy of a retired layout field.
const RETIRED: u8 = 1;
/// A flag of a field kept in a [`Node`]: a retired copy that came before every field
/// numbered above 5.
const LEADING: u8 = 2;

/// One field kept in a [`Node`], borrowed.
#[derive(Clone, Copy)]
pub(crate) struct FieldRef<'a> {
    number: u32,
    wire_type: WireType,
    raw: &'a [u8],
    flags: u8,
}

impl<'a> FieldRef<'a> {
    /// The field's bytes: tag and value.
    pub(crate) fn raw(&self) -> &'a [u8] {
        self.raw
    }

    fn retired(&self) -> bool {
        self.flags & RETIRED != 0
    }

    /// For a copy of a retired layout field: whether it came before every field
    /// numbered above 5 of its message, as XLA of 2017-2022 wrote them (the encoder
    /// then writes the copies back in field-number order, not at the end).
    pub(crate) fn is_leading(&self) -> bool {
        self.flags & (RETIRED | LEADING) == RETIRED | LEADING
    }

    fn to_owned(self) -> UnknownField {
        UnknownField {
            number: self.number,
            wire_type: self.wire_type,
            raw: self.raw.to_vec(),
            retired: self.retired(),
            leading: self.flags & LEADING != 0,
        }
    }
}

impl PartialEq for FieldRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        (self.number, self.wire_type, self.raw, self.flags)
            == (other.number, other.wire_type, other.raw, other.flags)
    }
}

/// An empty node, for submessages without unknown fields.
pub(crate) static EMPTY: UnknownFields = UnknownFields { node: None };

impl UnknownFields {
    /// No unknown fields anywhere.
    pub fn new() -> Self {
        Self::default()
    }

    /// This message's own fields, copies of retired fields included, read again from
    /// their bytes (which hold whole fields: read when decoded, or built).
    fn own(&self) -> impl Iterator<Item = FieldRef<'_>> + '_ {
        let (raw, count, flags): (&[u8], usize, &[u8]) = match self.node.as_deref() {
            Some(node) => (&node.raw, node.count, &node.flags),
            None => (&[], 0, &[]),
        };
        let mut reader = Reader::new(raw);
        (0..count).map_while(move |i| {
            let flags = flags.get(i).copied().unwrap_or(0);
            let start = reader.position();
            let (number, wire_type) = reader.read_tag().ok()?;
            reader.skip_value(number, wire_type, 0).ok()?;
            Some(FieldRef {
                number,
                wire_type,
                raw: reader.since(start),
                flags,
            })
        })
    }

    /// How many own fields this message keeps, copies of retired fields included.
    fn own_count(&self) -> usize {
        self.node.as_deref().map_or(0, |n| n.count)
    }

    /// How many own fields this message keeps that are no copy of a retired field.
    fn own_unknown_count(&self) -> usize {
        self.node.as_deref().map_or(0, |n| n.unknown)
    }

    /// The submessage nodes, by key.
    fn nodes(&self) -> impl Iterator<Item = (&(u32, usize), &UnknownFields)> {
        self.node.iter().flat_map(|n| n.children.iter())
    }

    fn node_mut(&mut self) -> &mut Node {
        self.node.get_or_insert_with(Box::default)
    }

    /// Whether there is no unknown field in this message or any nested one (copies
    /// of retired layout fields do not count).
    pub fn is_empty(&self) -> bool {
        self.own_unknown_count() == 0 && self.nodes().all(|(_, n)| n.is_empty())
    }

    /// The number of unknown fields in this message and every nested one (copies of
    /// retired layout fields do not count).
    pub fn len(&self) -> usize {
        self.own_unknown_count() + self.nodes().map(|(_, n)| n.len()).sum::<usize>()
    }

    /// Whether the node holds nothing at all, copies of retired fields included.
    pub(crate) fn holds_nothing(&self) -> bool {
        self.own_count() == 0 && self.nodes().all(|(_, n)| n.holds_nothing())
    }

    /// This message's own unknown fields, in their original order (with any copies
    /// of retired layout fields, see [`UnknownField::is_retired_layout_field`]).
    pub fn fields(&self) -> impl Iterator<Item = UnknownField> + '_ {
        self.own().map(FieldRef::to_owned)
    }

    /// Whether this message keeps no own field (copies of retired fields included).
    pub(crate) fn own_is_empty(&self) -> bool {
        self.own_count() == 0
    }

    /// Whether every own field this message keeps is a copy of a retired field.
    pub(crate) fn own_all_retired(&self) -> bool {
        self.own_unknown_count() == 0
    }

    /// Adds an unknown field to this message, after the others.
    pub fn push(&mut self, field: UnknownField) {
        self.push_raw(&field.raw, field.retired, field.leading);
    }

    /// The node of the submessage in field `number`, element `index` (0 for a
    /// singular field), if it has one.
    pub fn child(&self, number: u32, index: usize) -> Option<&UnknownFields> {
        self.node.as_deref()?.children.get(&(number, index))
    }

    /// The node of a submessage, created empty if missing. Unknown fields placed
    /// under a submessage that the message does not have are not encoded.
    pub fn child_mut(&mut self, number: u32, index: usize) -> &mut UnknownFields {
        self.node_mut().children.entry((number, index)).or_default()
    }

    /// The submessage nodes, by (field number, index).
    pub fn children(&self) -> impl Iterator<Item = ((u32, usize), &UnknownFields)> {
        self.nodes().map(|(&key, node)| (key, node))
    }

    /// The bytes of this message's own unknown fields; with `retired`, the copies of
    /// retired layout fields too.
    pub(crate) fn own_len(&self, retired: bool) -> usize {
        if retired || self.own_unknown_count() == self.own_count() {
            return self.node.as_deref().map_or(0, |n| n.raw.len());
        }
        self.own()
            .filter(|f| !f.retired())
            .map(|f| f.raw.len())
            .sum()
    }

    pub(crate) fn write_own(&self, buf: &mut Vec<u8>, retired: bool) {
        if retired || self.own_unknown_count() == self.own_count() {
            buf.extend_from_slice(self.node.as_deref().map_or(&[], |n| &n.raw));
            return;
        }
        for field in self.own().filter(|f| !f.retired()) {
            buf.extend_from_slice(field.raw);
        }
    }

    /// This message's own unknown fields, without copies of retired fields.
    fn own_unknown(&self) -> impl Iterator<Item = FieldRef<'_>> {
        self.own().filter(|f| !f.retired())
    }

    /// The copies of retired layout fields, in order.
    pub(crate) fn retired_fields(&self) -> impl Iterator<Item = FieldRef<'_>> {
        self.own().filter(|f| f.retired())
    }

    /// Takes the node of a submessage out (to decode into it).
    pub(crate) fn take_child(&mut self, number: u32, index: usize) -> UnknownFields {
        match self.node.as_deref_mut() {
            Some(node) => node.children.remove(&(number, index)).unwrap_or_default(),
            None => UnknownFields::new(),
        }
    }

    /// Puts a node back, unless it holds nothing.
    pub(crate) fn put_child(&mut self, number: u32, index: usize, node: UnknownFields) {
        if !node.holds_nothing() {
            self.node_mut().children.insert((number, index), node);
        }
    }

    pub(crate) fn collect(&self, kind: Kind, path: &mut Path, out: &mut Vec<UnknownFieldInfo>) {
        self.visit(kind, path, &mut |info| out.push(info));
    }

    /// Hands every unknown field of this message (of `kind`, at `path`) and of its
    /// submessages to `each`, in the order of [`UnknownFields::collect`], without
    /// keeping them.
    pub(crate) fn visit(
        &self,
        kind: Kind,
        path: &mut Path,
        each: &mut dyn FnMut(UnknownFieldInfo),
    ) {
        for field in self.own_unknown() {
            each(UnknownFieldInfo {
                path: path.clone(),
                number: field.number,
                wire_type: field.wire_type,
                known_field: kind.field_name(field.number),
            });
        }
        for (&(number, index), node) in self.nodes() {
            let Some(sub) = kind.submessage(number) else {
                continue;
            };
            path.push(Segment::Field(sub.name));
            if sub.repeated {
                path.push(Segment::Index(index));
            }
            node.visit(sub.kind, path, each);
            if sub.repeated {
                path.pop();
            }
            path.pop();
        }
    }

    /// Whether [`UnknownFields::collect`] would list nothing for a message of `kind`.
    pub(crate) fn lists_nothing(&self, kind: Kind) -> bool {
        self.own_unknown_count() == 0
            && self.nodes().all(|(&(number, _), node)| {
                kind.submessage(number)
                    .is_none_or(|sub| node.lists_nothing(sub.kind))
            })
    }

    /// Adds the bytes of one whole field (tag and value), read by the decoder, as an
    /// unknown field of this message, after the others.
    pub(crate) fn push_raw(&mut self, raw: &[u8], retired: bool, leading: bool) {
        let node = self.node_mut();
        node.raw.extend_from_slice(raw);
        let flags = (u8::from(retired) * RETIRED) | (u8::from(leading) * LEADING);
        if flags != 0 || !node.flags.is_empty() {
            // The fields before the first with a flag have none.
            node.flags.resize(node.count, 0);
            node.flags.push(flags);
        }
        node.count += 1;
        node.unknown += usize::from(!retired);
    }
}

/// Compares the unknown fields, ignoring copies of retired layout fields (their
/// values are in the named fields) and children that hold no unknown field.
impl PartialEq for UnknownFields {
    fn eq(&self, other: &Self) -> bool {
        let ours = self.nodes().filter(|(_, n)| !n.is_empty());
        let theirs = other.nodes().filter(|(_, n)| !n.is_empty());
        self.own_unknown().eq(other.own_unknown()) && ours.eq(theirs)
    }
}

impl Eq for UnknownFields {}

/// Where an unknown field is, for warnings: the message holding it, its number and
/// wire type, and whether the number is a known field read with the wrong wire type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UnknownFieldInfo {
    /// The message holding the field, e.g. `tuple_shapes[1].layout` (root: empty).
    pub path: Path,
    /// The field number.
    pub number: u32,
    /// The wire type it was written with.
    pub wire_type: WireType,
    /// `Some(name)` when the number is that of a known field of the message but the
    /// field could not be read as it: a wire type the field never has, or (for the
    /// retired layout fields 2-5, which Google's runtime never reads) a value that
    /// does not parse. Google's runtimes keep such a field as unknown (so does this
    /// crate), but it is a corrupt or incompatible message, which validation should
    /// report as an error.
    pub known_field: Option<&'static str>,
}

impl UnknownFieldInfo {
    /// The path of the field itself: the message's path then `#number` (or the
    /// known field's name for a wire-type mismatch).
    pub fn field_path(&self) -> Path {
        match self.known_field {
            Some(name) => self.path.field(name),
            None => self.path.with(Segment::Number(self.number)),
        }
    }
}

/// Displays as `tuple_shapes[1].layout: unknown field 99 (varint)`, or
/// `layout: field 1 (minor_to_major) has the wrong wire type fixed64`, or
/// `layout: field 2 (padded_dimensions) cannot be read as that field (length-delimited)`.
impl fmt::Display for UnknownFieldInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_root() {
            write!(f, "{}: ", self.path)?;
        }
        match self.known_field {
            // Only the retired layout fields are kept with a wire type they can have.
            Some(
                name @ ("padded_dimensions" | "padding_value" | "format" | "max_sparse_elements"),
            ) if self.wire_type == WireType::Varint
                || (name == "padded_dimensions" && self.wire_type == WireType::LengthDelimited) =>
            {
                write!(
                    f,
                    "field {} ({name}) cannot be read as that field ({})",
                    self.number, self.wire_type
                )
            }
            Some(name) => write!(
                f,
                "field {} ({name}) has the wrong wire type {}",
                self.number, self.wire_type
            ),
            None => write!(f, "unknown field {} ({})", self.number, self.wire_type),
        }
    }
}
