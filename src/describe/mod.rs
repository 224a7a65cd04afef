//! What a shape means and where its elements live, as data: the model behind
//! `xla-shape explain` and `xla-shape index`, in words ([`Display`](std::fmt::Display))
//! and as JSON (`serde`), so that every front end (the command line, a Python binding)
//! says the same thing. The JSON fields are documented in `docs/explain-index-json.md`.
//!
//! ```
//! use xla_shape::describe::{describe, locate, IndexReport};
//! use xla_shape::text::HloStyle;
//! use xla_shape::{LayoutPlan, Shape};
//!
//! // docs/tiled_layout.md, figure 1: 2x2 tiles over a 3x5 array, padded to 4x6.
//! let shape: Shape = "f32[3,5]{1,0:T(2,2)}".parse()?;
//! let description = describe(&shape, HloStyle::Xla);
//! let array = description.shape.array.as_ref().unwrap();
//! let memory = array.memory.as_ref().unwrap();
//! assert_eq!((memory.allocated_elements, memory.allocated_bytes), (24, 96));
//! assert_eq!(memory.strides.elements, None); // the tiles reorder elements
//! assert!(description.to_string().contains("allocated: 24 slots of 32 bits, 96 bytes"));
//!
//! let plan = LayoutPlan::new(shape.as_array().unwrap())?;
//! let location = locate(&plan, &[2, 3])?;
//! assert_eq!((location.linear_index, location.byte_offset), (17, Some(68)));
//! let report = IndexReport::new(&shape, HloStyle::Xla, &plan, vec![location]);
//! assert_eq!(
//!     serde_json::to_string(&report)?,
//!     r#"{"version":1,"shape":"f32[3,5]{1,0:T(2,2)}","element_bits":32,"allocated_elements":24,"results":[{"index":[2,3],"linear_index":17,"padding":false,"bit_offset":544,"byte_offset":68}]}"#
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;
use std::fmt::{self, Write as _};

mod stream;
pub use stream::{explain, explain_with, ExplainError, ExplainFormat, STREAMED, STREAMED_ELEMENT};

use serde::{Deserialize, Serialize};

use crate::index::{IndexError, LayoutPlan};
use crate::layout::{memory_space_name, PaddingValue};
use crate::proto::{LayoutProto, ShapeProto};
use crate::spool::Spool;
use crate::text::HloStyle;
use crate::{ArrayShape, DimSize, Layout, PrimitiveType, Shape, TileDim};

/// The version of the JSON documents ([`Description`], [`IndexReport`]). Adding a field
/// keeps it; renaming or removing one bumps it.
pub const VERSION: u32 = 1;

/// Largest side of the memory map ([`Memory::memory_map`]) of a 2-D array.
pub const MEMORY_MAP_MAX_SIDE: u64 = 16;

/// How deep tuples are described: the elements of a tuple nested deeper than this are
/// not ([`ShapeDescription::elements`] is `None`), which keeps the description (and its
/// JSON) small and its recursion shallow whatever the input.
pub const MAX_DEPTH: usize = 64;

/// Everything `explain` says about a shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Description {
    /// [`VERSION`].
    pub version: u32,
    /// The shape.
    #[serde(flatten)]
    pub shape: ShapeDescription,
}

/// One shape (a tuple's elements are shapes too).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShapeDescription {
    /// The shape in HLO text, in the style asked for.
    pub text: String,
    /// The lossless text ([`HloStyle::Exact`]) when it differs from [`text`](Self::text)
    /// (XLA's text leaves out fields XLA ignores, such as the retired padding); else
    /// `None`.
    pub lossless_text: Option<String>,
    /// What kind of shape this is.
    pub kind: ShapeKind,
    /// The array, for an array or a buffer (which holds one array); else `None`.
    pub array: Option<ArrayDescription>,
    /// The elements, for a tuple; else `None` (and for a tuple nested deeper than
    /// [`MAX_DEPTH`], whose elements are not described).
    pub elements: Option<Vec<ShapeDescription>>,
}

/// The kind of a shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShapeKind {
    /// An array of elements.
    Array,
    /// A tuple of shapes.
    Tuple,
    /// A token: orders side effects, holds no data.
    Token,
    /// An opaque value: backend data XLA does not look into.
    Opaque,
    /// A buffer holding one array.
    Buffer,
}

/// An array: element type, dimensions, layout and sizes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayDescription {
    /// The element type.
    pub element_type: ElementType,
    /// The dimensions, dimension 0 first (empty for a scalar).
    pub dimensions: Vec<Dimension>,
    /// The layout; `None` when the shape has none (memory then follows XLA's default
    /// layout, dimension 0 most major).
    pub layout: Option<LayoutDescription>,
    /// Number of elements (bounded dimensions at their bound); `None` when a dimension is
    /// unbounded.
    pub element_count: Option<u64>,
    /// Bytes of the elements without any padding (XLA's `ByteSizeOfElements`); `None`
    /// when a dimension is unbounded.
    pub byte_size: Option<u64>,
    /// Sizes and strides in memory, from the layout engine ([`LayoutPlan`]); `None` when
    /// there is no memory layout (an unbounded dimension).
    pub memory: Option<Memory>,
    /// Why [`memory`](Self::memory) is `None`.
    pub no_memory_reason: Option<String>,
}

/// An element type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ElementType {
    /// The HLO text name (`bf16`, `s4`, `pred`).
    pub name: String,
    /// What the values are.
    pub kind: ElementKind,
    /// Bits of one value (1 for `pred`, 4 for `s4`).
    pub bit_width: u32,
    /// Bytes one element takes unpacked (XLA's `ByteWidth`: 1 for `pred` and `s4`).
    pub byte_width: u32,
    /// Bits one element takes in memory: the layout's `E(n)` when set, else
    /// `byte_width` × 8.
    pub bits_in_memory: u64,
    /// Whether the layout packs elements (`E(n)` set).
    pub packed: bool,
}

/// What the values of an element type are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ElementKind {
    /// `pred`.
    Boolean,
    /// `s1` ... `s64`.
    SignedInteger,
    /// `u1` ... `u64`.
    UnsignedInteger,
    /// Real floating point (`f32`, `bf16`, `f8e4m3fn`, ...).
    FloatingPoint,
    /// `c64`, `c128`: pairs of floats.
    Complex,
}

