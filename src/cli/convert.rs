//! `xla-shape convert`: a faithful codec between the binary, JSON and HLO text forms.
//!
//! Argument parsing and wiring only: the codec is the library's (`xla_shape::convert`).

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use xla_shape::convert;
use xla_shape::text::HloStyle;

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

/// Binary and JSON shapes and program shapes of any form at least this long are
/// converted a shape at a time when they can be ([`convert::binary_shape_to_binary`],
/// [`convert::json_shape_to`], [`convert::program_shape_to`]).
const STREAMED_MESSAGE: usize = xla_shape::LONG_INPUT;

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
    let options = convert::Options {
        json_names: args.json_names.into(),
        pretty: args.pretty,
        ignore_unknown_fields: args.ignore_unknown_fields,
        hlo_style: args.hlo_style.into(),
    };
    let named = |failure| match failure {
        Failure::Unreadable(message) => Failure::Unreadable(format!("{name}: {message}")),
        other => other,
    };
    if args.from == Form::Hlo && args.to == Form::Binary && args.message == MessageArg::Shape {
        // A top-level tuple is encoded element by element, never built whole.
        let output = convert::hlo_shape_to_binary(&input.bytes)
            .map_err(|e| named(Failure::unreadable(e)))?;
        return args.output.write_spool(output);
    }
    if args.from == Form::Hlo && args.to != Form::Binary && args.message == MessageArg::Shape {
        // A top-level tuple is printed element by element, never built whole.
        let output = convert::hlo_shape_to_text(&input.bytes, args.to.into(), &options)
            .map_err(|e| named(Failure::unreadable(e)))?;
        return args.output.write_spool(output);
    }
    if args.from == Form::Binary
        && args.message == MessageArg::Shape
        && input.bytes.len() >= STREAMED_MESSAGE
    {
        // A top-level tuple is converted element by element, never held whole; its
        // unknown fields are kept (binary), dropped with a warning (JSON, XLA's text)
        // or refused (the lossless text).
        let streamed = match args.to {
            Form::Binary => convert::binary_shape_to_binary(&input.bytes).map(|r| {
                r.map(|output| convert::Dropping {
                    output,
                    dropped: Vec::new(),
                    more: 0,
                })
            }),
            to => convert::binary_shape_to_text_dropping_unknown(&input.bytes, to.into(), &options),
        };
        if let Some(converted) = streamed {
            let converted = converted.map_err(|e| named(Failure::unreadable(e)))?;
            warn_dropped(name, args.to, &converted.dropped, converted.more);
            return args.output.write_spool(converted.output);
        }
    }
    if args.from == Form::Json
        && args.message == MessageArg::Shape
        && input.bytes.len() >= STREAMED_MESSAGE
    {
        // A plain top-level tuple is converted a shape at a time, never held whole.
        if let Some(output) = convert::json_shape_to(&input.bytes, args.to.into(), &options) {
            let output = output.map_err(|e| named(Failure::unreadable(e)))?;
            return args.output.write_spool(output);
        }
    }
    if args.message == MessageArg::ProgramShape && input.bytes.len() >= STREAMED_MESSAGE {
        // A program shape is converted a shape at a time, never held whole; its unknown
        // fields are kept (binary), dropped with a warning (JSON, XLA's text) or refused
        // (the lossless text).
        let converted =
            convert::program_shape_to(args.from.into(), &input.bytes, args.to.into(), &options)
                .map_err(|e| named(Failure::unreadable(e)))?;
        warn_dropped(name, args.to, &converted.dropped, converted.more);
        return args.output.write_spool(converted.output);
    }
    let decoded = convert::read(
        args.from.into(),
        args.message.into(),
        &input.bytes,
        &options,
    )
    .map_err(|e| named(Failure::unreadable(e)))?;
    let output = convert::write(args.to.into(), &decoded, &options)
        .map_err(|e| named(Failure::unreadable(e)))?;
    // Neither proto3 JSON nor XLA's text has a form for unknown fields (Google's JSON
    // printers and XLA drop them): say so, so that nothing is lost silently.
    if args.to == Form::Json || options.hlo_style == HloStyle::Xla {
        let (dropped, more) = convert::dropped_fields(&decoded);
        warn_dropped(name, args.to, &dropped, more);
    }
    args.output.write(&output)
}

/// Says which unknown fields a conversion into JSON or XLA's text (`to`) left out:
/// those `dropped`, and how many `more`.
fn warn_dropped(name: &str, to: Form, dropped: &[xla_shape::codec::UnknownFieldInfo], more: usize) {
    let target = match to {
        Form::Json => "JSON",
        Form::Hlo => "XLA's text",
        Form::Binary => return,
    };
    for field in dropped {
        let at = convert::at(&field.path);
        eprintln!(
            "xla-shape: warning: {name}: {at}unknown field {} is not written: {target} has no form for it",
            field.number
        );
    }
    if more > 0 {
        eprintln!(
            "xla-shape: warning: {name}: {more} more unknown fields are not written: {target} has no form for them (not listed one by one)"
        );
    }
}

impl From<Form> for convert::Form {
    fn from(form: Form) -> Self {
        match form {
            Form::Binary => convert::Form::Binary,
            Form::Json => convert::Form::Json,
            Form::Hlo => convert::Form::Hlo,
        }
    }
}

impl From<JsonNames> for convert::JsonNames {
    fn from(names: JsonNames) -> Self {
        match names {
            JsonNames::Camel => convert::JsonNames::Camel,
            JsonNames::Proto => convert::JsonNames::Proto,
        }
    }
}
