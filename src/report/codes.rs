//! Every code a report can carry, with its severity and meaning.
//!
//! A code names one kind of problem and never changes once released; `docs/report.md`
//! lists the same codes (a test keeps the two in step). Codes of the validation gate
//! are [`IssueKind::code`](crate::IssueKind::code); the others come from reading
//! inputs (module text and module protos), from deciding their form, and from a
//! layout policy (`policy.<rule>`).

use crate::error::Severity;

/// A code, its usual severity and its meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeInfo {
    /// The code itself, e.g. `duplicate_dimension`.
    pub id: &'static str,
    /// The severity findings with this code have. Unreadable-input codes are errors.
    pub severity: Severity,
    /// What it means, one sentence.
    pub description: &'static str,
}

const fn code(id: &'static str, severity: Severity, description: &'static str) -> CodeInfo {
    CodeInfo {
        id,
        severity,
        description,
    }
}

use Severity::{Error, Warning};

/// Every code, grouped: the validation gate's, then module reading, then unreadable
/// inputs, then policy rules, then semantic diff.
pub const CODES: &[CodeInfo] = &[
    // ----- the validation gate (IssueKind::code) -----
    code("invalid_element_type", Error, "`element_type` is `PRIMITIVE_TYPE_INVALID` (0, also what an absent field reads as)."),
    code("unknown_element_type", Error, "`element_type` is a number this schema does not know."),
    code("negative_dimension", Error, "A dimension size below zero that is not the unbounded marker."),
    code("dynamic_flags_count", Error, "`is_dynamic_dimension` is neither empty nor one flag per dimension."),
    code("element_count_overflow", Error, "The number of elements does not fit in int64."),
    code("byte_size_overflow", Error, "The size in bytes (or bits, with `element_size_in_bits`) does not fit in int64."),
    code("layout_on_non_array", Error, "A layout on a tuple, token or opaque shape."),
    code("buffer_shape_count", Error, "A buffer shape whose `tuple_shapes` does not hold exactly one shape."),
    code("buffer_of_non_array", Error, "A buffer shape wrapping something other than an array."),
    code("not_an_array", Error, "A valid shape that is not an array where an array is required."),
    code("too_deep", Error, "Shapes nested deeper than the gate follows."),
    code("minor_to_major_length", Error, "`minor_to_major` does not have one entry per dimension."),
    code("dimension_out_of_range", Error, "A `minor_to_major` entry that is not a dimension number of the shape."),
    code("duplicate_dimension", Error, "A dimension listed twice in `minor_to_major`."),
    code("negative_tail_padding", Error, "`tail_padding_alignment_in_elements` below zero."),
    code("sparse_only_field", Error, "A sparse-array field (index/pointer type, physical shape) on a layout; XLA has no sparse arrays any more, so every array is dense and these fields are rejected."),
    code("empty_tile", Error, "A tile with no dimensions."),
    code("zero_tile_dimension", Error, "A tile dimension of 0."),
    code("negative_tile_dimension", Error, "A negative tile dimension other than INT64_MIN (the combine marker `*`)."),
    code("combine_tile_in_proto", Error, "The combine marker INT64_MIN (`*`) in a tile read from a proto: XLA's `Layout::FromProto` rejects every negative tile dimension (since 2025-04), though its HLO text parser accepts `*`."),
    code("negative_element_size", Error, "`element_size_in_bits` below zero."),
    code("allocated_size_overflow", Error, "The tiled (or legacy padded) allocation does not fit in int64."),
    code("padded_dimensions_length", Error, "`padded_dimensions` does not have one entry per dimension."),
    code("padded_below_size", Error, "A padded size smaller than the dimension it pads."),
    code("negative_padded_size", Error, "A negative padded size (checked on a lone layout)."),
    code("padded_unbounded", Error, "Padding an unbounded dynamic dimension."),
    code("padding_with_tiles", Error, "Legacy padding together with tiles: no XLA ever had both, so the meaning is undefined."),
    code("unknown_padding_value", Error, "`padding_value` not a value of the retired `PaddingValue` enum."),
    code("unknown_format", Error, "`format` not a value of the retired `Format` enum."),
    code("sparse_format", Error, "`format: SPARSE`: sparse layouts were removed from XLA in 2020."),
    code("max_sparse_elements", Error, "`max_sparse_elements` set: retired with sparse layouts in 2020."),
    code("parameter_names_count", Error, "`parameter_names` does not have one name per parameter."),
    code("missing_result", Error, "A program shape without a result."),
    code("wrong_wire_type", Error, "A known field that arrived with a wire type its declared type cannot have."),
    code("wrong_wire_types_not_listed", Error, "More fields with a wrong wire type than a report lists one by one (1,000 a message): the rest, counted."),
    code("ignored_dimensions", Warning, "`dimensions` or `is_dynamic_dimension` on a non-array shape: XLA ignores them."),
    code("ignored_tuple_shapes", Warning, "`tuple_shapes` on an array, token or opaque shape: XLA ignores them."),
    code("buffer_layout_replaced", Warning, "A layout on a buffer shape and on its array: XLA uses the buffer's."),
    code("unbounded_not_dynamic", Warning, "The unbounded marker (INT64_MIN) on a dimension not flagged dynamic; read as unbounded, as XLA's validation does."),
    code("ignored_sparse_field", Warning, "The sparse per-dimension fields that today's XLA ignores."),
    code("memory_space_range", Warning, "`memory_space` outside the int8 range XLA stores it in."),
    code("negative_metadata_prefix", Warning, "A negative `dynamic_shape_metadata_prefix_bytes`."),
    code("element_size_below_width", Warning, "`element_size_in_bits` below the type's own bit width: values would be truncated."),
    code("split_dimension_out_of_range", Error, "A split config whose physical dimension is not one of the shape's."),
    code("duplicate_split_dimension", Error, "Two split configs for the same physical dimension."),
    code("empty_split", Warning, "A split config without split indices (XLA accepts it and prints `SC(d:)`)."),
    code("split_index_not_increasing", Error, "A split index not greater than the one before it (or than 0, for the first)."),
    code("split_index_out_of_bounds", Error, "A split index at or beyond the end of the dimension it splits."),
    code("split_of_unbounded_dimension", Error, "A split index on an unbounded dimension, which has no size to split at (XLA compares the index with the unbounded marker and rejects it)."),
    code("padding_value_without_padding", Warning, "`padding_value` without `padded_dimensions`."),
    code("unknown_field", Warning, "A field this schema does not know (from a newer XLA, or another message)."),
    code("unknown_fields_not_listed", Warning, "More unknown fields than a report lists one by one (1,000 a message): the rest, counted."),
    // ----- reading module text and module protos -----
    code("hlo_syntax", Error, "Text where XLA's HLO parser expects a shape or a layout does not parse as one (the message is the parser's, e.g. \"expects layout to end with '}'\")."),
    code("not_a_shape", Error, "Something that is not a shape stands where XLA's HLO parser expects one (a name, a number, a stray token)."),
    code("unknown_type_word", Error, "A word before '[' that is not an element type (`flaot32`, `F32`, `g32`): XLA's parser rejects it (\"expects opcode\", \"expected primitive type\")."),
    code("module_syntax", Error, "Text that cannot be part of an HLO module: a line inside a computation that is not an instruction, a missing '=' or '(', unbalanced brackets, a stray token."),
    code("not_utf8", Error, "A line of module text that is not UTF-8."),
    code("undecodable_shape", Error, "A shape inside a module proto whose bytes do not decode as a ShapeProto."),
    code("text_only_layout", Warning, "A layout XLA's HLO text parser accepts but its proto loader (`Layout::FromProto`) rejects, such as an index type `#(u32)` on a dense array: the module parses, its proto does not load."),
    code("wrong_message", Warning, "The input decodes as the message given with --message, but looks like another one (the message names the --message to give)."),
    // ----- inputs that cannot be checked at all (exit status 2) -----
    code("io_error", Error, "The input cannot be read (no such file, permission denied, ...)."),
    code("empty_input", Error, "The input is empty: there is nothing to check."),
    code("unknown_form", Error, "--from auto cannot tell what the input is; the message says which --from to give."),
    code("wrong_form", Error, "The input is clearly not in the form --from names (module text given as binary, a module proto given as one message, ...); the message names the right option."),
    code("decode_error", Error, "The bytes (binary) or the text (JSON, one shape per line) cannot be read as the message."),
    code("not_a_module", Error, "The input is not an HLO module: no module header, computation or instruction in text; not an HloModuleProto, HloProto or HloSnapshot in binary."),
    code("no_shapes", Error, "The input holds no shape at all, so nothing would be checked."),
    // ----- layout policy (validate --policy) -----
    code("policy.entry_layout", Error, "An entry parameter or result is not in the layout the policy requires (`[entry] layout`)."),
    code("policy.deny_element_types", Error, "An array has an element type the policy denies (`deny_element_types`)."),
    code("policy.allow_element_types", Error, "An array has an element type the policy does not allow (`allow_element_types`)."),
    code("policy.max_array_bytes", Error, "An array's allocated size (tiling and padding included) is above the policy's `max_array_bytes`."),
    code("policy.memory_spaces", Error, "An array is in a memory space `S(n)` the policy does not allow (`memory_spaces`)."),
    code("policy.require_tiling", Error, "An array of an element type the policy requires tiles for has no tiles (`require_tiling`)."),
    code("policy.max_total_bytes", Error, "The entry parameters together allocate more bytes than the policy's `max_total_bytes`."),
    code("policy.dynamic_dimensions", Error, "An array has dynamic dimensions where the policy forbids them (`dynamic_dimensions = false`)."),
    // ----- semantic diff (diff --format github|sarif) -----
    code("diff.changed", Warning, "A shape that is in both inputs differs (element type, dimensions, layout, ...); the message says what, with both texts and allocated sizes."),
    code("diff.added", Warning, "Something only in the new input: a file, computation, instruction, parameter or shape."),
    code("diff.removed", Warning, "Something only in the old input: a file, computation, instruction, parameter or shape."),
];

