//! The HLO text printer over the raw protos, iterative so any depth is safe.
//!
//! Two modes:
//! - [`Mode::Exact`] prints every value the proto holds, including our legacy extension,
//!   and refuses ([`PrintError`]) a value the text cannot carry back to the same proto.
//! - [`Mode::Xla`] prints what XLA prints for the proto: it reads the proto as HEAD's
//!   `Shape::FromProto` does (memory space narrowed to 8 bits, retired fields and dim
//!   level types ignored, `#(invalid)` for a non-integral index type, `M(n)` only for
//!   n > 0) and fails only where XLA's `FromProto` fails.
//!
//! The text is written straight into one `String`, in a single walk. Where a value sits
//! in the message is kept as the stack of open tuples and physical shapes, and turned
//! into a [`Path`] only when a value is refused.

use crate::digits::push_int;

use super::error::PrintError;
use super::types;
use crate::path::{Path, Segment};
use crate::proto::{LayoutProto, PrimitiveType, ProgramShapeProto, ShapeProto};

/// Which printer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Exact,
    Xla,
    /// Exact, but a memory space outside int8 is printed as is rather than refused
    /// (for `Display` of validated values, which must not fail).
    Display,
}

/// A shape whose text is begun but not finished, on the walk's explicit stack.
enum Open<'a> {
    /// A tuple or buffer: `shape.tuple_shapes[..next]` are begun, the last of them is
    /// the one being printed; `)` closes it.
    Elements { shape: &'a ShapeProto, next: usize },
    /// An array whose layout waits for its physical shape (being printed) before the
    /// rest of the layout: `)`, `M(...)`, our legacy attributes, `}`.
    Physical(&'a LayoutProto),
}

impl Open<'_> {
    /// The path segments from this open shape to the shape inside it being printed.
    fn segments(&self) -> [Segment; 2] {
        match self {
            Open::Elements { next, .. } => [
                Segment::Field("tuple_shapes"),
                Segment::Index(next.saturating_sub(1)),
            ],
            Open::Physical(_) => [Segment::Field("layout"), Segment::Field("physical_shape")],
        }
    }
}

/// A value the text cannot carry: where, below the shape or layout being printed, and
/// why. Built only on the failure path; the printer adds the path above it.
struct Refusal {
    at: Vec<Segment>,
    message: String,
}

impl Refusal {
    #[cold]
    fn new(at: &[Segment], message: impl Into<String>) -> Self {
        Self {
            at: at.to_vec(),
            message: message.into(),
        }
    }

    /// The same refusal one field further out (`layout` for a layout's refusal).
    #[cold]
    fn under(mut self, field: &'static str) -> Self {
        self.at.insert(0, Segment::Field(field));
        self
    }
}

pub(crate) struct Printer<'p> {
    mode: Mode,
    with_layout: bool,
    prefix: &'p Path,
}

impl<'p> Printer<'p> {
    pub(crate) fn new(mode: Mode, with_layout: bool, prefix: &'p Path) -> Self {
        Self {
            mode,
            with_layout,
            prefix,
        }
    }

    /// Whether values the text cannot carry back are refused (every mode but XLA's).
    fn exact(&self) -> bool {
        self.mode != Mode::Xla
    }

    pub(crate) fn shape(&self, shape: &ShapeProto, out: &mut String) -> Result<(), PrintError> {
        self.shape_under(shape, &[], out)
    }

    /// Prints `shape`, which sits at `base` below the printer's prefix (for errors).
    fn shape_under(
        &self,
        shape: &ShapeProto,
        base: &[Segment],
        out: &mut String,
    ) -> Result<(), PrintError> {
        // Allocates only for nested shapes.
        let mut open: Vec<Open<'_>> = Vec::new();
        let mut next = Some(shape);
        loop {
            while let Some(shape) = next {
                next = self
                    .begin_shape(shape, &mut open, out)
                    .map_err(|refusal| self.fail(base, &open, refusal))?;
            }
            match open.last_mut() {
                None => return Ok(()),
                Some(Open::Elements { shape, next: i }) => {
                    if let Some(element) = shape.tuple_shapes.get(*i) {
                        if *i > 0 {
                            separator(*i, out);
                        }
                        *i += 1;
                        next = Some(element);
                    } else {
                        out.push(')');
                        open.pop();
                    }
                }
                Some(Open::Physical(layout)) => {
                    self.close_physical(layout, out);
                    open.pop();
                }
            }
        }
    }

