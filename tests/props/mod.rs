//! The properties the fuzz targets check, one function per target, shared by the
//! fuzz project (`fuzz/fuzz_targets/*.rs` include this file) and by
//! `tests/fuzz_replay.rs`, which replays every committed corpus and crash input
//! through them without a fuzzer. Each function takes arbitrary bytes and panics
//! when a property fails; anything else (an error for bad input) is fine.
#![allow(dead_code)]

use std::io::Cursor;

use prost::Message;
use xla_shape::codec::{self, decode_any, encode_any, Decoded};
use xla_shape::index::LayoutPlan;
use xla_shape::json::{self, PrintOptions};
use xla_shape::proto::{LayoutProto, ProgramShapeProto, ShapeProto};
use xla_shape::text::module::ProtoSite;
use xla_shape::text::{self, module, ParseOptions};
use xla_shape::validate::{self, Options};
use xla_shape::{AnyMessage, MessageKind};

/// A property: panics when it fails for the input.
pub type Property = fn(&[u8]);

/// The fuzz targets, by name, with their property.
pub const TARGETS: &[(&str, Property)] = &[
    ("decode_roundtrip", decode_roundtrip),
    ("json_roundtrip", json_roundtrip),
    ("text_roundtrip", text_roundtrip),
    ("module_text", module_text),
    ("module_proto", module_proto),
    ("validate_any", validate_any),
    ("layout_plan", layout_plan),
    ("relayout", relayout),
    ("guard_diff", guard_diff),
    ("report_formats", report_formats),
    ("npy", npy),
];

fn kind_of(selector: u8) -> MessageKind {
    match selector % 3 {
        0 => MessageKind::Shape,
        1 => MessageKind::Layout,
        _ => MessageKind::ProgramShape,
    }
}

/// Binary decode -> encode is a fixed point after one round that decodes to the same
/// message, and prost reads the known fields of our encoding as we do. The first byte
/// picks the message kind.
pub fn decode_roundtrip(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let kind = kind_of(selector);
    if kind == MessageKind::Shape {
        streaming_decode_agrees(bytes);
        leaves_decode_agree(bytes);
        tree_decode_agrees(bytes);
        streamed_check_agrees(None, bytes);
    }
    if kind == MessageKind::ProgramShape {
        program_decode_agrees(bytes);
        program_tree_agrees(bytes);
        streamed_check_agrees(Some(MessageKind::ProgramShape), bytes);
        program_conversions_agree(xla_shape::convert::Form::Binary, bytes);
        program_listing_agrees(xla_shape::report::Form::Binary, bytes);
    }
    let Ok(decoded) = decode_any(kind, bytes) else {
        return;
    };
    let once = encode_any(&decoded);
    assert_eq!(once.len(), decoded.encoded_len());
    let again = decode_any(kind, &once).expect("the codec's own output decodes");
    assert_eq!(again, decoded);
    assert_eq!(encode_any(&again), once, "not a fixed point");
    let known = encode_any(&Decoded {
        message: decoded.message.clone(),
        unknown: Default::default(),
    });
    let by_prost = match kind {
        MessageKind::Shape => ShapeProto::decode(known.as_slice()).map(AnyMessage::Shape),
        MessageKind::Layout => LayoutProto::decode(known.as_slice()).map(AnyMessage::Layout),
        MessageKind::ProgramShape => {
            ProgramShapeProto::decode(known.as_slice()).map(AnyMessage::ProgramShape)
        }
    };
    assert_eq!(
        by_prost.expect("prost decodes our encoding"),
        decoded.message
    );
}

/// Decoding a shape's top-level tuple an element at a time gives what the whole
/// decode gives: the same error, or the same elements, the rest in the shell, and the
/// same unknown fields.
fn streaming_decode_agrees(bytes: &[u8]) {
    long_proto_entries_agree(bytes);
    let whole = codec::decode_shape(bytes);
    let mut elements = Vec::new();
    let mut spans = Vec::new();
    let streamed = codec::decode_shape_streaming(bytes, &mut |i, span, element| {
        assert_eq!(i, elements.len());
        spans.push(span);
        elements.push(element);
    });
    let (whole, streamed) = match (whole, streamed) {
        (Err(a), Err(b)) => return assert_eq!(a, b),
        (Ok(whole), Ok(streamed)) => (whole, streamed),
        (a, b) => panic!("whole {a:?}, streamed {b:?}"),
    };
    assert_eq!(streamed.elements, elements.len());
    let mut shell = whole.message.clone();
    let tuple = std::mem::take(&mut shell.tuple_shapes);
    assert_eq!(shell, streamed.shell.message);
    assert_eq!(tuple.len(), elements.len());
    for ((element, decoded), span) in tuple.iter().zip(&elements).zip(&spans) {
        assert_eq!(element, &decoded.message);
        assert_field_4(&bytes[span.clone()]);
    }
    let unknown =
        streamed.shell.unknown.len() + elements.iter().map(|e| e.unknown.len()).sum::<usize>();
    assert_eq!(whole.unknown.len(), unknown);
    if streamed.shell.holds_no_unknown() && elements.iter().all(|e| e.holds_no_unknown()) {
        assert!(whole.holds_no_unknown());
    }
    // Converted a tuple element at a time, the bytes of the whole conversion.
    use xla_shape::convert::{self, Form};
    let options = convert::Options {
        pretty: bytes.len() % 2 == 0,
        ..Default::default()
    };
    // Into the forms that drop unknown fields, a tuple whose shapes hold some: the
    // bytes of the whole conversion, and the fields it drops, in its order; into the
    // lossless text, the whole conversion's refusal (or its bytes, with none dropped).
    for (to, hlo_style) in [
        (Form::Json, xla_shape::text::HloStyle::Exact),
        (Form::Hlo, xla_shape::text::HloStyle::Xla),
        (Form::Hlo, xla_shape::text::HloStyle::Exact),
    ] {
        let options = convert::Options {
            hlo_style,
            ..options
        };
        let Some(streamed) = convert::binary_shape_to_text_dropping_unknown(bytes, to, &options)
        else {
            continue;
        };
        let decoded = convert::read(Form::Binary, MessageKind::Shape, bytes, &options).unwrap();
        match (convert::write(to, &decoded, &options), streamed) {
            (Ok(a), Ok(streamed)) => {
                assert_eq!(a, streamed.output.into_vec().unwrap(), "{to:?}");
                let whole = decoded.unknown_fields();
                let listed = whole.len().min(xla_shape::validate::MAX_LISTED_UNKNOWN);
                assert_eq!(whole[..listed], streamed.dropped, "{to:?}");
                assert_eq!(whole.len() - listed, streamed.more, "{to:?}");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("whole {a:?}, streamed {b:?}"),
        }
    }
    // Every form, the lossless text too (which refuses an unknown field anywhere with
    // the whole conversion's error).
    for (to, hlo_style) in [
        (Form::Binary, options.hlo_style),
        (Form::Json, options.hlo_style),
        (Form::Hlo, xla_shape::text::HloStyle::Xla),
        (Form::Hlo, xla_shape::text::HloStyle::Exact),
    ] {
        let options = convert::Options {
            hlo_style,
            ..options
        };
        let streamed = match to {
            Form::Binary => convert::binary_shape_to_binary(bytes),
            to => convert::binary_shape_to_text(bytes, to, &options),
        }
        .map(|r| r.map(|spool| spool.into_vec().unwrap()));
        let Some(streamed) = streamed else {
            continue;
        };
        let decoded = convert::read(Form::Binary, MessageKind::Shape, bytes, &options).unwrap();
        match (convert::write(to, &decoded, &options), streamed) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{to:?}"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("whole {a:?}, streamed {b:?}"),
        }
    }
}

/// Puts `leaf` at `path` of the tuple `root` rebuilt from leaves in order: the path's
/// last index is the next element of its tuple, whose enclosing tuples are the last
/// elements at the path's other indices (created, as plain tuples, when new).
fn insert_leaf(root: &mut ShapeProto, path: &[usize], leaf: ShapeProto) {
    let (&last, outer) = path.split_last().expect("a leaf is inside the tuple");
    let mut node = root;
    for &i in outer {
        if i == node.tuple_shapes.len() {
            node.tuple_shapes.push(ShapeProto {
                element_type: xla_shape::proto::PrimitiveType::Tuple as i32,
                ..Default::default()
            });
        }
        assert_eq!(i + 1, node.tuple_shapes.len(), "{path:?}");
        node = &mut node.tuple_shapes[i];
    }
    assert_eq!(last, node.tuple_shapes.len(), "{path:?}");
    node.tuple_shapes.push(leaf);
}

/// Gives the tuple at `path` below `root` the own fields of `shell` (a tuple without
/// its elements), keeping its elements.
fn set_own_fields(root: &mut ShapeProto, path: &[usize], shell: ShapeProto) {
    let mut at = root;
    for &i in path {
        at = &mut at.tuple_shapes[i];
    }
    let elements = std::mem::take(&mut at.tuple_shapes);
    *at = ShapeProto {
        tuple_shapes: elements,
        ..shell
    };
}

/// A streamed element's span is its whole field: its tag first, field 4 and
/// length-delimited, a varint that may be written longer than it needs (`a2 00` is
/// 0x22 too, and protobuf reads it alike).
fn assert_field_4(field: &[u8]) {
    let tag = field
        .iter()
        .take(10)
        .enumerate()
        .try_fold(0u64, |tag, (i, &b)| {
            let tag = tag | u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                Err(tag)
            } else {
                Ok(tag)
            }
        });
    assert_eq!(tag, Err(0x22), "{field:?}");
}