/// One dimension of an array.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dimension {
    /// Its number (0 is the first in the text).
    pub dimension: usize,
    /// The conventional letter for 1 to 4 dimensions (`x`; `y, x`; `z, y, x`;
    /// `p, z, y, x`); else `None`.
    pub letter: Option<String>,
    /// Static, or dynamic with or without a bound.
    pub kind: DimensionKind,
    /// The size, or the bound of a bounded dynamic dimension; `None` when unbounded.
    pub size: Option<u64>,
    /// As in HLO text: `32`, `<=32`, `?`.
    pub text: String,
}

/// Static or dynamic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DimensionKind {
    /// A static size.
    Static,
    /// Dynamic, at most `size`.
    Bounded,
    /// Dynamic, without a bound.
    Unbounded,
}

/// A layout's fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutDescription {
    /// The layout in HLO text, in the style asked for.
    pub text: String,
    /// Dimension numbers from the most minor (fastest varying) to the most major.
    pub minor_to_major: Vec<usize>,
    /// The reverse: physical dimension 0 (most major) first.
    pub major_to_minor: Vec<usize>,
    /// Whether this is XLA's default layout (dimension 0 most major, no attributes).
    pub is_default: bool,
    /// Tiles, applied in order (`T(8,128)(2,1)`: first (8,128), then (2,1)).
    pub tiles: Vec<TileDescription>,
    /// `L(n)`: after tiling, the element count is rounded up to a multiple of this (1:
    /// no tail padding).
    pub tail_padding_alignment_in_elements: u64,
    /// `E(n)`: bits per element in memory; 0 when not set.
    pub element_size_in_bits: u64,
    /// `S(n)`: the memory space.
    pub memory_space: MemorySpace,
    /// `SC(...)`: how physical dimensions are split between memories.
    pub split_configs: Vec<SplitDescription>,
    /// `M(n)`: bytes of dynamic-size metadata in front of the data (0: none; a negative
    /// value means none too).
    pub dynamic_shape_metadata_prefix_bytes: i64,
    /// Retired (2017-2018) `padded_dimensions`, `PD(...)`: the size each dimension is
    /// padded to; `None` when absent.
    pub padded_dimensions: Option<Vec<u64>>,
    /// Retired `padding_value`, `PV(...)`: `zero`, `one`, `lowest`, `highest` or
    /// `unknown`; `None` when absent.
    pub padding_value: Option<String>,
}

/// One tile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileDescription {
    /// As in HLO text: `(8,128)`, `(2,*,128)`.
    pub text: String,
    /// The sizes, most major first; `None` for `*` (the dimension is combined into the
    /// next more minor one).
    pub dimensions: Vec<Option<u64>>,
    /// For the first tile, the logical dimensions it covers (the most minor ones, most
    /// major first); `None` for later tiles, which apply to the already tiled shape.
    pub logical_dimensions: Option<Vec<usize>>,
}

/// A memory space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemorySpace {
    /// The id (`S(n)`; 0 is the default).
    pub number: i64,
    /// XLA's name for it (`device memory (HBM)`, `generic fast memory (VMEM on TPU)`,
    /// `host memory`, `unpinned host memory`); `None` for backend-specific ids.
    pub name: Option<String>,
}

/// One split config.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitDescription {
    /// The physical dimension split (0 = most major).
    pub dimension: i64,
    /// The logical dimension it is.
    pub logical_dimension: Option<usize>,
    /// Where it is split.
    pub split_indices: Vec<i64>,
}

/// Sizes and strides in memory, from [`LayoutPlan`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    /// Slots in the buffer: legacy padding, tiles and tail padding included
    /// ([`LayoutPlan::allocated_elements`]).
    pub allocated_elements: u64,
    /// Bytes of the buffer ([`LayoutPlan::allocated_bytes`]).
    pub allocated_bytes: u64,
    /// Slots up to the end of the last element in memory ([`LayoutPlan::data_elements`]).
    pub data_elements: u64,
    /// Bytes up to the end of the last element in memory ([`LayoutPlan::data_bytes`]).
    pub data_bytes: u64,
    /// XLA's `ShapeUtil::ArraySize` ([`LayoutPlan::xla_array_size`]: first tile only).
    pub xla_array_size: u64,
    /// XLA's `ShapeUtil::ArrayDataSize` ([`LayoutPlan::xla_array_data_size`]).
    pub xla_array_data_size: u64,
    /// Strides, or why there are none.
    pub strides: Strides,
    /// For a 2-D array of at most [`MEMORY_MAP_MAX_SIDE`] × [`MEMORY_MAP_MAX_SIDE`]: the
    /// linear index of each element, one row per index of dimension 0; else `None`.
    pub memory_map: Option<Vec<Vec<u64>>>,
}

/// Strides, one per logical dimension, or why there are none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Strides {
    /// In elements ([`LayoutPlan::element_strides`]); `None` when the tiles reorder
    /// elements.
    pub elements: Option<Vec<u64>>,
    /// In bytes ([`LayoutPlan::byte_strides`]); `None` when there are no element
    /// strides or elements are not whole bytes.
    pub bytes: Option<Vec<u64>>,
    /// Why `elements` or `bytes` is `None`.
    pub reason: Option<String>,
}