    /// The refusal as an error with its whole path: prefix, `base`, the open shapes.
    #[cold]
    fn fail(&self, base: &[Segment], open: &[Open<'_>], refusal: Refusal) -> PrintError {
        let mut segments = self.prefix.segments().to_vec();
        segments.extend_from_slice(base);
        for shape in open {
            segments.extend(shape.segments());
        }
        segments.extend(refusal.at);
        PrintError::new(Path::from(segments), refusal.message)
    }

    /// Prints a shape, or as much of it as comes before its nested shapes: a tuple or
    /// buffer is pushed on `open` (the walk prints its elements), and a physical shape
    /// is pushed and returned, to be printed next.
    fn begin_shape<'a>(
        &self,
        shape: &'a ShapeProto,
        open: &mut Vec<Open<'a>>,
        out: &mut String,
    ) -> Result<Option<&'a ShapeProto>, Refusal> {
        let ty = shape.element_type;
        let exact = self.exact();
        let is_array = types::is_array_type(ty);
        if !is_array {
            if shape.layout.is_some() {
                let name = types::type_name(ty).map_or_else(|| ty.to_string(), str::to_string);
                return Err(Refusal::new(
                    &[Segment::Field("layout")],
                    format!("a shape of element type {name} has no layout in text"),
                ));
            }
            if exact && (!shape.dimensions.is_empty() || !shape.is_dynamic_dimension.is_empty()) {
                return Err(Refusal::new(
                    &[Segment::Field("dimensions")],
                    "only array shapes have dimensions in text",
                ));
            }
        }
        match PrimitiveType::try_from(ty) {
            Ok(PrimitiveType::Tuple) => {
                if self.mode == Mode::Exact {
                    // The last element XLA's parser would reject is the one reported.
                    for (i, element) in shape.tuple_shapes.iter().enumerate().rev() {
                        if let Some(message) = rejected_element(element) {
                            return Err(Refusal::new(
                                &[Segment::Field("tuple_shapes"), Segment::Index(i)],
                                message,
                            ));
                        }
                    }
                }
                out.push('(');
                open.push(Open::Elements { shape, next: 0 });
                return Ok(None);
            }
            Ok(PrimitiveType::Buffer) => {
                if !matches!(shape.tuple_shapes.as_slice(), [inner] if types::is_array_type(inner.element_type))
                {
                    return Err(Refusal::new(
                        &[Segment::Field("tuple_shapes")],
                        "a buffer shape must hold exactly one array shape",
                    ));
                }
                out.push_str("b(");
                open.push(Open::Elements { shape, next: 0 });
                return Ok(None);
            }
            Ok(PrimitiveType::Token | PrimitiveType::OpaqueType) => {
                if exact && !shape.tuple_shapes.is_empty() {
                    return Err(Refusal::new(
                        &[Segment::Field("tuple_shapes")],
                        "only tuples and buffers hold shapes",
                    ));
                }
                out.push_str(types::type_name(ty).unwrap_or_default());
                out.push_str("[]");
                return Ok(None);
            }
            _ => {}
        }
        let Some(name) = types::type_name(ty).filter(|_| is_array) else {
            return Err(Refusal::new(
                &[Segment::Field("element_type")],
                format!("element type {ty} has no text name"),
            ));
        };
        if exact && !shape.tuple_shapes.is_empty() {
            return Err(Refusal::new(
                &[Segment::Field("tuple_shapes")],
                "only tuples and buffers hold shapes",
            ));
        }
        let dynamic = &shape.is_dynamic_dimension;
        if !dynamic.is_empty() && dynamic.len() != shape.dimensions.len() {
            return Err(Refusal::new(
                &[Segment::Field("is_dynamic_dimension")],
                format!(
                    "{} is_dynamic_dimension entries for {} dimensions",
                    dynamic.len(),
                    shape.dimensions.len()
                ),
            ));
        }
        out.push_str(name);
        out.push('[');
        for (i, &size) in shape.dimensions.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let is_dynamic = dynamic.get(i).copied().unwrap_or(false);
            if exact && size < 0 && !(is_dynamic && size == i64::MIN) {
                return Err(Refusal::new(
                    &[Segment::Field("dimensions"), Segment::Index(i)],
                    format!("dimension {size} has no text form"),
                ));
            }
            if is_dynamic && size == i64::MIN {
                out.push('?');
            } else {
                if is_dynamic {
                    out.push_str("<=");
                }
                push_int(out, size);
            }
        }
        out.push(']');
        let Some(layout) = shape.layout.as_deref().filter(|_| self.with_layout) else {
            return Ok(None);
        };
        if self.mode == Mode::Exact {
            // What XLA's parser refuses after reading an array's layout.
            if layout.minor_to_major.len() != shape.dimensions.len()
                && !super::parser::is_legacy_sparse(layout)
            {
                return Err(Refusal::new(
                    &[Segment::Field("layout"), Segment::Field("minor_to_major")],
                    format!(
                        "{} entries for {} dimensions; XLA's parser rejects that, so text cannot carry it",
                        layout.minor_to_major.len(),
                        shape.dimensions.len()
                    ),
                ));
            }
            if layout.physical_shape.is_some() {
                return Err(Refusal::new(
                    &[Segment::Field("layout"), Segment::Field("physical_shape")],
                    "XLA's parser rejects a physical shape on an array, so text cannot carry it",
                ));
            }
        }
        let start = out.len();
        let physical = self
            .layout_head(layout, out)
            .map_err(|refusal| refusal.under("layout"))?;
        if physical.is_some() {
            open.push(Open::Physical(layout));
        } else if shape.dimensions.is_empty() && &out[start..] == "{}" {
            // A scalar's empty layout is not printed: `f32[]`, but `f32[]{:T(256)}`.
            out.truncate(start);
        }
        Ok(physical)
    }

    /// Writes a layout up to its physical shape: `{`, minor_to_major, and after `:` the
    /// attributes that come before `P(`. With a physical shape, ends with `P(` and
    /// returns it, for the caller to print before [`Printer::close_physical`]; without
    /// one, writes the whole layout.
    fn layout_head<'a>(
        &self,
        layout: &'a LayoutProto,
        out: &mut String,
    ) -> Result<Option<&'a ShapeProto>, Refusal> {
        out.push('{');
        for (i, &dim) in layout.minor_to_major.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_int(out, dim);
        }
        // The `:` is taken back below if no attribute follows it.
        out.push(':');
        let attributes_start = out.len();
        for (i, tile) in layout.tiles.iter().enumerate() {
            if i == 0 {
                out.push('T');
            }
            out.push('(');
            for (j, &dim) in tile.dimensions.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                if dim == i64::MIN {
                    out.push('*');
                } else if dim < 0 {
                    return Err(Refusal::new(
                        &[
                            Segment::Field("tiles"),
                            Segment::Index(i),
                            Segment::Field("dimensions"),
                            Segment::Index(j),
                        ],
                        format!("tile dimension {dim} has no text form"),
                    ));
                } else {
                    push_int(out, dim);
                }
            }
            out.push(')');
        }
        let tail_padding = layout.tail_padding_alignment_in_elements;
        if tail_padding < 0 {
            return Err(Refusal::new(
                &[Segment::Field("tail_padding_alignment_in_elements")],
                format!("tail padding {tail_padding} has no text form"),
            ));
        }
        if tail_padding > 1 {
            push_call(out, "L(", tail_padding);
        }
        for (open, field, ty) in [
            ("#(", "index_primitive_type", layout.index_primitive_type),
            (
                "*(",
                "pointer_primitive_type",
                layout.pointer_primitive_type,
            ),
        ] {
            if ty == 0 {
                continue;
            }
            let name = match self.mode {
                Mode::Xla if !types::is_integral(ty) => Some("invalid"),
                _ => types::type_name(ty).filter(|_| {
                    ty != PrimitiveType::Tuple as i32 && ty != PrimitiveType::Buffer as i32
                }),
            };
            let Some(name) = name else {
                return Err(Refusal::new(
                    &[Segment::Field(field)],
                    format!("element type {ty} has no text name"),
                ));
            };
            out.push_str(open);
            out.push_str(name);
            out.push(')');
        }
        if layout.element_size_in_bits != 0 {
            push_call(out, "E(", layout.element_size_in_bits);
        }
        let memory_space = match self.mode {
            Mode::Xla => i64::from(layout.memory_space as i8),
            Mode::Display => layout.memory_space,
            Mode::Exact => {
                if i8::try_from(layout.memory_space).is_err() {
                    return Err(Refusal::new(
                        &[Segment::Field("memory_space")],
                        format!(
                            "memory space {} does not fit XLA's 8 bits; text would read back as {}",
                            layout.memory_space, layout.memory_space as i8
                        ),
                    ));
                }
                layout.memory_space
            }
        };
        if memory_space != 0 {
            push_call(out, "S(", memory_space);
        }
        for (i, split) in layout.split_configs.iter().enumerate() {
            if i == 0 {
                out.push_str("SC");
            }
            out.push('(');
            push_int(out, split.dimension);
            out.push(':');
            push_list(out, &split.split_indices);
            out.push(')');
        }
        if let Some(physical) = layout.physical_shape.as_deref() {
            out.push_str("P(");
            return Ok(Some(physical));
        }
        self.late_attributes(layout, out);
        if out.len() == attributes_start {
            out.pop();
        }
        out.push('}');
        Ok(None)
    }

    /// The rest of a layout after its physical shape: `)`, the late attributes, `}`.
    fn close_physical(&self, layout: &LayoutProto, out: &mut String) {
        out.push(')');
        self.late_attributes(layout, out);
        out.push('}');
    }

    /// The attributes after `P(...)`: `M(n)`, then in the exact modes our extension for
    /// the retired fields.
    fn late_attributes(&self, layout: &LayoutProto, out: &mut String) {
        let exact = self.exact();
        let prefix_bytes = layout.dynamic_shape_metadata_prefix_bytes;
        if prefix_bytes > 0 || (exact && prefix_bytes != 0) {
            push_call(out, "M(", prefix_bytes);
        }
        if exact {
            legacy_attributes(layout, out);
        }
    }

    pub(crate) fn layout(&self, layout: &LayoutProto, out: &mut String) -> Result<(), PrintError> {
        let physical = self
            .layout_head(layout, out)
            .map_err(|refusal| self.fail(&[], &[], refusal))?;
        if let Some(physical) = physical {
            let printer = Printer {
                with_layout: true,
                ..*self
            };
            printer.shape_under(physical, &[Segment::Field("physical_shape")], out)?;
            self.close_physical(layout, out);
        }
        Ok(())
    }

    pub(crate) fn program_shape(
        &self,
        program: &ProgramShapeProto,
        out: &mut String,
    ) -> Result<(), PrintError> {
        let names = &program.parameter_names;
        let named = names.iter().any(|name| !name.is_empty());
        self.check_names(named, names.len(), program.parameters.len())?;
        out.push('(');
        for (i, parameter) in program.parameters.iter().enumerate() {
            let name = names.get(i).map(String::as_str).unwrap_or_default();
            self.parameter(i, named.then_some(name), parameter, out)?;
        }
        self.program_result(program.result.as_ref(), out)
    }

    /// A program shape's names must be one per parameter when any is not empty.
    pub(crate) fn check_names(
        &self,
        named: bool,
        names: usize,
        parameters: usize,
    ) -> Result<(), PrintError> {
        if named && names != parameters {
            return Err(PrintError::new(
                self.prefix.field("parameter_names"),
                format!("{names} parameter names for {parameters} parameters"),
            ));
        }
        Ok(())
    }

    /// Parameter `i` of a program shape, with `name` when the parameters are named,
    /// after the `(` or the separator before it.
    pub(crate) fn parameter(
        &self,
        i: usize,
        name: Option<&str>,
        parameter: &ShapeProto,
        out: &mut String,
    ) -> Result<(), PrintError> {
        self.parameter_with(i, name, out, &mut |out| {
            let at = [Segment::Field("parameters"), Segment::Index(i)];
            self.shape_under(parameter, &at, out)
        })
    }

    /// [`Self::parameter`] with the shape printed by `shape`.
    pub(crate) fn parameter_with(
        &self,
        i: usize,
        name: Option<&str>,
        out: &mut String,
        shape: &mut dyn FnMut(&mut String) -> Result<(), PrintError>,
    ) -> Result<(), PrintError> {
        if i > 0 {
            separator(i, out);
        }
        if let Some(name) = name {
            if name.is_empty() {
                out.push_str("(unknown)");
            } else if !is_plain_name(name) {
                return Err(PrintError::new(
                    self.prefix.field("parameter_names").index(i),
                    format!("parameter name {name:?} is not an HLO identifier"),
                ));
            } else {
                out.push_str(name);
            }
            out.push_str(": ");
        }
        shape(out)
    }

    /// The end of a program shape: `)->` and the result.
    pub(crate) fn program_result(
        &self,
        result: Option<&ShapeProto>,
        out: &mut String,
    ) -> Result<(), PrintError> {
        out.push_str(")->");
        match result {
            Some(result) => self.shape_under(result, &[Segment::Field("result")], out)?,
            None if self.mode != Mode::Xla => {
                return Err(PrintError::new(
                    self.prefix.field("result"),
                    "a program shape without a result has no text form",
                ))
            }
            // XLA's ProgramShape::FromProto makes a missing result an empty tuple.
            None => out.push_str("()"),
        }
        Ok(())
    }
}