/// The entry for `id`, if it is a code.
pub fn lookup(id: &str) -> Option<&'static CodeInfo> {
    CODES.iter().find(|info| info.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for info in CODES {
            assert!(seen.insert(info.id), "{} listed twice", info.id);
            assert!(
                info.id.bytes().all(|b| b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || b == b'_'
                    || b == b'.'),
                "{}",
                info.id
            );
            assert!(info.description.ends_with('.'), "{}", info.id);
        }
    }

    /// Every code the validation gate can give is listed, with its severity: the
    /// codes are read from `IssueKind::code` and `IssueKind::severity` in the source.
    #[test]
    fn every_issue_kind_code_is_listed() {
        let source = include_str!("../error.rs");
        let code_fn = &source[source.find("pub fn code(&self)").unwrap()..];
        let code_fn = &code_fn[..code_fn.find("\n    }\n").unwrap()];
        let mut count = 0;
        for piece in code_fn.split("=> \"").skip(1) {
            let id = &piece[..piece.find('"').unwrap()];
            assert!(lookup(id).is_some(), "{id} is not in CODES");
            count += 1;
        }
        assert!(count >= 50, "only {count} codes found in IssueKind::code");
    }
}

#[cfg(test)]
mod docs_tests {
    use super::CODES;

    /// docs/report.md lists exactly the codes of [`CODES`], each with its severity.
    #[test]
    fn docs_page_lists_every_code() {
        let page = include_str!("../../docs/report.md");
        let listed: Vec<&str> = page
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .collect();
        let codes: Vec<&str> = CODES.iter().map(|c| c.id).collect();
        assert_eq!(listed, codes);
        for info in CODES {
            let row = format!("| `{}` | {} |", info.id, info.severity);
            assert!(page.contains(&row), "{row}");
        }
    }
}