/// Decoding a shape leaf by leaf into nested plain tuples gives the whole decode's
/// error, or its tuple rebuilt from the leaves, with the same unknown fields.
fn leaves_decode_agree(bytes: &[u8]) {
    let whole = codec::decode_shape(bytes);
    let mut rebuilt = ShapeProto::default();
    let mut unknown = 0;
    let streamed = codec::decode_shape_leaves(bytes, &mut |path, span, leaf| {
        assert_field_4(&bytes[span]);
        unknown += leaf.unknown.len();
        insert_leaf(&mut rebuilt, path, leaf.message);
    });
    let (whole, streamed) = match (whole, streamed) {
        (Err(a), Err(b)) => return assert_eq!(a, b),
        (Ok(whole), Ok(streamed)) => (whole, streamed),
        (a, b) => panic!("whole {a:?}, streamed {b:?}"),
    };
    assert_eq!(streamed.elements, rebuilt.tuple_shapes.len());
    let mut shell = whole.message.clone();
    let tuple = std::mem::take(&mut shell.tuple_shapes);
    assert_eq!(shell, streamed.shell.message);
    assert_eq!(tuple, rebuilt.tuple_shapes);
    assert_eq!(whole.unknown.len(), streamed.shell.unknown.len() + unknown);
}

/// Decoding a shape leaf by leaf into every nested tuple, whatever it holds
/// (`codec::decode_shape_tree`), gives the whole decode's error, or its tuple rebuilt
/// from the leaves and the tuples' own fields, with the same unknown fields; every
/// tuple opened is entered before its elements and left after them, once.
fn tree_decode_agrees(bytes: &[u8]) {
    use xla_shape::codec::TreeEvent;
    let whole = codec::decode_shape(bytes);
    let rebuilt = std::cell::RefCell::new(ShapeProto::default());
    let unknown = std::cell::Cell::new(0);
    let open = std::cell::RefCell::new(Vec::<Vec<usize>>::new());
    let streamed = codec::decode_shape_tree(
        bytes,
        &mut |path, span, leaf| {
            assert_field_4(&bytes[span]);
            unknown.set(unknown.get() + leaf.unknown.len());
            insert_leaf(&mut rebuilt.borrow_mut(), path, leaf.message);
        },
        &mut |event| match event {
            TreeEvent::Enter(path, own) => {
                // The own fields read ahead, checked against those read after the
                // elements when the tuple is left.
                assert!(own.tuple_shapes.is_empty());
                insert_leaf(&mut rebuilt.borrow_mut(), path, own.clone());
                open.borrow_mut().push(path.to_vec());
            }
            TreeEvent::Leave(path, shell, node) => {
                assert_eq!(open.borrow_mut().pop().as_deref(), Some(path));
                assert!(shell.tuple_shapes.is_empty());
                unknown.set(unknown.get() + node.len());
                let mut rebuilt = rebuilt.borrow_mut();
                let mut at = &mut *rebuilt;
                for &i in path {
                    at = &mut at.tuple_shapes[i];
                }
                let elements = std::mem::take(&mut at.tuple_shapes);
                assert_eq!(*at, shell, "the own fields read ahead at {path:?}");
                at.tuple_shapes = elements;
            }
        },
    );
    let (whole, streamed) = match (whole, streamed) {
        (Err(a), Err(b)) => return assert_eq!(a, b),
        (Ok(whole), Ok(streamed)) => (whole, streamed),
        (a, b) => panic!("whole {a:?}, streamed {b:?}"),
    };
    assert!(open.borrow().is_empty());
    let rebuilt = rebuilt.into_inner();
    assert_eq!(streamed.elements, rebuilt.tuple_shapes.len());
    let mut shell = whole.message.clone();
    let tuple = std::mem::take(&mut shell.tuple_shapes);
    assert_eq!(shell, streamed.shell.message);
    assert_eq!(tuple, rebuilt.tuple_shapes);
    assert_eq!(
        whole.unknown.len(),
        streamed.shell.unknown.len() + unknown.get()
    );
}

/// `validate` of a binary tuple, or of a program shape given as one, read a shape at a
/// time (as it reads one of 1 MiB or more) reports what the whole check reports: the
/// same findings (code, severity, path) in the same order, and the same count of
/// shapes.
fn streamed_check_agrees(message: Option<MessageKind>, bytes: &[u8]) {
    use xla_shape::check;
    let options = check::Options {
        from: Some(xla_shape::report::Form::Binary),
        message,
        ..Default::default()
    };
    let Some(streamed) = check::check_binary_streamed("in", bytes, &options) else {
        return;
    };
    let whole = check::check_bytes("in", bytes, &options);
    let said = |report: &xla_shape::report::FileReport| {
        let findings = report.findings.to_vec().expect("findings read back");
        let findings: Vec<_> = findings
            .into_iter()
            .map(|f| (f.code, f.severity, f.path))
            .collect();
        (
            report.message,
            report.shapes,
            report.unreadable.clone(),
            findings,
        )
    };
    assert_eq!(said(&streamed), said(&whole), "{bytes:02x?}");
}

/// A binary tuple's listing entry made a shape at a time
/// (`Entry::of_long_tuple_proto`) is the whole tuple's when it is made: the same text
/// (in the style, else the lossless one, else why there is none) and shape (unknown
/// fields, anywhere, are left out of both), and the same byte size.
fn long_proto_entries_agree(bytes: &[u8]) {
    use xla_shape::guard::listing::Entry;
    use xla_shape::text::{module::Role, HloStyle};
    let Ok(whole) = codec::decode_shape(bytes) else {
        return;
    };
    for style in [HloStyle::Xla, HloStyle::Exact] {
        if let Some(long) = Entry::of_long_tuple_proto(Role::Result, bytes, style) {
            // As the listing prints a whole shape: in the style, else in the lossless
            // one, else why it has no text.
            let text = style
                .print_shape(&whole.message)
                .or_else(|_| xla_shape::text::print_shape(&whole.message))
                .unwrap_or_else(|e| format!("<no HLO text: {e}>"));
            let expected = Entry::new(Role::Result, &whole.message, text);
            assert_eq!(long.text, expected.text, "{bytes:02x?}");
            assert_eq!(long.shape(), expected.shape(), "{bytes:02x?}");
            assert_eq!(*long.shape(), whole.message, "{bytes:02x?}");
            assert_eq!(long.bytes(), expected.bytes(), "{bytes:02x?}");
        }
    }
}

/// A shape's text read leaf by leaf into nested tuples (`text::parse_shape_leaves`)
/// gives the leaves of the whole parse in order, each at its path and span, and the
/// whole parse's error.
pub fn leaves_agree(input: &str, options: ParseOptions) {
    let tuple = |elements| xla_shape::proto::ShapeProto {
        element_type: xla_shape::proto::PrimitiveType::Tuple as i32,
        tuple_shapes: elements,
        ..Default::default()
    };
    let whole = text::parse_shape_with(input, options);
    // The tuple rebuilt from its leaves: each path's last index is the next element of
    // its tuple, whose enclosing tuples are the last ones at the path's other indices.
    let mut rebuilt = tuple(Vec::new());
    let streamed = text::parse_shape_leaves(input, options, &mut |path, span, leaf| {
        assert!(input.get(span.clone()).is_some(), "{input:?} {span:?}");
        insert_leaf(&mut rebuilt, path, leaf);
    });
    match (whole, streamed) {
        (Ok(shape), Ok(text::Streamed::Shape(streamed))) => assert_eq!(shape, streamed),
        (Ok(shape), Ok(text::Streamed::Tuple { elements })) => {
            assert_eq!(elements, shape.tuple_shapes.len(), "{input:?}");
            assert_eq!(shape, rebuilt, "{input:?}");
        }
        (Err(a), Err(b)) => assert_eq!(
            (a.message(), a.span()),
            (b.message(), b.span()),
            "{input:?}"
        ),
        (a, b) => panic!("{input:?}: {a:?} vs {b:?}"),
    }
}

/// A tuple's listing entry made a shape at a time (`Entry::of_long_tuple`) is the
/// whole tuple's: the same text and shape, made whenever the whole parses and prints.
pub fn long_entries_agree(input: &str, options: ParseOptions) {
    use xla_shape::guard::listing::Entry;
    use xla_shape::text::{module::Role, HloStyle};
    let whole = text::parse_shape_with(input, options);
    for style in [HloStyle::Xla, HloStyle::Exact] {
        let long = Entry::of_long_tuple(Role::Result, input, options, style);
        let printed = whole.as_ref().ok().and_then(|w| style.print_shape(w).ok());
        match (&whole, printed, long) {
            (Ok(w), Some(text), Some(long)) if !w.tuple_shapes.is_empty() => {
                let expected = Entry::new(Role::Result, w, text);
                assert_eq!(long.text, expected.text, "{input:?}");
                assert_eq!(long.shape(), expected.shape(), "{input:?}");
                assert_eq!(long.bytes(), expected.bytes(), "{input:?}");
            }
            (Ok(w), Some(_), long)
                if !w.tuple_shapes.is_empty() && input.trim_start().starts_with('(') =>
            {
                panic!("{input:?}: a tuple that parses and prints: {long:?}")
            }
            (_, _, Some(long)) if whole.is_err() => {
                panic!("{input:?}: made of text that does not parse: {long:?}")
            }
            _ => {}
        }
    }
}