/// An array's dimensions as the words and the JSON give them: those a description
/// holds, or made one at a time from the shape as they are written (`explain` of an
/// array: at a rank of hundreds of thousands they took some 110 bytes each held).
#[derive(Clone, Copy)]
enum Dims<'a> {
    Held(&'a [Dimension]),
    Made(&'a ArrayShape),
}

impl<'a> Dims<'a> {
    fn len(self) -> usize {
        match self {
            Dims::Held(held) => held.len(),
            Dims::Made(array) => array.dimensions().len(),
        }
    }

    fn get(self, i: usize) -> Option<Cow<'a, Dimension>> {
        match self {
            Dims::Held(held) => held.get(i).map(Cow::Borrowed),
            Dims::Made(array) => {
                let size = array.dimensions().get(i)?;
                let (kind, text) = match size {
                    DimSize::Static(n) => (DimensionKind::Static, n.to_string()),
                    DimSize::Bounded(n) => (DimensionKind::Bounded, format!("<={n}")),
                    DimSize::Unbounded => (DimensionKind::Unbounded, "?".to_string()),
                };
                let letters = array.dimension_letters();
                Some(Cow::Owned(Dimension {
                    dimension: i,
                    letter: letters.and_then(|l| l.get(i)).map(char::to_string),
                    kind,
                    size: size.bound(),
                    text,
                }))
            }
        }
    }

    fn iter(self) -> impl Iterator<Item = Cow<'a, Dimension>> {
        (0..self.len()).filter_map(move |i| self.get(i))
    }
}

/// A list of dimensions, serialised as a `Vec<Dimension>` is.
struct DimsJson<'a>(Dims<'a>);

impl Serialize for DimsJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter())
    }
}

/// A shape's description whose array's dimensions `dims` gives (a tuple's are its
/// elements' own), with the document's `version` when given: serialised as the
/// [`Description`] (or the [`ShapeDescription`]) with those dimensions is, field for
/// field in their order (the destructurings below fail to compile when a field is
/// added).
pub(crate) struct ShapeJson<'a> {
    version: Option<u32>,
    shape: &'a ShapeDescription,
    dims: Dims<'a>,
}

impl Serialize for ShapeJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeStruct};
        struct Array<'a>(&'a ArrayDescription, Dims<'a>);
        impl Serialize for Array<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let ArrayDescription {
                    element_type,
                    dimensions: _,
                    layout,
                    element_count,
                    byte_size,
                    memory,
                    no_memory_reason,
                } = self.0;
                let mut out = serializer.serialize_struct("ArrayDescription", 7)?;
                out.serialize_field("element_type", element_type)?;
                out.serialize_field("dimensions", &DimsJson(self.1))?;
                out.serialize_field("layout", layout)?;
                out.serialize_field("element_count", element_count)?;
                out.serialize_field("byte_size", byte_size)?;
                out.serialize_field("memory", memory)?;
                out.serialize_field("no_memory_reason", no_memory_reason)?;
                out.end()
            }
        }
        let ShapeDescription {
            text,
            lossless_text,
            kind,
            array,
            elements,
        } = self.shape;
        // A map, as `Description` (whose shape is flattened) is; `serde_json` writes a
        // struct alike.
        let mut out = serializer.serialize_map(None)?;
        if let Some(version) = self.version {
            out.serialize_entry("version", &version)?;
        }
        out.serialize_entry("text", text)?;
        out.serialize_entry("lossless_text", lossless_text)?;
        out.serialize_entry("kind", kind)?;
        out.serialize_entry("array", &array.as_ref().map(|a| Array(a, self.dims)))?;
        out.serialize_entry("elements", elements)?;
        out.end()
    }
}

/// The description of `shape` at nesting `depth`, an array's dimensions left out, to
/// be written with them made as they are ([`ShapeJson`], [`shape_lines_made`]).
pub(crate) fn describe_without_dimensions(
    shape: &Shape,
    style: HloStyle,
    depth: usize,
) -> ShapeDescription {
    describe_shape_with(shape, style, depth, false)
}

impl<'a> ShapeJson<'a> {
    /// The JSON of `description` (of `shape`, [`describe_without_dimensions`]), with
    /// `version` when given.
    pub(crate) fn new(
        version: Option<u32>,
        description: &'a ShapeDescription,
        shape: &'a Shape,
    ) -> Self {
        ShapeJson {
            version,
            shape: description,
            dims: made_dims(shape),
        }
    }
}

/// The dimensions of `shape`'s array, made as they are written; none for any other
/// shape.
fn made_dims(shape: &Shape) -> Dims<'_> {
    match shape {
        Shape::Array(array) | Shape::Buffer(array) => Dims::Made(array),
        _ => Dims::Held(&[]),
    }
}

/// The words of `description` (of `shape`, [`describe_without_dimensions`]) at
/// `indent`.
pub(crate) fn shape_lines_made(
    description: &ShapeDescription,
    shape: &Shape,
    indent: &str,
    out: &mut Lines<'_>,
) {
    let dims = match shape {
        Shape::Array(_) | Shape::Buffer(_) => Some(made_dims(shape)),
        _ => None,
    };
    shape_lines_with(description, dims, indent, out);
}

/// Describes a validated shape; shape and layout text in `style`.
pub fn describe(shape: &Shape, style: HloStyle) -> Description {
    Description {
        version: VERSION,
        shape: describe_shape(shape, style, 0),
    }
}

/// The text of a shape in `style` ([`Display`](std::fmt::Display), the lossless text of a
/// validated value, if XLA's printer refuses it), and the lossless text when it differs.
fn shape_texts(shape: &Shape, style: HloStyle) -> (String, Option<String>) {
    let exact = shape.to_string();
    match style {
        HloStyle::Exact => (exact, None),
        HloStyle::Xla => match HloStyle::Xla.print_shape(&ShapeProto::from(shape)) {
            Ok(xla) if xla != exact => (xla, Some(exact)),
            _ => (exact, None),
        },
    }
}

/// The text of a shape in `style` (see [`describe`]).
pub fn shape_text(shape: &Shape, style: HloStyle) -> String {
    shape_texts(shape, style).0
}

fn describe_shape(shape: &Shape, style: HloStyle, depth: usize) -> ShapeDescription {
    describe_shape_with(shape, style, depth, true)
}

/// [`describe_shape`], an array's dimensions left out unless `dimensions`.
fn describe_shape_with(
    shape: &Shape,
    style: HloStyle,
    depth: usize,
    dimensions: bool,
) -> ShapeDescription {
    let (text, lossless_text) = shape_texts(shape, style);
    let array = |array| Some(describe_array_with(array, style, dimensions));
    let (kind, array, elements) = match shape {
        Shape::Array(a) => (ShapeKind::Array, array(a), None),
        Shape::Buffer(a) => (ShapeKind::Buffer, array(a), None),
        Shape::Token => (ShapeKind::Token, None, None),
        Shape::Opaque => (ShapeKind::Opaque, None, None),
        Shape::Tuple(_) if depth >= MAX_DEPTH => (ShapeKind::Tuple, None, None),
        Shape::Tuple(elements) => (
            ShapeKind::Tuple,
            None,
            Some(
                elements
                    .iter()
                    .map(|e| describe_shape(e, style, depth + 1))
                    .collect(),
            ),
        ),
    };
    ShapeDescription {
        text,
        lossless_text,
        kind,
        array,
        elements,
    }
}

