//! `xla-shape convert`: a faithful codec between the binary, JSON and HLO text forms.
//!
//! Every conversion is `read` (input form → [`Decoded<AnyMessage>`]) then `write`
//! (→ output form), one match arm per form in each, so a form plugs in by filling
//! its two arms. Nothing is validated: the only failures are input that cannot be
//! read and values the target form cannot express.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use xla_shape::codec::{self, Decoded};
use xla_shape::text::HloStyle;
use xla_shape::{json, text};
use xla_shape::{AnyMessage, MessageKind};

use super::input::{Source, TextForm};
use super::{Failure, HloStyleArg, MessageArg, OutputArg};

/// Convert one message between forms (binary, JSON, HLO text); no validation.
///
/// HLO text output is what XLA prints for the message, unless `--hlo-style exact` asks
/// for the lossless text. Binary output is not written to a terminal: use `-o` or a pipe.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    xla-shape convert --from binary --to json examples/f32_2x3.binpb\n  \
    xla-shape convert --from hlo --to json 'bf16[8,128]{1,0:T(8,128)(2,1)}'\n  \
    xla-shape convert --from binary --to hlo --hlo-style exact examples/legacy_padded.binpb\n  \
    xla-shape convert --from hlo --to binary -o shape.binpb --text 'f32[2,3]'")]
pub struct ConvertArgs {
    /// The form of the input.
    #[arg(long, value_enum)]
    from: Form,
    /// The form to write.
    #[arg(long, value_enum)]
    to: Form,
    /// Which message the input holds.
    #[arg(long, value_enum, default_value_t)]
    message: MessageArg,
    /// HLO text output: XLA's text, or the lossless text.
    #[arg(long, value_enum, default_value_t)]
    hlo_style: HloStyleArg,
    /// JSON output keys: lowerCamelCase json names or the proto field names.
    #[arg(long, value_enum, default_value_t)]
    json_names: JsonNames,
    /// Indent JSON output.
    #[arg(long)]
    pretty: bool,
    /// Skip JSON keys the schema does not know instead of refusing them.
    #[arg(long)]
    ignore_unknown_fields: bool,
    /// The message itself, in the --from form (hlo or json); never read as a path.
    #[arg(long, value_name = "TEXT", conflicts_with = "input")]
    text: Option<String>,
    #[command(flatten)]
    output: OutputArg,
    /// The input file; `-` or absent reads standard input. With --from hlo or json, text
    /// that names no file is the message itself.
    input: Option<PathBuf>,
}

/// A form a message can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Form {
    /// The protobuf wire format: exactly the serialized message.
    Binary,
    /// The proto3 JSON mapping.
    Json,
    /// XLA's HLO text form.
    Hlo,
}

/// `--json-names`: the keys of JSON output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum JsonNames {
    /// lowerCamelCase json names (`elementType`), the proto3 JSON default.
    #[default]
    Camel,
    /// The `.proto` field names (`element_type`).
    Proto,
}

/// Options of reading and writing, from the command line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// `--json-names`.
    pub json_names: JsonNames,
    /// `--pretty`.
    pub pretty: bool,
    /// `--ignore-unknown-fields`.
    pub ignore_unknown_fields: bool,
    /// `--hlo-style`.
    pub hlo_style: HloStyle,
}

pub fn run(args: ConvertArgs) -> Result<(), Failure> {
    if args.to == Form::Binary && args.output.file().is_none() && std::io::stdout().is_terminal() {
        return Err(Failure::unreadable(
            "binary output is not written to a terminal: use -o FILE, or a pipe (| xxd)",
        ));
    }
    let form = match args.from {
        Form::Binary => TextForm::None,
        Form::Json => TextForm::Json,
        Form::Hlo => TextForm::Hlo,
    };
    if args.text.is_some() && form == TextForm::None {
        return Err(Failure::unreadable(
            "--text gives text: use it with --from hlo or --from json",
        ));
    }
    let source = Source::resolve(args.input.as_deref(), args.text.as_deref(), form)?;
    let input = source.read()?;
    let name = input.name.as_str();
    let options = Options {
        json_names: args.json_names,
        pretty: args.pretty,
        ignore_unknown_fields: args.ignore_unknown_fields,
        hlo_style: args.hlo_style.into(),
    };
    let named = |failure| match failure {
        Failure::Unreadable(message) => Failure::Unreadable(format!("{name}: {message}")),
        other => other,
    };
    let kind: MessageKind = args.message.into();
    if args.from == Form::Hlo && args.to == Form::Binary && kind == MessageKind::Shape {
        // A top-level tuple is encoded element by element, never built whole.
        let output = hlo_shape_to_binary(&input.bytes).map_err(named)?;
        return args.output.write(&output);
    }
    let decoded = read(args.from, kind, &input.bytes, &options).map_err(named)?;
    let output = write(args.to, &decoded, &options).map_err(named)?;
    // Neither proto3 JSON nor XLA's text has a form for unknown fields (Google's JSON
    // printers and XLA drop them): say so, so that nothing is lost silently.
    let dropped_by = match (args.to, options.hlo_style) {
        (Form::Json, _) => Some("JSON"),
        (Form::Hlo, HloStyle::Xla) => Some("XLA's text"),
        _ => None,
    };
    if let Some(target) = dropped_by {
        for field in decoded.unknown_fields() {
            let at = at(&field.path);
            eprintln!(
                "xla-shape: warning: {name}: {at}unknown field {} is not written: {target} has no form for it",
                field.number
            );
        }
    }
    args.output.write(&output)
}