/// Shape text to JSON and to HLO text, a top-level tuple an element at a time, gives
/// the bytes or the error of the whole message read and written.
fn streamed_conversions_agree(input: &str) {
    use xla_shape::convert::{self, Form};
    for to in [Form::Json, Form::Hlo] {
        let options = convert::Options {
            pretty: input.len() % 2 == 0,
            ..Default::default()
        };
        let whole = convert::read(Form::Hlo, MessageKind::Shape, input.as_bytes(), &options)
            .and_then(|decoded| convert::write(to, &decoded, &options));
        let streamed = convert::hlo_shape_to_text(input.as_bytes(), to, &options);
        match (whole, streamed) {
            (Ok(a), Ok(b)) => assert_eq!(a, b.into_vec().unwrap()),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("whole {a:?}, streamed {b:?}"),
        }
    }
}

/// Proto3 JSON parse -> print -> parse gives the same message, and printing is a
/// fixed point; the first byte picks the kind and the print options.
pub fn json_roundtrip(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    json_leaves_agree(bytes);
    json_tree_agrees(bytes);
    json_program_leaves_agree(bytes);
    json_program_tree_agrees(bytes);
    program_conversions_agree(xla_shape::convert::Form::Json, bytes);
    program_listing_agrees(xla_shape::report::Form::Json, bytes);
    let kind = kind_of(selector);
    let Ok(message) = json::from_json(kind, bytes, &json::ParseOptions::new()) else {
        return;
    };
    let options = PrintOptions::new().pretty(selector & 4 != 0);
    let printed = json::to_json(&message, &options);
    let again = json::from_json(kind, printed.as_bytes(), &json::ParseOptions::new())
        .unwrap_or_else(|e| panic!("our own JSON reads back: {e}\n{printed}"));
    assert_eq!(again, message, "{printed}");
    assert_eq!(json::to_json(&again, &options), printed);
}

/// JSON read as a shape a shape at a time with every tuple opened (its own fields
/// given when it is left) gives the whole read's error, or its message rebuilt from the
/// leaves and the tuples' own fields.
pub fn json_tree_agrees(bytes: &[u8]) {
    use xla_shape::json::ProtoJson;
    let options = json::ParseOptions::new();
    let whole = ShapeProto::from_json_slice(bytes, &options);
    let rebuilt = std::cell::RefCell::new(ShapeProto::default());
    let open = std::cell::RefCell::new(Vec::<Vec<usize>>::new());
    let streamed = json::shape_from_json_tree(
        bytes,
        &options,
        &mut |path, leaf| insert_leaf(&mut rebuilt.borrow_mut(), path, leaf),
        &mut |path, shell| match shell {
            None => {
                let tuple = ShapeProto {
                    element_type: xla_shape::proto::PrimitiveType::Tuple as i32,
                    ..Default::default()
                };
                insert_leaf(&mut rebuilt.borrow_mut(), path, tuple);
                open.borrow_mut().push(path.to_vec());
            }
            Some(shell) => {
                assert_eq!(open.borrow_mut().pop().as_deref(), Some(path));
                assert!(shell.tuple_shapes.is_empty());
                set_own_fields(&mut rebuilt.borrow_mut(), path, shell);
            }
        },
    );
    match (whole, streamed) {
        (Ok(shape), Ok(mut shell)) => {
            assert!(open.borrow().is_empty());
            assert!(shell.tuple_shapes.is_empty());
            shell.tuple_shapes = rebuilt.into_inner().tuple_shapes;
            assert_eq!(shape, shell, "{:?}", String::from_utf8_lossy(bytes));
        }
        (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
        (a, b) => panic!("{:?}: {a:?} vs {b:?}", String::from_utf8_lossy(bytes)),
    }
}

/// JSON read as a shape a shape at a time (plain tuples that nest opened) gives the
/// whole read's error, or its message rebuilt from the leaves; converted so to every
/// form, the bytes or the error of the whole message read and written.
pub fn json_leaves_agree(bytes: &[u8]) {
    use xla_shape::convert::{self, Form};
    use xla_shape::json::ProtoJson;
    let options = json::ParseOptions::new();
    let whole = ShapeProto::from_json_slice(bytes, &options);
    let mut rebuilt = ShapeProto::default();
    let streamed = json::shape_from_json_leaves(bytes, &options, &mut |path, leaf| {
        insert_leaf(&mut rebuilt, path, leaf);
    });
    match (whole, streamed) {
        (Ok(shape), Ok(mut shell)) => {
            assert!(shell.tuple_shapes.is_empty());
            shell.tuple_shapes = rebuilt.tuple_shapes;
            assert_eq!(shape, shell, "{:?}", String::from_utf8_lossy(bytes));
        }
        (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
        (a, b) => panic!("{:?}: {a:?} vs {b:?}", String::from_utf8_lossy(bytes)),
    }
    for to in [Form::Json, Form::Hlo, Form::Binary] {
        let options = convert::Options {
            pretty: bytes.len() % 2 == 0,
            ..Default::default()
        };
        let Some(streamed) = convert::json_shape_to(bytes, to, &options) else {
            continue;
        };
        let whole = convert::read(Form::Json, MessageKind::Shape, bytes, &options)
            .and_then(|decoded| convert::write(to, &decoded, &options));
        match (whole, streamed) {
            (Ok(a), Ok(b)) => assert!(
                a == b.into_vec().unwrap(),
                "{:?} to {to:?}",
                String::from_utf8_lossy(bytes)
            ),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!(
                "{:?} to {to:?}: {a:?} vs {b:?}",
                String::from_utf8_lossy(bytes)
            ),
        }
    }
}

/// HLO text parse -> print (lossless style) -> parse gives the same message, with
/// and without filling missing layouts; XLA's style prints whatever parsed.
pub fn text_roundtrip(data: &[u8]) {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    checked_lines_agree(input);
    streamed_conversions_agree(input);
    explained_a_shape_at_a_time(input);
    program_conversions_agree(xla_shape::convert::Form::Hlo, input.as_bytes());
    for fill in [true, false] {
        let options = ParseOptions {
            fill_missing_layouts: fill,
        };
        leaves_agree(input, options);
        long_entries_agree(input, options);
        program_leaves_agree(input, options);
        if let Ok(shape) = text::parse_shape_with(input, options) {
            let _ = text::print_shape_as_xla(&shape);
            if let Ok(printed) = text::print_shape(&shape) {
                let again = text::parse_shape_with(&printed, options)
                    .unwrap_or_else(|e| panic!("{input:?} printed {printed:?}: {e}"));
                assert_eq!(again, shape, "{input:?} printed {printed:?}");
            }
        }
        if let Ok(program) = text::parse_program_shape_with(input, options) {
            let _ = text::print_program_shape_as_xla(&program);
            if let Ok(printed) = text::print_program_shape(&program) {
                let again = text::parse_program_shape_with(&printed, options)
                    .unwrap_or_else(|e| panic!("{input:?} printed {printed:?}: {e}"));
                assert_eq!(again, program, "{input:?} printed {printed:?}");
            }
        }
    }
    if let Ok(layout) = text::parse_layout(input) {
        let _ = text::print_layout_as_xla(&layout);
        if let Ok(printed) = text::print_layout(&layout) {
            let again = text::parse_layout(&printed)
                .unwrap_or_else(|e| panic!("{input:?} printed {printed:?}: {e}"));
            assert_eq!(again, layout, "{input:?} printed {printed:?}");
        }
    }
}

/// `validate --from hlo` of lines whose shapes and program shapes are checked a tuple
/// element (or a part) at a time, as lines of 64 KiB or more are, reports what the
/// whole check of each line reports: the same findings (code, severity, message,
/// path, line, column) in the same order, the same count of shapes, the same verdict.
/// (A line that did not parse kept the findings of the elements before its error.)
pub fn checked_lines_agree(input: &str) {
    use xla_shape::check;
    let options = check::Options {
        from: Some(xla_shape::report::Form::Hlo),
        ..Default::default()
    };
    let said = |long_at| {
        let report = check::check_hlo_lines_from("in", input.as_bytes(), &options, long_at);
        let findings = report.findings.to_vec().expect("findings read back");
        let findings: Vec<_> = findings
            .into_iter()
            .map(|f| (f.code, f.severity, f.message, f.path, f.line, f.column))
            .collect();
        (report.message, report.shapes, report.unreadable, findings)
    };
    assert_eq!(said(0), said(usize::MAX), "{input:?}");
}

/// `explain` of a tuple described a shape at a time (every tuple element again a shape
/// at a time, or none) gives the bytes, or the errors, of the whole description; and
/// those (which make an array's dimensions as they are written) are the bytes of the
/// description `describe` holds, in words and JSON.
fn explained_a_shape_at_a_time(input: &str) {
    use xla_shape::describe::{describe, explain_with, ExplainError, ExplainFormat};
    let run = |style, format, sizes| {
        let mut issues = Vec::new();
        let explained = explain_with(input, style, format, &mut |i| issues.push(i.clone()), sizes);
        match explained {
            Ok(out) => Ok(out.into_vec().expect("in memory")),
            Err(ExplainError::Invalid { errors }) => {
                assert_eq!(errors, issues.len(), "{input:?}");
                Err(format!("{issues:?}"))
            }
            Err(e) => Err(e.to_string()),
        }
    };
    let shape = text::parse_shape(input).ok().and_then(|proto| {
        xla_shape::validate::validate_shape_with(&proto, xla_shape::validate::Options::hlo_text())
            .into_result()
            .ok()
    });
    for style in [text::HloStyle::Xla, text::HloStyle::Exact] {
        for format in [ExplainFormat::Text, ExplainFormat::PrettyJson] {
            let whole = run(style, format, (usize::MAX, usize::MAX));
            if let Some(shape) = &shape {
                let held = describe(shape, style);
                let held = match format {
                    ExplainFormat::Text => held.to_string(),
                    _ => serde_json::to_string_pretty(&held).expect("serialises") + "\n",
                };
                assert_eq!(
                    whole.as_deref().map(String::from_utf8_lossy),
                    Ok(held.as_str().into()),
                    "{input:?} {style:?} {format:?}"
                );
            }
            for sizes in [(0, 0), (0, usize::MAX)] {
                assert_eq!(
                    run(style, format, sizes),
                    whole,
                    "{input:?} {style:?} {format:?}"
                );
            }
        }
    }
}

/// The module text scanner reads anything without panicking, and every shape it
/// reports validates without panicking.
pub fn module_text(data: &[u8]) {
    let mut check = module::validate_text;
    let mut findings = Vec::new();
    let checked = module::scan_text(Cursor::new(data), &mut check, &mut |f| findings.push(f));
    // Validated by the scanner (each distinct text once, its issues handed on from the
    // memo or as they are found again): the same findings and summary.
    let mut validated = Vec::new();
    let by_scanner = module::scan_text_validated(Cursor::new(data), &mut |f| validated.push(f));
    assert_eq!(
        format!("{checked:?} {findings:?}"),
        format!("{by_scanner:?} {validated:?}"),
        "{data:02x?}"
    );
}

/// The layout guard's reading and comparing of any input (split at its first NUL into
/// an old and a new one; the same twice without one), as `diff` does: reading never
/// panics, a listing compared with itself has no change and no match made other than
/// by name, and two listings compare without panicking, with every pair matched other
/// than by name naming instructions or computations the listings hold.
pub fn guard_diff(data: &[u8]) {
    use xla_shape::guard::diff::{diff_listings, Options as DiffOptions};
    use xla_shape::guard::listing::{read_bytes, ReadOptions};
    let (old, new) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, data),
    };
    let read = |name, bytes| read_bytes(name, bytes, &ReadOptions::default()).ok();
    let bytes = (old, new);
    let (old, new) = (read("old", old), read("new", new));
    let options = DiffOptions::default();
    for listing in old.iter().chain(&new).flatten() {
        let same = diff_listings(listing, listing, &options);
        assert!(
            same.changes.is_empty() && same.matches.is_empty(),
            "{:?} {:?}",
            same.changes.held().first(),
            same.matches.held().first()
        );
    }
    diff_files_agree(bytes);
    let (Some(old), Some(new)) = (old, new) else {
        return;
    };
    for (o, n) in old.iter().zip(&new) {
        let diff = diff_listings(o, n, &options);
        let names = |listing: &xla_shape::guard::Listing| -> std::collections::HashSet<String> {
            let entries = listing.entries.iter();
            let instructions = entries.clone().filter_map(|e| e.instruction.clone());
            let computations = entries.filter_map(|e| e.computation.clone());
            let declared = listing.instructions.iter().map(|i| i.name.clone());
            instructions.chain(computations).chain(declared).collect()
        };
        let (old_names, new_names) = (names(o), names(n));
        // Each old and each new item is matched once at most, whatever the way.
        let (mut olds, mut news) = (
            std::collections::HashSet::new(),
            std::collections::HashSet::new(),
        );
        for m in &diff.matches.to_vec().unwrap() {
            assert!(old_names.contains(&m.old), "{m:?}");
            assert!(new_names.contains(&m.new), "{m:?}");
            assert!(olds.insert((m.computation.clone(), m.old.clone())), "{m:?}");
            assert!(news.insert((m.computation.clone(), m.new.clone())), "{m:?}");
        }
    }
}