/// The description of an array, its dimensions left out unless `dimensions` (the caller makes
/// them as it writes them: [`Dims::Made`]).
fn describe_array_with(array: &ArrayShape, style: HloStyle, dimensions: bool) -> ArrayDescription {
    let ty = array.element_type();
    // The plan made and dropped before the dimensions are described: at the largest
    // ranks each takes tens of MB, which they took together.
    let (memory, no_memory_reason) = match LayoutPlan::new(array) {
        Ok(plan) => (Some(memory(&plan)), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let dimensions = match dimensions {
        true => Dims::Made(array).iter().map(Cow::into_owned).collect(),
        false => Vec::new(),
    };
    ArrayDescription {
        element_type: ElementType {
            name: ty.name().to_string(),
            kind: element_kind(ty),
            bit_width: ty.bit_width().unwrap_or(0),
            byte_width: ty.byte_width().unwrap_or(0),
            bits_in_memory: array.storage_bits_per_element(),
            packed: array
                .layout()
                .is_some_and(|l| l.element_size_in_bits() != 0),
        },
        dimensions,
        layout: array.layout().map(|l| describe_layout(l, style)),
        element_count: array.element_count(),
        byte_size: array.byte_size(),
        memory,
        no_memory_reason,
    }
}

fn element_kind(ty: PrimitiveType) -> ElementKind {
    if ty == PrimitiveType::Pred {
        ElementKind::Boolean
    } else if ty.is_signed_integral() {
        ElementKind::SignedInteger
    } else if ty.is_unsigned_integral() {
        ElementKind::UnsignedInteger
    } else if ty.is_complex() {
        ElementKind::Complex
    } else {
        ElementKind::FloatingPoint
    }
}

fn describe_layout(layout: &Layout, style: HloStyle) -> LayoutDescription {
    let proto = LayoutProto::from(layout);
    let text = match style {
        HloStyle::Xla => crate::text::print_layout_as_xla(&proto),
        HloStyle::Exact => Ok(layout.to_string()),
    }
    .unwrap_or_else(|_| layout.to_string());
    let m2m = layout.minor_to_major();
    let tiles = layout
        .tiles()
        .iter()
        .enumerate()
        .map(|(i, tile)| {
            let dims = tile.dimensions();
            TileDescription {
                text: tile_text(dims),
                dimensions: dims.iter().map(|d| d.size()).collect(),
                logical_dimensions: (i == 0)
                    .then(|| m2m.iter().take(dims.len()).rev().copied().collect()),
            }
        })
        .collect();
    LayoutDescription {
        text,
        minor_to_major: m2m.to_vec(),
        major_to_minor: layout.major_to_minor(),
        is_default: *layout == Layout::default_for_rank(m2m.len()),
        tiles,
        tail_padding_alignment_in_elements: layout.tail_padding_alignment_in_elements(),
        element_size_in_bits: layout.element_size_in_bits(),
        memory_space: MemorySpace {
            number: layout.memory_space(),
            name: memory_space_name(layout.memory_space()).map(str::to_string),
        },
        split_configs: layout
            .split_configs()
            .iter()
            .map(|split| SplitDescription {
                dimension: split.dimension(),
                logical_dimension: usize::try_from(split.dimension())
                    .ok()
                    .and_then(|d| layout.physical_to_logical(d)),
                split_indices: split.split_indices().to_vec(),
            })
            .collect(),
        dynamic_shape_metadata_prefix_bytes: layout.dynamic_shape_metadata_prefix_bytes(),
        padded_dimensions: layout.padded_dimensions().map(<[u64]>::to_vec),
        padding_value: layout.padding_value().map(|v| {
            match v {
                PaddingValue::Zero => "zero",
                PaddingValue::One => "one",
                PaddingValue::Lowest => "lowest",
                PaddingValue::Highest => "highest",
                PaddingValue::Unknown => "unknown",
            }
            .to_string()
        }),
    }
}

fn tile_text(dims: &[TileDim]) -> String {
    let inner = dims
        .iter()
        .map(|d| match d {
            TileDim::Size(n) => n.to_string(),
            TileDim::Combine => "*".to_string(),
        })
        .collect::<Vec<_>>()
        .join(",");
    format!("({inner})")
}

fn memory(plan: &LayoutPlan) -> Memory {
    let bits = plan.element_bits();
    let elements = plan.element_strides();
    // `LayoutPlan::byte_strides`, from the strides in elements at hand.
    let bytes = elements.as_deref().and_then(|s| plan.byte_strides_of(s));
    let reason = match (&elements, &bytes) {
        (None, _) => Some("the tiles reorder elements".to_string()),
        (Some(_), None) => Some(format!("{bits}-bit elements are not whole bytes")),
        _ => None,
    };
    let memory_map = match *plan.dimensions() {
        [rows, cols]
            if (1..=MEMORY_MAP_MAX_SIDE).contains(&rows)
                && (1..=MEMORY_MAP_MAX_SIDE).contains(&cols) =>
        {
            Some(
                (0..rows)
                    .map(|i| {
                        (0..cols)
                            .map(|j| plan.linear_index(&[i, j]).unwrap_or(u64::MAX))
                            .collect()
                    })
                    .collect(),
            )
        }
        _ => None,
    };
    Memory {
        allocated_elements: plan.allocated_elements(),
        allocated_bytes: plan.allocated_bytes(),
        data_elements: plan.data_elements(),
        data_bytes: plan.data_bytes(),
        xla_array_size: plan.xla_array_size(),
        xla_array_data_size: plan.xla_array_data_size(),
        strides: Strides {
            elements,
            bytes,
            reason,
        },
        memory_map,
    }
}

// ------------------------------------------------------------------------ index

/// Where one element lives, or what one slot holds: the answer of `index` for one index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// The multi-dimensional index; `None` for a padding slot.
    pub index: Option<Vec<u64>>,
    /// The slot, counted in elements from the start of the buffer, tiles and padding
    /// included ([`LayoutPlan::linear_index`]).
    pub linear_index: u64,
    /// Whether the slot is padding (holds no element).
    pub padding: bool,
    /// The offset in bits from the start of the buffer: linear index × bits per element
    /// (within a byte, bits count from the least significant).
    pub bit_offset: u128,
    /// The offset in bytes; `None` when elements are not whole bytes.
    pub byte_offset: Option<u64>,
}

/// The location of the element at `index`.
///
/// # Errors
/// As [`LayoutPlan::linear_index`]: a wrong number of coordinates, or one out of bounds.
pub fn locate(plan: &LayoutPlan, index: &[u64]) -> Result<Location, IndexError> {
    let linear = plan.linear_index(index)?;
    Ok(location(plan, Some(index.to_vec()), linear))
}

/// What slot `linear` holds: an element (its index) or padding.
///
/// # Errors
/// As [`LayoutPlan::multi_index`]: a slot beyond the buffer.
pub fn locate_linear(plan: &LayoutPlan, linear: u64) -> Result<Location, IndexError> {
    let index = plan.multi_index(linear)?;
    Ok(location(plan, index, linear))
}

fn location(plan: &LayoutPlan, index: Option<Vec<u64>>, linear: u64) -> Location {
    let bits = plan.element_bits();
    Location {
        padding: index.is_none(),
        index,
        linear_index: linear,
        bit_offset: u128::from(linear) * u128::from(bits),
        // A slot inside a validated buffer: slot × bytes fits (the buffer's size does).
        byte_offset: (bits % 8 == 0).then(|| linear.saturating_mul(bits / 8)),
    }
}

/// Everything `index` says: the shape and one [`Location`] per index asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexReport {
    /// [`VERSION`].
    pub version: u32,
    /// The shape in HLO text, in the style asked for.
    pub shape: String,
    /// Bits one element takes in memory ([`LayoutPlan::element_bits`]).
    pub element_bits: u64,
    /// Slots in the buffer ([`LayoutPlan::allocated_elements`]).
    pub allocated_elements: u64,
    /// One per index asked for, in order.
    pub results: Vec<Location>,
}