/// Reads a message of `kind` in `form`. A failure's message is the reason alone;
/// `run` puts the input's name in front.
pub fn read(
    form: Form,
    kind: MessageKind,
    bytes: &[u8],
    options: &Options,
) -> Result<Decoded<AnyMessage>, Failure> {
    match form {
        Form::Binary => codec::decode_any(kind, bytes).map_err(Failure::unreadable),
        Form::Hlo => read_hlo(kind, bytes),
        Form::Json => read_json(kind, bytes, options),
    }
}

/// Writes a message in `form`. A failure's message is the reason alone.
pub fn write(
    form: Form,
    decoded: &Decoded<AnyMessage>,
    options: &Options,
) -> Result<Vec<u8>, Failure> {
    match form {
        Form::Binary => Ok(codec::encode_any(decoded)),
        Form::Hlo => write_hlo(decoded, options.hlo_style),
        Form::Json => Ok(write_json(decoded, options)),
    }
}

/// Proto3 JSON in; errors name the field path, line and column.
fn read_json(
    kind: MessageKind,
    bytes: &[u8],
    options: &Options,
) -> Result<Decoded<AnyMessage>, Failure> {
    let parse = json::ParseOptions::new().ignore_unknown_fields(options.ignore_unknown_fields);
    json::from_json(kind, bytes, &parse)
        .map(|message| Decoded {
            message,
            unknown: codec::UnknownFields::new(),
        })
        .map_err(Failure::unreadable)
}

/// Proto3 JSON out, with a final newline. Unknown fields are dropped, as Google's
/// JSON printers drop them.
fn write_json(decoded: &Decoded<AnyMessage>, options: &Options) -> Vec<u8> {
    let names = match options.json_names {
        JsonNames::Camel => json::FieldNames::Json,
        JsonNames::Proto => json::FieldNames::Proto,
    };
    let print = json::PrintOptions::new()
        .field_names(names)
        .pretty(options.pretty);
    let mut out = json::to_json(&decoded.message, &print);
    out.push('\n');
    out.into_bytes()
}

/// HLO text in: the whole input is one message (surrounding whitespace allowed);
/// errors show the input with a caret.
fn read_hlo(kind: MessageKind, bytes: &[u8]) -> Result<Decoded<AnyMessage>, Failure> {
    let input = std::str::from_utf8(bytes)
        .map_err(|e| Failure::unreadable(format!("hlo text is not UTF-8: {e}")))?;
    let message =
        text::parse_message(kind, input).map_err(|e| Failure::unreadable(e.render(input)))?;
    let depth = text::message_depth(&message);
    if depth > codec::wire::RECURSION_LIMIT as usize {
        return Err(Failure::unreadable(format!(
            "the shape nests {depth} messages deep; protobuf runtimes (and this codec) read at most {}",
            codec::wire::RECURSION_LIMIT
        )));
    }
    Ok(Decoded {
        message,
        unknown: codec::UnknownFields::new(),
    })
}

/// HLO text of a shape straight to binary, a top-level tuple one element at a time:
/// the same bytes as [`read_hlo`] then [`codec::encode_any`], in the memory of the
/// input, the output and one element (a 200 MB one-line tuple built whole took 25
/// times its size).
fn hlo_shape_to_binary(bytes: &[u8]) -> Result<Vec<u8>, Failure> {
    use codec::wire::{put_tag, put_varint, WireType};
    let input = std::str::from_utf8(bytes)
        .map_err(|e| Failure::unreadable(format!("hlo text is not UTF-8: {e}")))?;
    let mut out = Vec::new();
    put_tag(&mut out, 2, WireType::Varint);
    put_varint(&mut out, xla_shape::proto::PrimitiveType::Tuple as u64);
    let limit = codec::wire::RECURSION_LIMIT as usize;
    let mut deepest = 0;
    let streamed = text::parse_shape_streaming(
        input,
        text::ParseOptions::default(),
        &mut |_, _, element| {
            let element = AnyMessage::Shape(element);
            deepest = deepest.max(text::message_depth(&element) + 1);
            if deepest <= limit {
                let body = codec::encode_any(&Decoded {
                    message: element,
                    unknown: codec::UnknownFields::new(),
                });
                put_tag(&mut out, 4, WireType::LengthDelimited);
                put_varint(&mut out, body.len() as u64);
                out.extend_from_slice(&body);
            }
        },
    )
    .map_err(|e| Failure::unreadable(e.render(input)))?;
    let message = match streamed {
        text::Streamed::Tuple { .. } => None,
        text::Streamed::Shape(shape) => Some(AnyMessage::Shape(shape)),
    };
    if let Some(message) = &message {
        deepest = text::message_depth(message);
    }
    if deepest > limit {
        return Err(Failure::unreadable(format!(
            "the shape nests {deepest} messages deep; protobuf runtimes (and this codec) read at most {limit}"
        )));
    }
    Ok(match message {
        Some(message) => codec::encode_any(&Decoded {
            message,
            unknown: codec::UnknownFields::new(),
        }),
        None => out,
    })
}

/// HLO text out, one line. In XLA's style, unknown fields are dropped (the caller
/// warns); the lossless style refuses them, as it refuses every value its text cannot
/// carry back.
fn write_hlo(decoded: &Decoded<AnyMessage>, style: HloStyle) -> Result<Vec<u8>, Failure> {
    if style == HloStyle::Exact {
        if let Some(field) = decoded.unknown_fields().first() {
            return Err(Failure::unreadable(format!(
                "{}unknown field {} has no text form (--hlo-style xla drops it with a warning)",
                at(&field.path),
                field.number
            )));
        }
    }
    let mut out = style
        .print_message(&decoded.message)
        .map_err(Failure::unreadable)?;
    out.push('\n');
    Ok(out.into_bytes())
}

/// `PATH: ` in front of a message, or nothing for the message itself (no empty segment).
fn at(path: &xla_shape::Path) -> String {
    if path.is_root() {
        String::new()
    } else {
        format!("{path}: ")
    }
}