/// Why the lossless text refuses `element` as a tuple element: XLA's parser would
/// reject it ([`super::parser::tuple_element_problem`]), so the text could not be read
/// back. `None` for an element it accepts.
pub(crate) fn rejected_element(element: &ShapeProto) -> Option<String> {
    super::parser::tuple_element_problem(element)
        .map(|problem| format!("{problem}; XLA's parser rejects it, so text cannot carry it"))
}

/// `, ` between tuple elements, with `/*index=i*/` before every fifth.
pub(crate) fn separator(i: usize, out: &mut String) {
    out.push_str(", ");
    if i % 5 == 0 {
        out.push_str("/*index=");
        push_int(out, i64::try_from(i).unwrap_or(i64::MAX));
        out.push_str("*/");
    }
}

/// `open`, the value, `)`: `S(1)`.
fn push_call(out: &mut String, open: &str, value: i64) {
    out.push_str(open);
    push_int(out, value);
    out.push(')');
}

/// Comma-separated integers.
fn push_list(out: &mut String, values: &[i64]) {
    for (i, &value) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_int(out, value);
    }
}

/// Whether a parameter name can be written bare: an HLO identifier.
fn is_plain_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes
        .first()
        .is_some_and(|&b| super::cursor::is_ident_start(b))
        && bytes.iter().all(|&b| super::cursor::is_ident_byte(b))
}