impl IndexReport {
    /// The report for `results`, computed with `plan` (the plan of `shape`'s array).
    pub fn new(shape: &Shape, style: HloStyle, plan: &LayoutPlan, results: Vec<Location>) -> Self {
        IndexReport {
            version: VERSION,
            shape: shape_text(shape, style),
            element_bits: plan.element_bits(),
            allocated_elements: plan.allocated_elements(),
            results,
        }
    }
}

/// An [`IndexReport`]'s JSON written a result at a time into a
/// [`Spool`]: the bytes of `serde_json` on the whole report
/// (compact or indented) and a newline, in the memory of one result whatever their
/// number (`index -` answers any number of lines).
///
/// ```
/// use xla_shape::describe::{locate, IndexJson, IndexReport};
/// use xla_shape::text::HloStyle;
/// use xla_shape::{LayoutPlan, Shape};
///
/// let shape: Shape = "f32[3,5]{1,0:T(2,2)}".parse()?;
/// let plan = LayoutPlan::new(shape.as_array().unwrap())?;
/// let mut json = IndexJson::new(&shape, HloStyle::Xla, &plan, false);
/// let location = locate(&plan, &[2, 3])?;
/// json.push(&location);
/// let whole = IndexReport::new(&shape, HloStyle::Xla, &plan, vec![location]);
/// let written = json.finish().into_vec()?;
/// assert_eq!(written, format!("{}\n", serde_json::to_string(&whole)?).into_bytes());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct IndexJson {
    out: crate::spool::Spool,
    pretty: bool,
    results: usize,
}

impl IndexJson {
    /// The report of `shape` (whose array's plan is `plan`), with no result yet.
    pub fn new(shape: &Shape, style: HloStyle, plan: &LayoutPlan, pretty: bool) -> Self {
        let empty = IndexReport::new(shape, style, plan, Vec::new());
        // The report without results, up to its `results` key.
        let (json, end) = if pretty {
            (serde_json::to_string_pretty(&empty), "[]\n}")
        } else {
            (serde_json::to_string(&empty), "[]}")
        };
        let json = json.unwrap_or_default();
        let mut out = crate::spool::Spool::new();
        out.push(json.strip_suffix(end).unwrap_or(&json).as_bytes());
        out.push(b"[");
        IndexJson {
            out,
            pretty,
            results: 0,
        }
    }

    /// Appends the next result.
    pub fn push(&mut self, location: &Location) {
        if self.results > 0 {
            self.out.push(b",");
        }
        self.results += 1;
        if self.pretty {
            // Indented as the third level; JSON strings hold no raw newline. (A
            // `Location` always serialises.)
            let json = serde_json::to_string_pretty(location).unwrap_or_default();
            self.out.push(b"\n    ");
            self.out.push(json.replace('\n', "\n    ").as_bytes());
        } else {
            let json = serde_json::to_string(location).unwrap_or_default();
            self.out.push(json.as_bytes());
        }
    }

    /// The whole report, closed, with a newline.
    pub fn finish(mut self) -> crate::spool::Spool {
        if self.pretty {
            if self.results > 0 {
                self.out.push(b"\n  ");
            }
            self.out.push(b"]\n}\n");
        } else {
            self.out.push(b"]}\n");
        }
        self.out
    }
}

// ------------------------------------------------------------------------ words