/// Two files compared by path (shape lines compared as they are read, anything else
/// held) give the changes and matches of their listings, read from the same files,
/// compared whole.
fn diff_files_agree((old_bytes, new_bytes): (&[u8], &[u8])) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use xla_shape::guard::diff::{diff_listings, diff_paths, Options as DiffOptions};
    use xla_shape::guard::listing::{read_path, ReadOptions};
    static FILES: AtomicUsize = AtomicUsize::new(0);
    let n = FILES.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("xla-shape-diff-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (old_path, new_path) = (dir.join("old"), dir.join("new"));
    std::fs::write(&old_path, old_bytes).unwrap();
    std::fs::write(&new_path, new_bytes).unwrap();
    reads_agree(&old_path, old_bytes);
    reads_agree(&new_path, new_bytes);
    let (options, read) = (DiffOptions::default(), ReadOptions::default());
    let walk = xla_shape::check::Walk::new(&[], &[]).unwrap();
    let report = diff_paths(&old_path, &new_path, &read, &walk, &options);
    let listed = |path: &std::path::Path| read_path(path, &path.display().to_string(), &read);
    let (old, new) = (listed(&old_path), listed(&new_path));
    let _ = std::fs::remove_dir_all(&dir);
    let (Ok(old), Ok(new)) = (old, new) else {
        return;
    };
    if let ([old], [new]) = (&old[..], &new[..]) {
        let whole = diff_listings(old, new, &options);
        let [file] = &report.files[..] else {
            panic!("{report:?}");
        };
        assert_eq!(file.error, None);
        assert_eq!(
            file.changes.to_vec().unwrap(),
            whole.changes.to_vec().unwrap()
        );
        assert_eq!(
            file.matches.to_vec().unwrap(),
            whole.matches.to_vec().unwrap()
        );
        return;
    }
    // Listing files read back that name several files (held as their text, each file
    // read again when its pair is compared): each pair compares as its listings do,
    // each file named once in the report.
    let of = |listings: &[xla_shape::guard::Listing], name: &Option<String>| {
        let name = name.as_deref()?;
        listings
            .iter()
            .find(|listing| listing.file == name)
            .cloned()
    };
    let named = |listings: &[xla_shape::guard::Listing], side: fn(&_) -> &Option<String>| {
        let mut names: Vec<&str> = report
            .files
            .iter()
            .filter_map(|f| side(f).as_deref())
            .collect();
        names.sort_unstable();
        let mut all: Vec<&str> = listings.iter().map(|l| l.file.as_str()).collect();
        all.sort_unstable();
        assert_eq!(names, all, "{report:?}");
    };
    named(&old, |f: &xla_shape::guard::diff::FileDiff| &f.old);
    named(&new, |f: &xla_shape::guard::diff::FileDiff| &f.new);
    for file in &report.files {
        assert_eq!(file.error, None, "{file:?}");
        let (Some(o), Some(n)) = (of(&old, &file.old), of(&new, &file.new)) else {
            assert!(
                file.changes.is_empty() && file.matches.is_empty(),
                "{file:?}"
            );
            continue;
        };
        let whole = diff_listings(&o, &n, &options);
        assert_eq!(
            file.changes.to_vec().unwrap(),
            whole.changes.to_vec().unwrap(),
            "{}",
            file.key
        );
        assert_eq!(
            file.matches.to_vec().unwrap(),
            whole.matches.to_vec().unwrap(),
            "{}",
            file.key
        );
    }
}

/// The same bytes are listed and checked alike in memory, from a file and from a
/// stream that gives a few bytes a read (a pipe): each tells their form from the same
/// first bytes, a stream's last line counting when the stream ends there.
fn reads_agree(path: &std::path::Path, bytes: &[u8]) {
    use xla_shape::check::{check_bytes, check_path, check_stream, Options as CheckOptions};
    use xla_shape::guard::listing::{read_bytes, read_path, ReadOptions};
    /// Gives at most 3 bytes a read.
    struct Trickle<'a>(&'a [u8]);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(3).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let name = "input";
    let read = ReadOptions::default();
    let in_memory = format!("{:?}", read_bytes(name, bytes, &read));
    assert_eq!(in_memory, format!("{:?}", read_path(path, name, &read)));
    let options = CheckOptions::default();
    let in_memory = check_bytes(name, bytes, &options);
    assert_eq!(in_memory, check_path(path, name, &options));
    assert_eq!(in_memory, check_stream(name, Trickle(bytes), &options));
}

/// The module proto scanner reads any bytes without panicking; the check that reads
/// every shape and program shape it can a shape at a time (as it reads those of 1 MiB
/// or more) gives the whole check's report, the texts of its findings' shapes aside
/// (each gives the text of the shape it is about, not the whole message's).
pub fn module_proto(data: &[u8]) {
    let mut check = module::validate_proto;
    let mut findings = 0usize;
    let _ = module::scan_proto(data, &mut check, &mut |_| findings += 1);
    let options = xla_shape::check::Options::default();
    let whole = xla_shape::check::check_module_proto_from("m", data, &options, usize::MAX);
    let parts = xla_shape::check::check_module_proto_from("m", data, &options, 0);
    let facts = |report: &xla_shape::report::FileReport| {
        let found = report.findings.to_vec().unwrap();
        let found: Vec<_> = (found.into_iter())
            .map(|f| {
                (
                    f.code,
                    f.severity,
                    f.path,
                    f.message,
                    f.computation,
                    f.instruction,
                )
            })
            .collect();
        (
            report.shapes,
            report.message,
            format!("{:?}", report.unreadable),
            found,
        )
    };
    assert_eq!(facts(&parts), facts(&whole), "{data:02x?}");
    // The listing's walk, every shape it can read a shape at a time handed on as its
    // bytes, gives the whole walk's shapes (those bytes decoded), sites, instructions
    // and problems.
    let walk = |long_at| {
        let (mut shapes, mut instructions, mut problems) = (Vec::new(), Vec::new(), Vec::new());
        let summary = module::walk_proto_for_listing_from(
            data,
            &mut |site, shape| {
                let shape = match site.elided {
                    Some(bytes) => codec::decode_shape(bytes).unwrap().message,
                    None => shape.clone(),
                };
                let site = ProtoSite {
                    elided: None,
                    ..site.clone()
                };
                shapes.push((format!("{site:?}"), shape));
            },
            &mut |site| instructions.push(format!("{site:?}")),
            &mut |finding| problems.push(format!("{finding:?}")),
            long_at,
        );
        let summary = summary.map(|s| format!("{s:?}")).map_err(|e| e.to_string());
        (summary, shapes, instructions, problems)
    };
    assert_eq!(walk(0), walk(usize::MAX), "{data:02x?}");
}