const LEVEL_TYPES: [&str; 4] = ["D", "C", "S", "H"];
const PADDING_VALUES: [&str; 6] = ["invalid", "zero", "one", "lowest", "highest", "unknown"];
const FORMATS: [&str; 3] = ["invalid", "dense", "sparse"];

/// An enum value by its name in `names` (indexed by number), else as a number.
fn push_enum(out: &mut String, names: &[&str], value: i32) {
    match usize::try_from(value).ok().and_then(|i| names.get(i)) {
        Some(name) => out.push_str(name),
        None => push_int(out, i64::from(value)),
    }
}

/// `name(`, the items separated by commas, `)`.
fn push_group<T: Copy>(
    out: &mut String,
    name: &str,
    items: &[T],
    mut each: impl FnMut(&mut String, T),
) {
    out.push_str(name);
    out.push('(');
    for (i, &item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        each(out, item);
    }
    out.push(')');
}

/// Our extension for the retired fields: `PD(...)PV(...)F(...)MS(n)DL(...)DU(...)DO(...)`.
fn legacy_attributes(layout: &LayoutProto, out: &mut String) {
    if !layout.padded_dimensions.is_empty() {
        push_group(out, "PD", &layout.padded_dimensions, push_int);
    }
    if layout.padding_value != 0 {
        push_group(out, "PV", &[layout.padding_value], |out, value| {
            push_enum(out, &PADDING_VALUES, value)
        });
    }
    if layout.format != 0 {
        push_group(out, "F", &[layout.format], |out, value| {
            push_enum(out, &FORMATS, value)
        });
    }
    if layout.max_sparse_elements != 0 {
        push_call(out, "MS(", layout.max_sparse_elements);
    }
    if !layout.dim_level_types.is_empty() {
        push_group(out, "DL", &layout.dim_level_types, |out, value| {
            push_enum(out, &LEVEL_TYPES, value)
        });
    }
    for (name, values) in [("DU", &layout.dim_unique), ("DO", &layout.dim_ordered)] {
        if !values.is_empty() {
            push_group(out, name, values, |out, value| {
                out.push(if value { '1' } else { '0' })
            });
        }
    }
}