/// A byte count with its unit, the exact number first: `1 byte`, `96 bytes`,
/// `8388608 bytes (8 MiB)`, `4000000000000000 bytes (3.6 PiB)`.
///
/// ```
/// use xla_shape::describe::bytes_text;
/// assert_eq!(bytes_text(1), "1 byte");
/// assert_eq!(bytes_text(1023), "1023 bytes");
/// assert_eq!(bytes_text(1536), "1536 bytes (1.5 KiB)");
/// assert_eq!(bytes_text(8 << 20), "8388608 bytes (8 MiB)");
/// assert_eq!(bytes_text(4_000_000_000_000_000), "4000000000000000 bytes (3.6 PiB)");
/// ```
pub fn bytes_text(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes == 1 {
        return "1 byte".to_string();
    }
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut unit = 0;
    let mut scale: u64 = 1024;
    while unit + 1 < UNITS.len() && bytes / scale >= 1024 {
        unit += 1;
        scale *= 1024;
    }
    let name = UNITS[unit];
    if bytes % scale == 0 {
        return format!("{bytes} bytes ({} {name})", bytes / scale);
    }
    // One decimal, rounded; the lossy float is for display only.
    let value = bytes as f64 / scale as f64;
    let shown = format!("{value:.1}");
    let shown = shown.strip_suffix(".0").unwrap_or(&shown);
    format!("{bytes} bytes ({shown} {name})")
}

fn plural(count: u64, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

fn join<T: fmt::Display>(items: &[T]) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{item}");
    }
    out
}

impl fmt::Display for Description {
    /// The words of `xla-shape explain`: one fact a line, nested shapes indented.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Lines::held();
        shape_lines(&self.shape, "", &mut out);
        f.write_str(&out.finish())
    }
}

/// The lines of a description as they are written, held, or handed on to a spool in
/// pieces of [`Lines::PIECE`] bytes: the words for a rank of hundreds of thousands
/// took 32 MB held whole.
pub(crate) struct Lines<'a> {
    text: String,
    spool: Option<&'a mut Spool>,
}

impl<'a> Lines<'a> {
    /// Bytes gathered before they go on to the spool.
    const PIECE: usize = 64 << 10;

    /// Lines held, for [`Lines::finish`] to give.
    fn held() -> Self {
        Lines {
            text: String::new(),
            spool: None,
        }
    }

    /// Lines that go on to `spool`.
    pub(crate) fn into_spool(spool: &'a mut Spool) -> Self {
        Lines {
            text: String::new(),
            spool: Some(spool),
        }
    }

    fn push_str(&mut self, s: &str) {
        match self.spool.as_deref_mut() {
            // A piece that fills the buffer goes on at once, after what is gathered,
            // not through the buffer: a shape's text of megabytes kept the buffer that
            // large for the rest of the output.
            Some(spool) if self.text.len() + s.len() >= Self::PIECE => {
                spool.push(self.text.as_bytes());
                self.text.clear();
                spool.push(s.as_bytes());
            }
            _ => self.text.push_str(s),
        }
    }

    fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }

    /// Hands the rest on to the spool; the text held when there is none.
    pub(crate) fn finish(mut self) -> String {
        if let Some(spool) = self.spool.take() {
            spool.push(self.text.as_bytes());
            self.text.clear();
        }
        self.text
    }
}

impl fmt::Write for Lines<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

fn shape_lines(shape: &ShapeDescription, indent: &str, out: &mut Lines<'_>) {
    shape_lines_with(shape, None, indent, out);
}

/// [`shape_lines`], the array's dimensions those of `dims` when given.
fn shape_lines_with(
    shape: &ShapeDescription,
    dims: Option<Dims<'_>>,
    indent: &str,
    out: &mut Lines<'_>,
) {
    let _ = writeln!(out, "{indent}{}", shape.text);
    let inner = format!("{indent}  ");
    if let Some(lossless) = &shape.lossless_text {
        let _ = writeln!(
            out,
            "{inner}lossless text (--hlo-style exact): {lossless} (XLA's text leaves out what XLA ignores)"
        );
    }
    match (shape.kind, &shape.array, &shape.elements) {
        (ShapeKind::Buffer, Some(array), _) => {
            let _ = writeln!(out, "{inner}a buffer holding one array:");
            array_lines(
                array,
                dims.unwrap_or(Dims::Held(&array.dimensions)),
                &inner,
                out,
            );
        }
        (_, Some(array), _) => {
            array_lines(
                array,
                dims.unwrap_or(Dims::Held(&array.dimensions)),
                &inner,
                out,
            );
        }
        (ShapeKind::Token, ..) => {
            let _ = writeln!(
                out,
                "{inner}a token: orders side effects, holds no data (0 bytes)"
            );
        }
        (ShapeKind::Opaque, ..) => {
            let _ = writeln!(
                out,
                "{inner}an opaque value: backend data XLA does not look into"
            );
        }
        (ShapeKind::Tuple, None, None) => {
            let _ = writeln!(
                out,
                "{inner}a tuple (its elements are not described: nested deeper than {MAX_DEPTH} levels)"
            );
        }
        (_, None, Some(elements)) => {
            let count = u64::try_from(elements.len()).unwrap_or(u64::MAX);
            let _ = writeln!(
                out,
                "{inner}a tuple of {}:",
                plural(count, "element", "elements")
            );
            for (i, element) in elements.iter().enumerate() {
                let _ = writeln!(out, "{inner}element {i}:");
                shape_lines(element, &format!("{inner}  "), out);
            }
        }
        _ => {}
    }
}

fn array_lines(array: &ArrayDescription, dims: Dims<'_>, indent: &str, out: &mut Lines<'_>) {
    element_line(&array.element_type, indent, out);
    dimension_lines(dims, indent, out);
    match &array.layout {
        Some(layout) => {
            order_line(dims, layout, indent, out);
            tile_lines(dims, layout, indent, out);
            attribute_lines(layout, indent, out);
        }
        None => {
            let _ = writeln!(
                out,
                "{indent}no layout (memory follows XLA's default: dimension 0 most major)"
            );
        }
    }
    match (array.element_count, array.byte_size) {
        (Some(count), Some(bytes)) => {
            let _ = writeln!(
                out,
                "{indent}{}, {} of elements; XLA's ByteSizeOf, padding not counted",
                plural(count, "element", "elements"),
                bytes_text(bytes)
            );
        }
        _ => {
            let _ = writeln!(out, "{indent}size unknown: a dimension is unbounded");
        }
    }
    match (&array.memory, &array.no_memory_reason) {
        (Some(memory), _) => memory_lines(memory, array.element_type.bits_in_memory, indent, out),
        (None, reason) => {
            let _ = writeln!(
                out,
                "{indent}no memory layout: {}",
                reason.as_deref().unwrap_or("unknown")
            );
        }
    }
}