/// Validation of anything that decodes never panics, with either rule set; a valid
/// shape's domain type converts back to a proto that validates too.
pub fn validate_any(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let Ok(decoded) = decode_any(kind_of(selector), bytes) else {
        return;
    };
    // Checked without building the value (`validate_message`), the same issues as
    // when the value is built.
    for options in [Options::proto(), Options::hlo_text()] {
        let report = validate::validate_message(&decoded.message, options);
        let built = match &decoded.message {
            xla_shape::AnyMessage::Shape(p) => {
                validate::validate_shape_with(p, options).into_parts().1
            }
            xla_shape::AnyMessage::Layout(p) => {
                validate::validate_layout_with(p, options).into_parts().1
            }
            xla_shape::AnyMessage::ProgramShape(p) => {
                validate::validate_program_shape_with(p, options)
                    .into_parts()
                    .1
            }
        };
        assert_eq!(report.issues(), built.issues(), "{bytes:02x?}");
    }
    // A shape decoded straight into the domain types gets the decoded message's
    // verdict, value and report alike.
    if kind_of(selector) == MessageKind::Shape {
        for options in [Options::proto(), Options::hlo_text()] {
            let direct = validate::decode_validated_shape(bytes, options);
            let by_message = codec::decode_shape(bytes)
                .map(|decoded| validate::validate_decoded_shape(&decoded, options));
            assert_eq!(direct, by_message, "{bytes:02x?}");
        }
        // Handed on one at a time, the same issues in the same order, and the same
        // value.
        if let xla_shape::AnyMessage::Shape(shape) = &decoded.message {
            for options in [Options::proto(), Options::hlo_text()] {
                let (value, report) = validate::validate_shape_with(shape, options).into_parts();
                let mut each = Vec::new();
                let handed = validate::validate_shape_each(shape, options, &mut |issue| {
                    each.push(issue);
                });
                assert_eq!(each, report.issues(), "{bytes:02x?}");
                assert_eq!(handed, value, "{bytes:02x?}");
            }
        }
    }
}

/// For every valid array shape given as text: the layout plan's index <-> linear
/// inverse on a few indices, sizes, strides, and the first elements of both orders.
pub fn layout_plan(data: &[u8]) {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(proto) = text::parse_shape(input) else {
        return;
    };
    let Ok(shape) = validate::validate_shape_with(&proto, Options::hlo_text()).into_result() else {
        return;
    };
    let Some(array) = shape.as_array() else {
        return;
    };
    // The bytes alone (a listing's) are the plan's, and fail where it fails.
    let bytes = LayoutPlan::allocated_bytes_of(array).ok();
    let plan = LayoutPlan::new(array);
    wider_plan_agrees(&proto, &plan);
    let Ok(plan) = plan else {
        assert_eq!(bytes, None);
        return;
    };
    assert_eq!(bytes, Some(plan.allocated_bytes()));
    let dims = plan.dimensions().to_vec();
    let count = plan.element_count();
    assert!(plan.allocated_elements() >= count);
    let _ = (
        plan.allocated_bytes(),
        plan.xla_byte_size_of(),
        plan.xla_array_size(),
    );
    let _ = (plan.element_strides(), plan.byte_strides());
    // Up to the last element in memory: at least every element's slot below, at most
    // the buffer.
    let data = plan.data_elements();
    assert!(data <= plan.allocated_elements());
    if count == 0 {
        assert_eq!(plan.physical_order().next(), None);
        assert_eq!(plan.logical_order().next(), None);
        return;
    }
    // The first, last and middle index in logical order.
    let last: Vec<u64> = dims.iter().map(|&d| d - 1).collect();
    let middle: Vec<u64> = dims.iter().map(|&d| d / 2).collect();
    let mut seen: Vec<(Vec<u64>, u64)> = Vec::new();
    for index in [vec![0; dims.len()], last, middle] {
        let linear = plan.linear_index(&index).expect("an in-bounds index");
        assert!(linear < plan.allocated_elements());
        assert_eq!(plan.multi_index(linear).unwrap(), Some(index.clone()));
        // Distinct indices, distinct slots.
        assert!(seen.iter().all(|(i, l)| (*i == index) == (*l == linear)));
        seen.push((index, linear));
    }
    // The first elements of both orders: each an element's slot, in order.
    let row_major = |index: &[u64]| index.iter().zip(&dims).fold(0u64, |a, (&e, &d)| a * d + e);
    let logical: Vec<u64> = plan.logical_order().take(64).collect();
    let mut index = vec![0; dims.len()];
    for (n, &linear) in logical.iter().enumerate() {
        assert_eq!(plan.linear_index(&index).unwrap(), linear, "logical {n}");
        if !plan.bump_indices(&mut index) {
            assert_eq!(n + 1, logical.len());
        }
    }
    let mut physical = plan.physical_order();
    let mut previous = None;
    for _ in 0..64 {
        let Some((slot, position)) = physical.next() else {
            break;
        };
        let index = physical.index().to_vec();
        assert_eq!(plan.linear_index(&index).unwrap(), slot);
        assert!(slot < data, "data_elements covers every element");
        assert_eq!(row_major(&index), position);
        assert!(
            previous.is_none_or(|p| p < slot),
            "physical order is increasing"
        );
        previous = Some(slot);
    }
}

/// Dimensions of size 1 [`wider_plan_agrees`] puts before a shape's own: past rank 64 a
/// plan leaves out the untiled ones.
const WIDER_BY: usize = 65;

/// The array of `proto` with [`WIDER_BY`] more dimensions of size 1, first and most
/// major, answers as `plan` does: the same sizes, slots and strides, indices with the
/// new coordinates 0 (the plan of the wider array is built over the dimensions that
/// take part in it).
fn wider_plan_agrees(proto: &ShapeProto, plan: &Result<LayoutPlan, xla_shape::index::PlanError>) {
    use std::iter::repeat_n;
    let mut wide = proto.clone();
    wide.dimensions = repeat_n(1, WIDER_BY)
        .chain(proto.dimensions.iter().copied())
        .collect();
    if !proto.is_dynamic_dimension.is_empty() {
        let flags = proto.is_dynamic_dimension.iter().copied();
        wide.is_dynamic_dimension = repeat_n(false, WIDER_BY).chain(flags).collect();
    }
    if let Some(layout) = wide.layout.as_mut() {
        if !layout.dim_level_types.is_empty()
            || !layout.dim_unique.is_empty()
            || !layout.dim_ordered.is_empty()
        {
            return;
        }
        let more = WIDER_BY as i64;
        let own = layout.minor_to_major.iter().map(|&k| k + more);
        layout.minor_to_major = own.chain((0..more).rev()).collect();
        if !layout.padded_dimensions.is_empty() {
            let padded = layout.padded_dimensions.iter().copied();
            layout.padded_dimensions = repeat_n(1, WIDER_BY).chain(padded).collect();
        }
        for split in &mut layout.split_configs {
            split.dimension += more;
        }
    }
    let shape = validate::validate_shape_with(&wide, Options::hlo_text())
        .into_result()
        .expect("the shape with dimensions of size 1 before it is valid");
    let wider = LayoutPlan::new(shape.as_array().expect("an array"));
    let (plan, wider) = match (plan, wider) {
        (Ok(plan), Ok(wider)) => (plan, wider),
        (Err(xla_shape::index::PlanError::Unbounded { dim }), Err(error)) => {
            let dim = dim + WIDER_BY;
            assert_eq!(error, xla_shape::index::PlanError::Unbounded { dim });
            return;
        }
        (Err(error), wider) => {
            assert_eq!(wider.err().as_ref(), Some(error));
            return;
        }
        (Ok(_), Err(error)) => panic!("the wider array has no plan: {error}"),
    };
    let with_zeros = |index: &[u64]| -> Vec<u64> {
        repeat_n(0, WIDER_BY).chain(index.iter().copied()).collect()
    };
    let sizes = |p: &LayoutPlan| {
        [
            p.element_count(),
            p.element_bits(),
            p.allocated_elements(),
            p.data_elements(),
            p.xla_byte_size_of(),
            p.xla_array_size(),
        ]
    };
    assert_eq!(sizes(&wider), sizes(plan));
    // XLA's `LinearIndex` takes a rank-1 array's index as it is, whatever the tiling.
    if plan.rank() != 1 {
        assert_eq!(wider.xla_array_data_size(), plan.xla_array_data_size());
    }
    let dims: Vec<u64> = repeat_n(1, WIDER_BY)
        .chain(plan.dimensions().iter().copied())
        .collect();
    assert_eq!(wider.dimensions(), dims);
    for k in 0..plan.rank() {
        assert_eq!(
            wider.xla_dimension_stride(k + WIDER_BY),
            plan.xla_dimension_stride(k)
        );
    }
    // Strides are the same when no tile reaches the new dimensions. One that does
    // (a tile longer than the shape it meets: `f32[]{:T(101,3)}`) meets dimensions of
    // size 1 where the array's own met 1s put before it: the same slots, but the
    // digits that make them need not be as plain.
    if let (Some(strides), false) = (plan.element_strides(), tiles_reach_past(proto)) {
        let wide_strides = wider.element_strides().expect("strides");
        assert_eq!(wide_strides[WIDER_BY..], strides[..]);
    }
    let unpacked = wider.xla_unpacked_byte_strides();
    assert_eq!(unpacked[WIDER_BY..], plan.xla_unpacked_byte_strides()[..]);
    let (mut a, mut b) = (plan.logical_order(), wider.logical_order());
    for _ in 0..64 {
        let slot = a.next();
        assert_eq!(b.next(), slot);
        let Some(slot) = slot else { break };
        assert_eq!(b.index(), with_zeros(a.index()));
        assert_eq!(wider.linear_index(b.index()), Ok(slot));
        assert_eq!(
            wider.multi_index(slot).unwrap(),
            Some(with_zeros(a.index()))
        );
    }
    let (mut a, mut b) = (plan.physical_order(), wider.physical_order());
    for _ in 0..64 {
        let next = a.next();
        assert_eq!(b.next(), next);
        if next.is_none() {
            break;
        }
        assert_eq!(b.index(), with_zeros(a.index()));
    }
}

