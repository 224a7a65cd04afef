//! The HLO text printer over the raw protos, iterative so any depth is safe.
//!
//! Two modes:
//! - [`Mode::Exact`] prints every value the proto holds, including our legacy extension,
//!   and refuses ([`PrintError`]) a value the text cannot carry back to the same proto.
//! - [`Mode::Xla`] prints what XLA prints for the proto: it reads the proto as HEAD's
//!   `Shape::FromProto` does (memory space narrowed to 8 bits, retired fields and dim
//!   level types ignored, `#(invalid)` for a non-integral index type, `M(n)` only for
//!   n > 0) and fails only where XLA's `FromProto` fails.

use crate::digits::push_int;
use std::fmt::Write as _;

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

enum Job<'a> {
    Shape(&'a ShapeProto, usize),
    Text(&'static str),
    Owned(String),
}

/// Paths of the shapes being printed, as a parent-linked arena (cheap at any depth).
struct Paths {
    nodes: Vec<(usize, Segment)>,
}

const ROOT: usize = usize::MAX;

impl Paths {
    fn child(&mut self, parent: usize, segment: Segment) -> usize {
        self.nodes.push((parent, segment));
        self.nodes.len() - 1
    }

    fn child2(&mut self, parent: usize, field: &'static str, index: usize) -> usize {
        let field = self.child(parent, Segment::Field(field));
        self.child(field, Segment::Index(index))
    }

    fn path(&self, mut node: usize, prefix: &Path) -> Path {
        let mut segments = Vec::new();
        while let Some((parent, segment)) = self.nodes.get(node) {
            segments.push(segment.clone());
            node = *parent;
        }
        segments.reverse();
        Path::from(segments).prefixed(prefix)
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

    pub(crate) fn shape(&self, shape: &ShapeProto, out: &mut String) -> Result<(), PrintError> {
        let mut paths = Paths { nodes: Vec::new() };
        let mut jobs = vec![Job::Shape(shape, ROOT)];
        while let Some(job) = jobs.pop() {
            match job {
                Job::Text(text) => out.push_str(text),
                Job::Owned(text) => out.push_str(&text),
                Job::Shape(shape, node) => {
                    self.one_shape(shape, node, &mut paths, &mut jobs, out)?
                }
            }
        }
        Ok(())
    }

    fn fail(&self, paths: &Paths, node: usize, message: impl Into<String>) -> PrintError {
        PrintError::new(paths.path(node, self.prefix), message)
    }

    fn one_shape<'a>(
        &self,
        shape: &'a ShapeProto,
        node: usize,
        paths: &mut Paths,
        jobs: &mut Vec<Job<'a>>,
        out: &mut String,
    ) -> Result<(), PrintError> {
        let ty = shape.element_type;
        let exact = self.mode != Mode::Xla;
        let is_array = types::is_array_type(ty);
        if !is_array {
            if shape.layout.is_some() {
                let at = paths.child(node, Segment::Field("layout"));
                let name = types::type_name(ty).map_or_else(|| ty.to_string(), str::to_string);
                return Err(self.fail(
                    paths,
                    at,
                    format!("a shape of element type {name} has no layout in text"),
                ));
            }
            if exact && (!shape.dimensions.is_empty() || !shape.is_dynamic_dimension.is_empty()) {
                let at = paths.child(node, Segment::Field("dimensions"));
                return Err(self.fail(paths, at, "only array shapes have dimensions in text"));
            }
        }
        match PrimitiveType::try_from(ty) {
            Ok(PrimitiveType::Tuple) => {
                out.push('(');
                jobs.push(Job::Text(")"));
                for (i, element) in shape.tuple_shapes.iter().enumerate().rev() {
                    let at = paths.child2(node, "tuple_shapes", i);
                    if self.mode == Mode::Exact {
                        if let Some(problem) = super::parser::tuple_element_problem(element) {
                            return Err(self.fail(
                                paths,
                                at,
                                format!(
                                    "{problem}; XLA's parser rejects it, so text cannot carry it"
                                ),
                            ));
                        }
                    }
                    jobs.push(Job::Shape(element, at));
                    if i > 0 {
                        jobs.push(separator(i));
                    }
                }
                return Ok(());
            }
            Ok(PrimitiveType::Buffer) => {
                let inner = match shape.tuple_shapes.as_slice() {
                    [inner] if types::is_array_type(inner.element_type) => inner,
                    _ => {
                        let at = paths.child(node, Segment::Field("tuple_shapes"));
                        return Err(self.fail(
                            paths,
                            at,
                            "a buffer shape must hold exactly one array shape",
                        ));
                    }
                };
                out.push_str("b(");
                jobs.push(Job::Text(")"));
                let at = paths.child2(node, "tuple_shapes", 0);
                jobs.push(Job::Shape(inner, at));
                return Ok(());
            }
            Ok(PrimitiveType::Token | PrimitiveType::OpaqueType) => {
                if exact && !shape.tuple_shapes.is_empty() {
                    let at = paths.child(node, Segment::Field("tuple_shapes"));
                    return Err(self.fail(paths, at, "only tuples and buffers hold shapes"));
                }
                out.push_str(types::type_name(ty).unwrap_or_default());
                out.push_str("[]");
                return Ok(());
            }
            _ => {}
        }
        let Some(name) = types::type_name(ty).filter(|_| is_array) else {
            let at = paths.child(node, Segment::Field("element_type"));
            return Err(self.fail(paths, at, format!("element type {ty} has no text name")));
        };
        if exact && !shape.tuple_shapes.is_empty() {
            let at = paths.child(node, Segment::Field("tuple_shapes"));
            return Err(self.fail(paths, at, "only tuples and buffers hold shapes"));
        }
        let dynamic = &shape.is_dynamic_dimension;
        if !dynamic.is_empty() && dynamic.len() != shape.dimensions.len() {
            let at = paths.child(node, Segment::Field("is_dynamic_dimension"));
            return Err(self.fail(
                paths,
                at,
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
                let dims = paths.child(node, Segment::Field("dimensions"));
                let at = paths.child(dims, Segment::Index(i));
                return Err(self.fail(paths, at, format!("dimension {size} has no text form")));
            }
            if is_dynamic && size == i64::MIN {
                out.push('?');
            } else if is_dynamic {
                out.push_str("<=");
                push_int(out, size);
            } else {
                push_int(out, size);
            }
        }
        out.push(']');
        if let (true, Some(layout)) = (self.with_layout, shape.layout.as_deref()) {
            let at = paths.child(node, Segment::Field("layout"));
            if self.mode == Mode::Exact {
                // What XLA's parser refuses after reading an array's layout.
                if layout.minor_to_major.len() != shape.dimensions.len()
                    && !super::parser::is_legacy_sparse(layout)
                {
                    let at = paths.child(at, Segment::Field("minor_to_major"));
                    return Err(self.fail(
                        paths,
                        at,
                        format!(
                            "{} entries for {} dimensions; XLA's parser rejects that, so text cannot carry it",
                            layout.minor_to_major.len(),
                            shape.dimensions.len()
                        ),
                    ));
                }
                if layout.physical_shape.is_some() {
                    let at = paths.child(at, Segment::Field("physical_shape"));
                    return Err(self.fail(
                        paths,
                        at,
                        "XLA's parser rejects a physical shape on an array, so text cannot carry it",
                    ));
                }
            }
            let text = self.layout_parts(layout, at, paths)?;
            // A scalar's empty layout is not printed: `f32[]`, but `f32[]{:T(256)}`.
            if !(shape.dimensions.is_empty() && text.head == "{}") {
                out.push_str(&text.head);
                if let Some(physical) = layout.physical_shape.as_deref() {
                    jobs.push(Job::Owned(text.tail));
                    let at = paths.child(at, Segment::Field("physical_shape"));
                    jobs.push(Job::Shape(physical, at));
                }
            }
        }
        Ok(())
    }

    /// A layout whose physical shape is printed by the caller: `head` ends with `P(` if
    /// there is one, and `tail` is what follows the physical shape.
    fn layout_parts(
        &self,
        layout: &LayoutProto,
        node: usize,
        paths: &mut Paths,
    ) -> Result<LayoutText, PrintError> {
        let exact = self.mode != Mode::Xla;
        let mut head = String::from("{");
        for (i, dim) in layout.minor_to_major.iter().enumerate() {
            if i > 0 {
                head.push(',');
            }
            push_int(&mut head, *dim);
        }
        let mut attrs = String::new();
        for (i, tile) in layout.tiles.iter().enumerate() {
            if i == 0 {
                attrs.push('T');
            }
            attrs.push('(');
            for (j, &dim) in tile.dimensions.iter().enumerate() {
                if j > 0 {
                    attrs.push(',');
                }
                if dim == i64::MIN {
                    attrs.push('*');
                } else if dim < 0 {
                    let tiles = paths.child2(node, "tiles", i);
                    let dims = paths.child(tiles, Segment::Field("dimensions"));
                    let at = paths.child(dims, Segment::Index(j));
                    return Err(self.fail(
                        paths,
                        at,
                        format!("tile dimension {dim} has no text form"),
                    ));
                } else {
                    push_int(&mut attrs, dim);
                }
            }
            attrs.push(')');
        }
        let tail_padding = layout.tail_padding_alignment_in_elements;
        if tail_padding < 0 {
            let at = paths.child(node, Segment::Field("tail_padding_alignment_in_elements"));
            return Err(self.fail(
                paths,
                at,
                format!("tail padding {tail_padding} has no text form"),
            ));
        }
        if tail_padding > 1 {
            let _ = write!(attrs, "L({tail_padding})");
        }
        for (letter, field, ty) in [
            ('#', "index_primitive_type", layout.index_primitive_type),
            ('*', "pointer_primitive_type", layout.pointer_primitive_type),
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
                let at = paths.child(node, Segment::Field(field));
                return Err(self.fail(paths, at, format!("element type {ty} has no text name")));
            };
            let _ = write!(attrs, "{letter}({name})");
        }
        if layout.element_size_in_bits != 0 {
            let _ = write!(attrs, "E({})", layout.element_size_in_bits);
        }
        let memory_space = match self.mode {
            Mode::Xla => i64::from(layout.memory_space as i8),
            Mode::Display => layout.memory_space,
            Mode::Exact => {
                if i8::try_from(layout.memory_space).is_err() {
                    let at = paths.child(node, Segment::Field("memory_space"));
                    return Err(self.fail(
                        paths,
                        at,
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
            let _ = write!(attrs, "S({memory_space})");
        }
        for (i, split) in layout.split_configs.iter().enumerate() {
            if i == 0 {
                attrs.push_str("SC");
            }
            let _ = write!(attrs, "({}:", split.dimension);
            for (j, index) in split.split_indices.iter().enumerate() {
                if j > 0 {
                    attrs.push(',');
                }
                push_int(&mut attrs, *index);
            }
            attrs.push(')');
        }
        let mut tail = String::new();
        let prefix_bytes = layout.dynamic_shape_metadata_prefix_bytes;
        if prefix_bytes > 0 || (exact && prefix_bytes != 0) {
            let _ = write!(tail, "M({prefix_bytes})");
        }
        if exact {
            legacy_attributes(layout, &mut tail);
        }
        let physical = layout.physical_shape.is_some();
        if !attrs.is_empty() || !tail.is_empty() || physical {
            head.push(':');
            head.push_str(&attrs);
        }
        if physical {
            head.push_str("P(");
            tail.insert(0, ')');
        }
        tail.push('}');
        if !physical {
            head.push_str(&tail);
            tail.clear();
        }
        Ok(LayoutText { head, tail })
    }

    pub(crate) fn layout(&self, layout: &LayoutProto, out: &mut String) -> Result<(), PrintError> {
        let mut paths = Paths { nodes: Vec::new() };
        let parts = self.layout_parts(layout, ROOT, &mut paths)?;
        out.push_str(&parts.head);
        if let Some(physical) = layout.physical_shape.as_deref() {
            let prefix = self.prefix.field("physical_shape");
            Printer::new(self.mode, true, &prefix).shape(physical, out)?;
            out.push_str(&parts.tail);
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
        if named && names.len() != program.parameters.len() {
            return Err(PrintError::new(
                self.prefix.field("parameter_names"),
                format!(
                    "{} parameter names for {} parameters",
                    names.len(),
                    program.parameters.len()
                ),
            ));
        }
        out.push('(');
        for (i, parameter) in program.parameters.iter().enumerate() {
            if i > 0 {
                match separator(i) {
                    Job::Owned(text) => out.push_str(&text),
                    Job::Text(text) => out.push_str(text),
                    Job::Shape(..) => {}
                }
            }
            if named {
                let name = names.get(i).map(String::as_str).unwrap_or_default();
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
            let prefix = self.prefix.field("parameters").index(i);
            Printer::new(self.mode, self.with_layout, &prefix).shape(parameter, out)?;
        }
        out.push_str(")->");
        match &program.result {
            Some(result) => {
                let prefix = self.prefix.field("result");
                Printer::new(self.mode, self.with_layout, &prefix).shape(result, out)?;
            }
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

struct LayoutText {
    head: String,
    tail: String,
}

/// `, ` between tuple elements, with `/*index=i*/` before every fifth.
fn separator<'a>(i: usize) -> Job<'a> {
    if i % 5 == 0 {
        Job::Owned(format!(", /*index={i}*/"))
    } else {
        Job::Text(", ")
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

fn enum_text(names: &[&str], value: i32) -> String {
    usize::try_from(value)
        .ok()
        .and_then(|i| names.get(i))
        .map_or_else(|| value.to_string(), |name| (*name).to_string())
}

fn join<T>(out: &mut String, items: &[T], mut each: impl FnMut(&T) -> String) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&each(item));
    }
}

/// Our extension for the retired fields: `PD(...)PV(...)F(...)MS(n)DL(...)DU(...)DO(...)`.
fn legacy_attributes(layout: &LayoutProto, out: &mut String) {
    if !layout.padded_dimensions.is_empty() {
        out.push_str("PD(");
        join(out, &layout.padded_dimensions, i64::to_string);
        out.push(')');
    }
    if layout.padding_value != 0 {
        let _ = write!(
            out,
            "PV({})",
            enum_text(&PADDING_VALUES, layout.padding_value)
        );
    }
    if layout.format != 0 {
        let _ = write!(out, "F({})", enum_text(&FORMATS, layout.format));
    }
    if layout.max_sparse_elements != 0 {
        let _ = write!(out, "MS({})", layout.max_sparse_elements);
    }
    if !layout.dim_level_types.is_empty() {
        out.push_str("DL(");
        join(out, &layout.dim_level_types, |&v| {
            enum_text(&LEVEL_TYPES, v)
        });
        out.push(')');
    }
    for (name, values) in [("DU", &layout.dim_unique), ("DO", &layout.dim_ordered)] {
        if !values.is_empty() {
            out.push_str(name);
            out.push('(');
            join(out, values, |&v| if v { "1" } else { "0" }.to_string());
            out.push(')');
        }
    }
}