/// `element type: bf16, 16-bit floating point, 2 bytes per element`.
fn element_line(ty: &ElementType, indent: &str, out: &mut Lines<'_>) {
    let bits = ty.bit_width;
    let kind = match ty.kind {
        ElementKind::Boolean => "boolean".to_string(),
        ElementKind::SignedInteger => format!("{bits}-bit signed integer"),
        ElementKind::UnsignedInteger => format!("{bits}-bit unsigned integer"),
        ElementKind::Complex => format!(
            "{bits}-bit complex (real and imaginary {}-bit floats)",
            bits / 2
        ),
        ElementKind::FloatingPoint => format!("{bits}-bit floating point"),
    };
    let bytes = plural(u64::from(ty.byte_width), "byte", "bytes");
    let _ = write!(
        out,
        "{indent}element type: {}, {kind}, {bytes} per element",
        ty.name
    );
    if ty.packed {
        let packed = ty.bits_in_memory;
        let _ = write!(
            out,
            " unpacked, {packed} bits per element as laid out (E({packed}))"
        );
    } else if bits < 8 && ty.kind != ElementKind::Boolean {
        out.push_str(" (not packed: no E(n) in the layout)");
    }
    out.push('\n');
}

fn dimension_name(dims: Dims<'_>, dim: usize) -> String {
    match dims.get(dim).as_ref().and_then(|d| d.letter.as_deref()) {
        Some(letter) => format!("dimension {dim} ({letter})"),
        None => format!("dimension {dim}"),
    }
}

/// One line per dimension: its number, letter and size.
fn dimension_lines(dims: Dims<'_>, indent: &str, out: &mut Lines<'_>) {
    if dims.len() == 0 {
        let _ = writeln!(out, "{indent}a scalar: no dimensions, one element");
        return;
    }
    let count = u64::try_from(dims.len()).unwrap_or(u64::MAX);
    let _ = writeln!(
        out,
        "{indent}{}, dimension 0 first:",
        plural(count, "dimension", "dimensions")
    );
    for dim in dims.iter() {
        let size = match (dim.kind, dim.size) {
            (DimensionKind::Static, Some(n)) => n.to_string(),
            (DimensionKind::Bounded, Some(n)) => format!("dynamic, at most {n}"),
            _ => "dynamic, unbounded".to_string(),
        };
        let _ = writeln!(
            out,
            "{indent}  {}: {size}",
            dimension_name(dims, dim.dimension)
        );
    }
}

/// The memory order from `minor_to_major`.
fn order_line(dims: Dims<'_>, layout: &LayoutDescription, indent: &str, out: &mut Lines<'_>) {
    let m2m = &layout.minor_to_major;
    if m2m.is_empty() {
        return;
    }
    let _ = write!(out, "{indent}minor_to_major {{{}}}: ", join(m2m));
    // Only the most minor and the most major are named (a rank may be in the
    // hundreds of thousands).
    let name = |d: &usize| dimension_name(dims, *d);
    match m2m.as_slice() {
        [only] => {
            let _ = write!(out, "{} is the only one", name(only));
        }
        [minor, .., major] => {
            let _ = write!(
                out,
                "{} varies fastest in memory, {} slowest",
                name(minor),
                name(major)
            );
        }
        [] => {}
    }
    if layout.is_default {
        out.push_str(" (XLA's default: dimension 0 most major)");
    }
    out.push('\n');
}

/// Each tile: its sizes and which dimensions it covers.
fn tile_lines(dims: Dims<'_>, layout: &LayoutDescription, indent: &str, out: &mut Lines<'_>) {
    for tile in &layout.tiles {
        let rank = tile.dimensions.len();
        match &tile.logical_dimensions {
            Some(covered) => {
                let rank = u64::try_from(rank).unwrap_or(u64::MAX);
                let _ = write!(
                    out,
                    "{indent}tile {}: the array is cut into {rank}-dimensional tiles over the {}",
                    tile.text,
                    if rank == 1 {
                        "most minor dimension".to_string()
                    } else {
                        format!("{rank} most minor dimensions")
                    }
                );
                if !covered.is_empty() {
                    let names: Vec<String> =
                        covered.iter().map(|&d| dimension_name(dims, d)).collect();
                    let _ = write!(out, " ({})", names.join(", "));
                }
                out.push_str(", tiles laid out one after another, edges padded");
            }
            None => {
                let _ = write!(
                    out,
                    "{indent}then tile {}: applied again to the most minor dimensions of the tiled shape",
                    tile.text
                );
            }
        }
        if tile.dimensions.contains(&None) {
            out.push_str("; '*' merges a dimension into the next more minor one");
        }
        out.push('\n');
    }
}

/// L, E, S, SC, M and the retired padding fields.
fn attribute_lines(layout: &LayoutDescription, indent: &str, out: &mut Lines<'_>) {
    let tail = layout.tail_padding_alignment_in_elements;
    if tail > 1 {
        let _ = writeln!(
            out,
            "{indent}tail padding L({tail}): after tiling, the element count is rounded up to a multiple of {tail}"
        );
    }
    let space = &layout.memory_space;
    let name = space.name.as_deref().unwrap_or("backend specific");
    if space.number != 0 {
        let _ = writeln!(out, "{indent}memory space S({}): {name}", space.number);
    } else {
        let _ = writeln!(out, "{indent}memory space 0: {name}");
    }
    for split in &layout.split_configs {
        let indices = split
            .split_indices
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            out,
            "{indent}split: physical dimension {} (0 = most major) is split at {indices}",
            split.dimension
        );
    }
    let prefix = layout.dynamic_shape_metadata_prefix_bytes;
    if prefix > 0 {
        let _ = writeln!(
            out,
            "{indent}M({prefix}): {} of dynamic-size metadata sit in front of the data",
            bytes_text(prefix.unsigned_abs())
        );
    }
    if let Some(padded) = &layout.padded_dimensions {
        let _ = write!(
            out,
            "{indent}retired padding PD({}): each dimension padded at its end to these sizes",
            join(padded)
        );
        if let Some(value) = &layout.padding_value {
            let _ = write!(out, ", filled with {value}");
        }
        out.push('\n');
    }
}