/// Whether a tile of `proto`'s layout is longer than the shape it meets (the shape
/// before it, as the tiles before it made it), so that it reaches past the array's
/// dimensions. A `*` (`i64::MIN`) merges into the next entry unless it is the last; each
/// size makes an outer and an inner dimension.
fn tiles_reach_past(proto: &ShapeProto) -> bool {
    let Some(layout) = &proto.layout else {
        return false;
    };
    let mut len = proto.dimensions.len();
    for tile in &layout.tiles {
        let entries = &tile.dimensions;
        if entries.len() > len {
            return true;
        }
        let last = entries.len().saturating_sub(1);
        let outer = (0..entries.len())
            .filter(|&i| entries[i] != i64::MIN || i == last)
            .count();
        let inner = entries.iter().filter(|&&e| e != i64::MIN).count();
        len = len - entries.len() + outer + inner;
    }
    false
}

/// Largest buffer (either side) the `relayout` property moves, so that one input stays
/// well inside the fuzzer's time limit: layouts with `*` tiles take the general path, at
/// about 200 ns an element, and the property moves each array six times.
const RELAYOUT_MAX_BYTES: u64 = 1 << 16;

/// Relayout between two layouts of one array. Input: a shape's text, a newline, then a
/// layout's text (`{0,1:T(8,128)}`). For every pair that validates and fits in
/// [`RELAYOUT_MAX_BYTES`]: the fast path writes exactly what the element-by-element
/// reference writes, and A -> B -> A gives back every element of A (padding slots
/// aside, which relayout fills).
pub fn relayout(data: &[u8]) {
    relayout_moved(data);
}

/// [`relayout`], saying whether the input got as far as moving bytes.
pub fn relayout_moved(data: &[u8]) -> bool {
    use xla_shape::relayout::{row_major, with_layout, Relayout};
    let Ok(input) = std::str::from_utf8(data) else {
        return false;
    };
    let Some((shape_text, layout_text)) = input.split_once('\n') else {
        return false;
    };
    let Ok(proto) = text::parse_shape(shape_text) else {
        return false;
    };
    let Ok(shape) = validate::validate_shape_with(&proto, Options::hlo_text()).into_result() else {
        return false;
    };
    let Some(a) = shape.as_array() else {
        return false;
    };
    let Ok(layout_proto) = text::parse_layout(layout_text.trim_end()) else {
        return false;
    };
    let Ok(layout) =
        validate::validate_layout_with(&layout_proto, Options::hlo_text()).into_result()
    else {
        return false;
    };
    let Ok(b) = with_layout(a, &layout) else {
        return false;
    };
    let (Ok(there), Ok(back)) = (Relayout::new(a, &b), Relayout::new(&b, a)) else {
        return false;
    };
    let logical = row_major(a);
    let Ok(to_logical) = Relayout::new(a, &logical) else {
        return false;
    };
    let sizes = [
        there.source_bytes(),
        there.destination_bytes(),
        to_logical.destination_bytes(),
    ];
    if sizes.iter().any(|&n| n as u64 > RELAYOUT_MAX_BYTES) {
        return false;
    }
    // The logical array: a pattern that gives neighbouring elements different values,
    // each element as relayout writes a value into a wider slot (the type's bits, then
    // the sign for signed integers), so that a round trip must give it back exactly.
    // A slot narrower than the type (`u4` with `E(2)`, which XLA accepts with a warning)
    // keeps only its low bits: values are drawn to fit the narrowest slot.
    let t = a.element_type();
    let bits = u64::from(t.bit_width().unwrap_or(8))
        .min(there.source_plan().element_bits())
        .min(there.destination_plan().element_bits());
    let width = (to_logical.destination_plan().element_bits() / 8).max(1) as usize;
    let count = to_logical.destination_bytes() / width;
    let mut values = Vec::with_capacity(count * width);
    for i in 0..count as u128 {
        let raw = i.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835) >> 17;
        let value = if bits >= 128 {
            raw
        } else {
            let low = raw & ((1u128 << bits) - 1);
            let negative = t.is_signed_integral() && low >> (bits - 1) == 1;
            if negative {
                low | !((1u128 << bits) - 1)
            } else {
                low
            }
        };
        values.extend_from_slice(&value.to_le_bytes()[..width]);
    }
    let Ok(from_logical) = Relayout::new(&logical, a) else {
        return false;
    };
    let mut src = vec![0; from_logical.destination_bytes()];
    from_logical
        .run_reference(&values, &mut src)
        .expect("buffer lengths from the plan");
    let mut fast = vec![0xA5; there.destination_bytes()];
    let mut reference = vec![0x5A; there.destination_bytes()];
    there
        .run(&src, &mut fast)
        .expect("buffer lengths from the plan");
    there
        .run_reference(&src, &mut reference)
        .expect("buffer lengths from the plan");
    assert!(fast == reference, "fast path differs from the reference");
    // Cut into pieces on several threads (2 to 5, from the array's size): the same bytes.
    let mut pieces = vec![0x3C; there.destination_bytes()];
    there
        .run_in_parts(&src, &mut pieces, 2 + there.destination_bytes() % 4)
        .expect("buffer lengths from the plan");
    assert!(pieces == reference, "the fast path in pieces differs");
    let mut round = vec![0; back.destination_bytes()];
    back.run(&fast, &mut round)
        .expect("buffer lengths from the plan");
    let after = to_logical.to_vec(&round).expect("a logical copy");
    let before = values;
    assert!(before == after, "A -> B -> A lost elements");
    true
}

/// Rebuilds a program shape's parameters from the shapes a streamed read hands on in
/// order: `Some(i)` for parameter `i` (a new one when `i` is past the end), `None` for
/// the result; a shape at path `[]` is the part itself, any other goes into the part's
/// tuple ([`insert_leaf`]).
fn put_program_leaf(
    parameters: &mut Vec<ShapeProto>,
    result: &mut Option<ShapeProto>,
    part: Option<usize>,
    path: &[usize],
    leaf: ShapeProto,
) {
    let tuple = ShapeProto {
        element_type: xla_shape::proto::PrimitiveType::Tuple as i32,
        ..Default::default()
    };
    let slot = match part {
        Some(i) => {
            assert!(i <= parameters.len(), "parameter {i} out of order");
            if i == parameters.len() {
                parameters.push(tuple);
            } else {
                assert!(!path.is_empty(), "parameter {i} given twice");
            }
            &mut parameters[i]
        }
        None => result.get_or_insert(tuple),
    };
    if path.is_empty() {
        *slot = leaf;
    } else {
        insert_leaf(slot, path, leaf);
    }
}

/// The parameter index of a part of a program shape, `None` for the result.
fn part_index(part: text::ProgramPart) -> Option<usize> {
    match part {
        text::ProgramPart::Parameter(i) => Some(i),
        text::ProgramPart::Result => None,
    }
}

/// A program shape's text read a shape at a time (`text::parse_program_shape_leaves`)
/// gives the parameters and result of the whole parse, opened into their tuples, and
/// the whole parse's error.
pub fn program_leaves_agree(input: &str, options: ParseOptions) {
    let whole = text::parse_program_shape_with(input, options);
    let (mut parameters, mut result) = (Vec::new(), None);
    let streamed =
        text::parse_program_shape_leaves(input, options, &mut |part, path, span, leaf| {
            assert!(input.get(span.clone()).is_some(), "{input:?} {span:?}");
            put_program_leaf(&mut parameters, &mut result, part_index(part), path, leaf);
        });
    match (whole, streamed) {
        (Ok(program), Ok(n)) => {
            assert_eq!(n, program.parameters.len(), "{input:?}");
            assert_eq!(program.parameters, parameters, "{input:?}");
            assert_eq!(program.result, result, "{input:?}");
        }
        (Err(a), Err(b)) => assert_eq!(
            (a.message(), a.span()),
            (b.message(), b.span()),
            "{input:?}"
        ),
        (a, b) => panic!("{input:?}: {a:?} vs {b:?}"),
    }
}

/// A binary program shape decoded a parameter at a time with no unknown field
/// (`codec::decode_clean_program_shape_leaves`) gives the whole decode's parameters,
/// result and count of names when the parameters and the top level hold no unknown
/// field; it stops (`None`) when they do, and otherwise gives the whole decode's error.
fn program_decode_agrees(bytes: &[u8]) {
    let whole = codec::decode_program_shape(bytes);
    // Checked keeping nothing: the whole decode's error, or none.
    assert_eq!(
        codec::check_program_shape(bytes).err(),
        whole.as_ref().err().cloned()
    );
    // Read clean with every tuple opened: the message when it holds no unknown field,
    // `None` when it holds one (or one comes before its error), else its error.
    let clean = codec::decode_clean_program_shape_tree(
        bytes,
        &mut |_, _, _, _| {},
        &mut |_| {},
        &mut |_, _| {},
    );
    match (&whole, clean) {
        (Ok(whole), Ok(clean)) => assert_eq!(
            clean.is_some_and(|c| !c.shell.has_unknown_fields()),
            !whole.has_unknown_fields(),
            "{whole:?}"
        ),
        (Err(a), Err(b)) => assert_eq!(*a, b),
        (Err(_), Ok(None)) => {}
        (a, b) => panic!("whole {a:?}, clean {b:?}"),
    }
    let (mut parameters, mut result) = (Vec::new(), None);
    let streamed = codec::decode_clean_program_shape_leaves(bytes, &mut |part, path, _, leaf| {
        put_program_leaf(&mut parameters, &mut result, part_index(part), path, leaf);
    });
    match (whole, streamed) {
        (Err(a), Err(b)) => assert_eq!(a, b),
        (Err(_), Ok(None)) => {}
        (Ok(whole), Ok(None)) => {
            // It stops at an unknown field outside the result, or inside a result it
            // opens (a plain tuple), below the result's own fields.
            let result = Some(&xla_shape::Segment::Field("result"));
            let opened = whole.message.result.as_ref().is_some_and(|r| {
                r.element_type == xla_shape::proto::PrimitiveType::Tuple as i32
                    && !r.tuple_shapes.is_empty()
                    && r.dimensions.is_empty()
                    && r.layout.is_none()
                    && r.is_dynamic_dimension.is_empty()
            });
            assert!(
                whole.unknown_fields().iter().any(|field| {
                    let segments = field.path.segments();
                    segments.first() != result || (opened && segments.len() > 1)
                }),
                "stopped on a clean message: {whole:?}"
            );
        }
        (Ok(whole), Ok(Some(streamed))) => {
            assert_eq!(whole.message.parameters, parameters);
            assert_eq!(streamed.parameters, parameters.len());
            assert_eq!(streamed.names, whole.message.parameter_names.len());
            // A result given once as a plain tuple is handed on a shape at a time.
            assert_eq!(streamed.result_streamed, result.is_some());
            if streamed.result_streamed {
                assert_eq!(streamed.shell.message.result, None);
                assert_eq!(whole.message.result, result);
            } else {
                assert_eq!(whole.message.result, streamed.shell.message.result);
            }
            // Every unknown field is the result's.
            assert_eq!(
                whole.unknown_fields().len(),
                streamed.shell.unknown_fields().len()
            );
            let mut shell = whole;
            shell.message.parameters.clear();
            shell.message.parameter_names.clear();
            if streamed.result_streamed {
                shell.message.result = None;
            }
            assert_eq!(
                codec::encode_any(&shell.into()),
                codec::encode_any(&streamed.shell.into())
            );
        }
        (a, b) => panic!("whole {a:?}, streamed {b:?}"),
    }
}

/// A binary program shape read with every tuple opened, its parts' too
/// (`codec::decode_program_shape_tree`), gives the whole decode's error, or its message
/// rebuilt from the leaves, the tuples' own fields and the shell; the own fields told
/// when a tuple is entered are those it is left with.
fn program_tree_agrees(bytes: &[u8]) {
    use xla_shape::codec::TreeEvent;
    let whole = codec::decode_program_shape(bytes);
    let parts = std::cell::RefCell::new((Vec::new(), None::<ShapeProto>));
    let open = std::cell::RefCell::new(Vec::<Vec<usize>>::new());
    let streamed = codec::decode_program_shape_tree(
        bytes,
        &mut |part, path, _, leaf| {
            let (parameters, result) = &mut *parts.borrow_mut();
            put_program_leaf(parameters, result, part_index(part), path, leaf.message);
        },
        &mut |event| {
            let (parameters, result) = &mut *parts.borrow_mut();
            match event {
                TreeEvent::Enter(path, own) => {
                    assert!(own.tuple_shapes.is_empty());
                    let (part, inner) = codec::program_part(path);
                    put_program_leaf(parameters, result, part_index(part), inner, own.clone());
                    open.borrow_mut().push(path.to_vec());
                }
                TreeEvent::Leave(path, shell, _) => {
                    assert_eq!(open.borrow_mut().pop().as_deref(), Some(path));
                    let (part, inner) = codec::program_part(path);
                    let mut at = match part_index(part) {
                        Some(i) => &mut parameters[i],
                        None => result.as_mut().expect("the result was entered"),
                    };
                    for &i in inner {
                        at = &mut at.tuple_shapes[i];
                    }
                    let elements = std::mem::take(&mut at.tuple_shapes);
                    assert_eq!(*at, shell, "the own fields read ahead at {path:?}");
                    at.tuple_shapes = elements;
                }
            }
        },
        &mut |_, _| {},
    );
    match (whole, streamed) {
        (Err(a), Err(b)) => assert_eq!(a, b),
        (Ok(whole), Ok(streamed)) => {
            assert!(open.borrow().is_empty());
            let (parameters, result) = parts.into_inner();
            assert_eq!(whole.message.parameters, parameters);
            assert_eq!(streamed.parameters, parameters.len());
            match streamed.result_streamed {
                true => assert_eq!(whole.message.result, result),
                false => assert_eq!(whole.message.result, streamed.shell.message.result),
            }
        }
        (a, b) => panic!("whole {a:?}, streamed {b:?}"),
    }
}