/// Sizes with padding, strides and, for small 2-D shapes, a picture of the memory
/// order (each element's linear index; dimension 0 down, dimension 1 across).
fn memory_lines(memory: &Memory, bits: u64, indent: &str, out: &mut Lines<'_>) {
    let _ = writeln!(
        out,
        "{indent}allocated: {} of {bits} bits, {}; legacy padding, tiles and tail padding included",
        plural(memory.allocated_elements, "slot", "slots"),
        bytes_text(memory.allocated_bytes)
    );
    let _ = writeln!(
        out,
        "{indent}data: {}, {}, up to the end of the last element in memory",
        plural(memory.data_elements, "slot", "slots"),
        bytes_text(memory.data_bytes)
    );
    let _ = writeln!(
        out,
        "{indent}XLA's ArraySize {}, ArrayDataSize {}; both from the first tile only",
        bytes_text(memory.xla_array_size),
        bytes_text(memory.xla_array_data_size)
    );
    let strides = &memory.strides;
    match (&strides.elements, &strides.bytes) {
        (Some(elements), Some(bytes)) => {
            let _ = writeln!(
                out,
                "{indent}strides: [{}] elements, [{}] bytes",
                join(elements),
                join(bytes)
            );
        }
        (Some(elements), None) => {
            let _ = writeln!(
                out,
                "{indent}strides: [{}] elements (none in bytes: {})",
                join(elements),
                strides.reason.as_deref().unwrap_or("")
            );
        }
        (None, _) => {
            let _ = writeln!(
                out,
                "{indent}strides: none ({})",
                strides.reason.as_deref().unwrap_or("")
            );
        }
    }
    if let Some(rows) = &memory.memory_map {
        let width = rows
            .iter()
            .flatten()
            .map(|v| v.to_string().len())
            .max()
            .unwrap_or(1);
        let _ = writeln!(
            out,
            "{indent}memory order (linear index of each element; dimension 0 down, dimension 1 across):"
        );
        for row in rows {
            out.push_str(indent);
            out.push(' ');
            for cell in row {
                let _ = write!(out, " {cell:>width$}");
            }
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines going on to a spool give the bytes pushed, in order, whatever the sizes of
    /// the pieces: small ones gathered, ones that fill the buffer passed straight on
    /// after what was gathered, and the buffer never held past its size.
    #[test]
    fn lines_hand_on_their_pieces_in_order() {
        let sizes = [
            1,
            5,
            Lines::PIECE - 3,
            2,
            1,
            3 * Lines::PIECE,
            0,
            7,
            Lines::PIECE,
        ];
        let mut spool = Spool::new();
        let mut want = String::new();
        let mut lines = Lines::into_spool(&mut spool);
        for (i, &n) in sizes.iter().enumerate() {
            let piece: String = std::iter::repeat_n(char::from(b'a' + i as u8), n).collect();
            lines.push_str(&piece);
            want.push_str(&piece);
            assert!(lines.text.capacity() <= 2 * Lines::PIECE, "{i}");
        }
        lines.push('\n');
        want.push('\n');
        assert_eq!(lines.finish(), "");
        let mut got = Vec::new();
        spool.write_to(&mut got).unwrap();
        assert_eq!(got, want.as_bytes());
    }

    /// The report written a result at a time is the whole report's JSON, compact and
    /// indented, for no result, one and several (padding slots among them).
    #[test]
    fn index_json_written_a_result_at_a_time_is_the_whole_report() {
        for text in ["f32[3,5]{1,0:T(2,2)}", "pred[]", "s4[7]{0:L(4)E(4)}"] {
            let shape: Shape = text.parse().unwrap();
            let plan = LayoutPlan::new(shape.as_array().unwrap()).unwrap();
            let slots = plan.allocated_elements().min(32);
            let all: Vec<Location> = (0..slots)
                .map(|slot| locate_linear(&plan, slot).unwrap())
                .collect();
            for count in [0, 1, all.len()] {
                for pretty in [false, true] {
                    let mut json = IndexJson::new(&shape, HloStyle::Xla, &plan, pretty);
                    for location in &all[..count] {
                        json.push(location);
                    }
                    let report =
                        IndexReport::new(&shape, HloStyle::Xla, &plan, all[..count].to_vec());
                    let whole = if pretty {
                        serde_json::to_string_pretty(&report)
                    } else {
                        serde_json::to_string(&report)
                    };
                    assert_eq!(
                        String::from_utf8(json.finish().into_vec().unwrap()).unwrap(),
                        whole.unwrap() + "\n",
                        "{text} {count} {pretty}"
                    );
                }
            }
        }
    }

    /// The JSON reads back into the same description, so a consumer written in Rust can
    /// use these types; text and JSON come from the same values.
    #[test]
    fn json_reads_back() {
        for text in [
            "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}",
            "f32[2,3]{0,1:PD(3,5)}",
            "(f32[?,3], token[], b(s4[2]{0:E(4)}))",
            "u8[16,512]{1,0:T(8,128)SC(1:256)}",
        ] {
            let shape: Shape = text.parse().unwrap();
            for style in [HloStyle::Xla, HloStyle::Exact] {
                let description = describe(&shape, style);
                let json = serde_json::to_string(&description).unwrap();
                let back: Description = serde_json::from_str(&json).unwrap();
                assert_eq!(back, description, "{text}");
            }
        }
    }

    #[test]
    fn sizes_have_units() {
        assert_eq!(bytes_text(0), "0 bytes");
        assert_eq!(bytes_text(1024), "1024 bytes (1 KiB)");
        assert_eq!(bytes_text(1025), "1025 bytes (1 KiB)");
        assert_eq!(bytes_text(u64::MAX), "18446744073709551615 bytes (16 EiB)");
        assert_eq!(
            bytes_text(i64::MAX as u64),
            "9223372036854775807 bytes (8 EiB)"
        );
    }
}