/// JSON read as a program shape with every tuple of its parts opened
/// (`json::program_shape_from_json_tree`) gives the whole read's error, or its message
/// rebuilt from the leaves and the tuples' own fields.
fn json_program_tree_agrees(bytes: &[u8]) {
    use xla_shape::json::ProtoJson;
    let options = json::ParseOptions::new();
    let whole = ProgramShapeProto::from_json_slice(bytes, &options);
    let parts = std::cell::RefCell::new((Vec::new(), None::<ShapeProto>));
    let mut names = Vec::new();
    let streamed = json::program_shape_from_json_tree(
        bytes,
        &options,
        &mut |part, path, leaf| {
            let (parameters, result) = &mut *parts.borrow_mut();
            put_program_leaf(parameters, result, part_index(part), path, leaf);
        },
        &mut |part, path, shell| {
            let (parameters, result) = &mut *parts.borrow_mut();
            let tuple = ShapeProto {
                element_type: xla_shape::proto::PrimitiveType::Tuple as i32,
                ..Default::default()
            };
            match shell {
                None => put_program_leaf(parameters, result, part_index(part), path, tuple),
                Some(shell) => {
                    let root = match part_index(part) {
                        Some(i) => &mut parameters[i],
                        None => result.as_mut().expect("the result was entered"),
                    };
                    set_own_fields(root, path, shell);
                }
            }
        },
        &mut |i, name| names.push((i, name.to_string())),
    );
    match (whole, streamed) {
        (Ok(program), Ok(streamed)) => {
            let (parameters, result) = parts.into_inner();
            assert_eq!(program.parameters, parameters);
            let named: Vec<_> = names.into_iter().map(|(_, name)| name).collect();
            assert_eq!(program.parameter_names, named);
            match streamed.result_streamed {
                true => assert_eq!(program.result, result),
                false => assert_eq!(program.result, streamed.result),
            }
        }
        (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
        (a, b) => panic!("{:?}: {a:?} vs {b:?}", String::from_utf8_lossy(bytes)),
    }
}

/// JSON read as a program shape a parameter at a time
/// (`json::program_shape_from_json_leaves`) gives the whole read's parameters, result
/// and count of names, or its error.
pub fn json_program_leaves_agree(bytes: &[u8]) {
    use xla_shape::json::ProtoJson;
    let options = json::ParseOptions::new();
    let whole = ProgramShapeProto::from_json_slice(bytes, &options);
    let (mut parameters, mut result) = (Vec::new(), None);
    let streamed =
        json::program_shape_from_json_leaves(bytes, &options, &mut |part, path, leaf| {
            put_program_leaf(&mut parameters, &mut result, part_index(part), path, leaf);
        });
    match (whole, streamed) {
        (Ok(program), Ok(streamed)) => {
            let input = String::from_utf8_lossy(bytes);
            assert_eq!(program.parameters, parameters, "{input:?}");
            assert_eq!(streamed.parameters, parameters.len(), "{input:?}");
            assert_eq!(streamed.names, program.parameter_names.len(), "{input:?}");
            assert_eq!(streamed.result_streamed, result.is_some(), "{input:?}");
            assert_eq!(program.result, streamed.result.or(result), "{input:?}");
        }
        (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
        (a, b) => panic!("{:?}: {a:?} vs {b:?}", String::from_utf8_lossy(bytes)),
    }
}

/// A program shape converted a shape at a time from `from` into every form and style
/// (`convert::program_shape_to`) gives the bytes or the error of the whole message
/// read and written, and leaves out the unknown fields the whole conversion leaves
/// out (`convert::dropped_fields`).
pub fn program_conversions_agree(from: xla_shape::convert::Form, bytes: &[u8]) {
    use xla_shape::convert::{self, Form};
    use xla_shape::text::HloStyle;
    for (to, hlo_style) in [
        (Form::Binary, HloStyle::Xla),
        (Form::Json, HloStyle::Xla),
        (Form::Hlo, HloStyle::Xla),
        (Form::Hlo, HloStyle::Exact),
    ] {
        let options = convert::Options {
            pretty: bytes.len() % 2 == 0,
            hlo_style,
            ..Default::default()
        };
        let whole = convert::read(from, MessageKind::ProgramShape, bytes, &options);
        let streamed = convert::program_shape_to(from, bytes, to, &options);
        let dropped = match (&whole, to) {
            (Ok(decoded), Form::Json | Form::Hlo) => convert::dropped_fields(decoded),
            _ => (Vec::new(), 0),
        };
        match (
            whole.and_then(|decoded| convert::write(to, &decoded, &options)),
            streamed,
        ) {
            (Ok(a), Ok(b)) => {
                assert_eq!((b.dropped, b.more), dropped, "{to:?} {hlo_style:?}");
                assert_eq!(a, b.output.into_vec().unwrap(), "{to:?} {hlo_style:?}");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("{to:?} {hlo_style:?}: whole {a:?}, streamed {b:?}"),
        }
    }
}

/// A program shape listed a part at a time (every tuple part a shape at a time, as a
/// long one is) gives the whole listing's entries (roles, texts, shapes and sizes) in
/// both styles, or its error.
pub fn program_listing_agrees(form: xla_shape::report::Form, bytes: &[u8]) {
    use xla_shape::guard::listing::{self, ReadOptions, Source};
    use xla_shape::text::HloStyle;
    if bytes.is_empty() {
        // Refused before it is read, however long it is not.
        return;
    }
    for style in [HloStyle::Xla, HloStyle::Exact] {
        let options = ReadOptions {
            source: Source::Form(form),
            message: Some(MessageKind::ProgramShape),
            style,
        };
        let whole = listing::read_bytes("p", bytes, &options);
        let Some(parts) = listing::program_entries_by_parts(form, bytes, style, 0) else {
            continue;
        };
        match (whole, parts) {
            (Ok(whole), Ok(parts)) => {
                let whole = &whole[0].entries;
                assert_eq!(whole.len(), parts.len());
                for (a, b) in whole.iter().zip(&parts) {
                    assert_eq!(a.role, b.role);
                    assert_eq!(a.text, b.text);
                    assert_eq!(a.shape(), b.shape(), "{}", a.text);
                    assert_eq!(a.bytes(), b.bytes(), "{}", a.text);
                }
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("whole {a:?}, by parts {b:?}"),
        }
    }
}

/// The four report formats of any input's check, under a hostile name: the JSON report
/// and the SARIF log parse and are the documents the library gives as values; every
/// finding and unreadable input is one SARIF result, each naming its rule by id and
/// index, and SARIF's invocation says whether every input was checked; every GitHub
/// workflow command is one line whose properties hold no bare `:` or `,` and whose
/// data unescapes to the finding's words; the text report has a line per finding.
///
/// The first byte picks the options (strict, a policy, the text style); the name runs
/// to the first NUL (at most 64 bytes, read as UTF-8 with replacements); the rest is
/// the input, checked as `validate` checks it and also given as an unreadable input's
/// reason.
pub fn report_formats(data: &[u8]) {
    use xla_shape::check;
    use xla_shape::report::{self, Document, FileReport, Format};
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let end = rest.iter().take(64).position(|&b| b == 0).unwrap_or(0);
    let name = String::from_utf8_lossy(&rest[..end]).into_owned();
    let bytes = &rest[(end + 1).min(rest.len())..];
    let strict = selector & 1 == 1;
    let mut options = check::Options::default();
    if selector & 2 == 2 {
        let policy =
            "[all]\nmax_array_bytes = 64\nmemory_spaces = [0]\n[entry]\nlayout = \"default\"\n";
        options.policy = Some(std::sync::Arc::new(
            xla_shape::guard::Policy::from_toml(policy).expect("the policy reads"),
        ));
    }
    if selector & 4 == 4 {
        options.hlo_style = text::HloStyle::Exact;
    }
    let checked = check::check_bytes(&name, bytes, &options);
    let reason = String::from_utf8_lossy(&bytes[..bytes.len().min(256)]).into_owned();
    let unreadable = FileReport::unreadable(name.clone(), None, "io_error", reason);
    let document = Document {
        files: vec![checked, unreadable],
        strict,
    };
    let summary = document.summary();
    let findings: usize = document.files.iter().map(|f| f.findings.len()).sum();
    let render = |format| {
        let (mut out, mut errors) = (Vec::new(), Vec::new());
        report::render(format, &document, &mut out, &mut errors).expect("rendered");
        (String::from_utf8(out).expect("UTF-8"), errors)
    };

    let (json, _) = render(Format::Json);
    let json: serde_json::Value = serde_json::from_str(&json).expect("the JSON report parses");
    assert_eq!(json, report::json::to_value(&document));
    assert_eq!(json["files"][0]["path"], name.as_str());

    let (sarif, _) = render(Format::Sarif);
    let sarif: serde_json::Value = serde_json::from_str(&sarif).expect("the SARIF log parses");
    assert_eq!(sarif, report::sarif::to_value(&document).expect("a value"));
    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    let results = run["results"].as_array().expect("results");
    assert_eq!(results.len(), findings + summary.unreadable);
    for result in results {
        let index = result["ruleIndex"].as_u64().expect("a rule index") as usize;
        assert_eq!(rules[index]["id"], result["ruleId"], "{result}");
    }
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["exitCode"], summary.exit_code());
    assert_eq!(invocation["executionSuccessful"], false);
    let notes = invocation["toolExecutionNotifications"]
        .as_array()
        .expect("notes");
    assert_eq!(notes.len(), summary.unreadable);

    let (github, _) = render(Format::Github);
    let mut words = Vec::new();
    for file in &document.files {
        if let Some(u) = &file.unreadable {
            words.push(u.message.clone());
        }
        file.findings
            .try_for_each(
                |e| e,
                |f| {
                    words.push(format!("{}{}", f.path_and_message(), f.context()));
                    Ok(())
                },
            )
            .expect("findings read back");
    }
    assert!(!github.contains('\r'));
    let lines: Vec<&str> = github.lines().collect();
    assert_eq!(lines.len(), words.len(), "{github}");
    for (line, said) in lines.iter().zip(&words) {
        let command = line.strip_prefix("::").expect("a workflow command");
        let (head, data) = command.split_once("::").expect("properties, then data");
        let (level, properties) = head.split_once(' ').expect("a level and properties");
        assert!(["error", "warning"].contains(&level), "{line}");
        for property in properties.split(',') {
            let (key, value) = property.split_once('=').expect("key=value");
            assert!(["file", "line", "col", "title"].contains(&key), "{line}");
            assert!(!value.contains(':'), "{line}");
        }
        assert_eq!(&unescape_data(data), said, "{line}");
    }

    let (text, errors) = render(Format::Text);
    if !name.contains(['\n', '\r']) {
        assert_eq!(text.lines().count(), findings, "{text}");
    }
    assert!(!errors.is_empty());
}

/// Workflow-command data read back: `%25`, `%0D` and `%0A` in one pass.
fn unescape_data(data: &str) -> String {
    let mut out = String::with_capacity(data.len());
    let mut rest = data;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let (said, len) = match rest.get(at..at + 3) {
            Some("%25") => ('%', 3),
            Some("%0D") => ('\r', 3),
            Some("%0A") => ('\n', 3),
            _ => panic!("a bare % in workflow-command data: {data}"),
        };
        out.push(said);
        rest = &rest[at + len..];
    }
    out.push_str(rest);
    out
}

/// The shapes the `npy` target reads files as, picked by the input's first byte.
pub const NPY_SHAPES: &[&str] = &[
    "f32[2,3]{1,0}",
    "f32[2,3]{0,1:T(2)}",
    "bf16[4]{0}",
    "s4[3]{0:E(4)}",
    "u4[2,2]{0,1}",
    "pred[2,2]{0,1}",
    "c64[2]{0}",
    "s8[0,3]{1,0}",
    "f64[]",
    "u16[3,1,2]{2,0,1}",
    "f8e4m3fn[5]{0}",
    "c128[1,2]{0,1}",
];

/// Any bytes read as an `.npy` file of a shape ([`NPY_SHAPES`], picked by the first
/// byte): an error or a buffer of the shape's allocated size, never a panic; a file
/// that reads writes back (`to_npy`, C order, little-endian) to a file that reads as
/// the same buffer, and that file is a fixed point.
pub fn npy(data: &[u8]) {
    use xla_shape::relayout::npy::{from_npy, to_npy};
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let text = NPY_SHAPES[usize::from(selector) % NPY_SHAPES.len()];
    let proto = text::parse_shape(text).expect("a shape");
    let shape = validate::validate_shape_with(&proto, Options::hlo_text())
        .into_result()
        .expect("a valid shape");
    let array = shape.as_array().expect("an array");
    let Ok(buffer) = from_npy(array, bytes) else {
        return;
    };
    let size = LayoutPlan::allocated_bytes_of(array).expect("a size");
    assert_eq!(buffer.len() as u64, size, "{text}");
    let written = to_npy(array, &buffer).expect("written");
    let back = from_npy(array, &written).expect("what it wrote reads");
    assert_eq!(back, buffer, "{text}");
    assert_eq!(
        to_npy(array, &back).expect("written again"),
        written,
        "{text}"
    );
}
