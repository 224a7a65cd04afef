"""The API on the real fixtures: the values XLA and Google's protobuf runtime
recorded in fixtures/ (see fixtures/README.md), the same the Rust tests check."""

import json
import pathlib

import pytest

import xla_shape
from conftest import FIXTURES, jsonl, module_files

MESSAGES = jsonl("messages.jsonl")
HLO_SHAPES = jsonl("hlo_shapes.jsonl")
JSON_INPUTS = jsonl("json_inputs.jsonl")


def test_fixtures_are_there():
    assert len(MESSAGES) >= 1000
    assert len(HLO_SHAPES) >= 1000
    assert len(JSON_INPUTS) >= 100
    assert len(module_files()) >= 40


def test_hlo_shapes_convert_as_xla_parses_and_prints():
    checked = rejected = 0
    for row in HLO_SHAPES:
        text = row["text"]
        if not row["ok"]:
            with pytest.raises(xla_shape.ParseError) as caught:
                xla_shape.convert(text, "hlo", "binary")
            assert caught.value.text == text
            start, end = caught.value.span
            assert 0 <= start <= end <= len(text.encode())
            assert caught.value.rendered.startswith(caught.value.message)
            rejected += 1
            continue
        if row.get("xla_hex"):
            assert xla_shape.convert(text, "hlo", "binary").hex() == row["xla_hex"], text
        if row.get("xla_text"):
            assert xla_shape.convert(text, "hlo", "hlo") == row["xla_text"], text
        checked += 1
    assert checked >= 1000 and rejected >= 90


def test_shape_parse_matches_xla_text_and_bytes():
    valid = 0
    for row in HLO_SHAPES:
        if not row["ok"]:
            continue
        try:
            shape = xla_shape.Shape.parse(row["text"])
        except xla_shape.ValidationError as e:
            # XLA's parser does not validate a lone array (f32[4]{7} parses); the
            # domain type does.
            assert not e.report.ok and e.report.errors
            continue
        valid += 1
        if row.get("xla_text"):
            assert str(shape) == row["xla_text"]
        if row.get("xla_hex"):
            assert shape.to_proto().hex() == row["xla_hex"], row["text"]
        tiles = shape.layout.tiles if shape.layout else ()
        if not any(xla_shape.COMBINE_DIMENSION in tile for tile in tiles):
            # `*` is HLO text only: XLA's FromProto rejects it.
            assert xla_shape.Shape.from_proto(shape.to_proto()) == shape
            assert xla_shape.Shape.from_json(shape.to_json()) == shape
        assert xla_shape.Shape(repr(shape)[7:-2]) == shape
        again = xla_shape.Shape.parse(shape.to_text("exact"))
        assert again == shape and hash(again) == hash(shape)
    assert valid >= 500


def _kind(row):
    return row["message"]


def test_messages_reencode_as_google_and_xla():
    decoded = 0
    for row in MESSAGES:
        data = bytes.fromhex(row["hex"])
        google = row["google"].get("reserialized_hex_legacy_schema") or row["google"].get(
            "reserialized_hex"
        )
        try:
            out = xla_shape.convert(data, "binary", "binary", _kind(row))
        except xla_shape.DecodeError as e:
            # Google's runtime refuses it too, or the one documented divergence: a
            # 10-byte varint with bits past the 64th, which Google truncates.
            assert google is None or "varint" in str(e), row["id"]
            continue
        assert google is not None, row["id"]
        assert out.hex() == google, row["id"]
        if row["origin"] in ("compiled", "lowered", "hlo-text"):
            assert out == data, row["id"]
        decoded += 1
    assert decoded >= 1000


def test_messages_convert_to_googles_json():
    converted = 0
    for row in MESSAGES:
        google = row["google"]
        legacy = isinstance(google.get("json_camel_legacy_schema"), dict)
        camel = google.get("json_camel_legacy_schema" if legacy else "json_camel")
        proto = google.get("json_proto_legacy_schema" if legacy else "json_proto")
        if camel is None:
            continue
        data = bytes.fromhex(row["hex"])
        try:
            ours = json.loads(xla_shape.convert(data, "binary", "json", _kind(row)))
        except RecursionError:
            continue  # deeper than Python's json module reads
        assert ours == camel, row["id"]
        if proto is not None:
            text = xla_shape.convert(data, "binary", "json", _kind(row), json_names="proto")
            assert json.loads(text) == proto, row["id"]
        converted += 1
    assert converted >= 1000


def test_shapes_from_proto_as_xla_reads_them():
    accepted = rejected = 0
    for row in MESSAGES:
        if row["message"] != "shape" or row["xla"]["accepts"] is None:
            continue
        data = bytes.fromhex(row["hex"])
        if row["xla"]["accepts"]:
            if row["origin"] == "legacy":
                continue  # the retired fields' own rules are stricter than today's XLA
            report = xla_shape.validate(data, "binary", "shape")
            if not report.ok:
                # Only the crate's own size checks, which XLA does not make (the size in
                # bits of E(n), the tiled allocation: docs/report.md).
                errors = {f.code for f in report.findings if f.severity == "error"}
                assert errors <= {"allocated_size_overflow", "byte_size_overflow"}, row["id"]
                continue
            shape = xla_shape.Shape.from_proto(data)
            assert xla_shape.convert(data, "binary", "hlo") == row["xla"]["text"], row["id"]
            if not xla_shape.validate(data, "binary", "shape").warnings:
                # Warnings are what XLA keeps and the domain type normalizes (a -2**63
                # dimension without its dynamic flag is `?`, dynamic).
                assert str(shape) == row["xla"]["text"], row["id"]
                assert shape.to_proto().hex() == row["xla"]["reencoded_hex"], row["id"]
            accepted += 1
        else:
            with pytest.raises((xla_shape.ValidationError, xla_shape.DecodeError)):
                xla_shape.Shape.from_proto(data)
            rejected += 1
    assert accepted >= 200 and rejected >= 50


# Inputs Google's Python parser accepts that the crate refuses on purpose (the Rust
# test tests/json.rs lists why).
DELIBERATE = {
    "enum-fraction",
    "enum-bool",
    "enum-int64-min-string",
    "duplicate-camel-snake",
    "layout-json-name-only",
    "wrong-type-array-for-message",
    "top-level-string",
}


def test_json_inputs_read_as_googles_runtime():
    for row in JSON_INPUTS:
        args = (row["json"], "json", "binary", row["message"])
        options = {"ignore_unknown_fields": row["ignore_unknown_fields"]}
        verdict = row["legacy_schema"] if isinstance(row.get("legacy_schema"), dict) else row
        if row["id"].removesuffix("-ignore-unknown") in DELIBERATE:
            with pytest.raises(xla_shape.DecodeError):
                xla_shape.convert(*args, **options)
        elif verdict["ok"]:
            assert xla_shape.convert(*args, **options).hex() == verdict["hex"], row["id"]
        else:
            with pytest.raises(xla_shape.DecodeError):
                xla_shape.convert(*args, **options)


@pytest.mark.parametrize("path", sorted((FIXTURES / "modules").iterdir()), ids=lambda p: p.name)
def test_modules_validate_and_list_their_shapes(path):
    report = xla_shape.validate(path)
    assert report.ok, report.to_text()
    assert report.form == ("hlo-module-proto" if path.suffix == ".pb" else "hlo-module")
    assert report.findings == []
    sites = xla_shape.shapes(path)
    assert len(sites) == report.shapes > 0
    assert all(site.shape is not None for site in sites)
    # The same through bytes and (for text) str.
    data = path.read_bytes()
    assert xla_shape.validate(data).shapes == report.shapes
    assert [s.text for s in xla_shape.shapes(data)] == [s.text for s in sites]
    if path.suffix == ".txt":
        assert [s.line for s in xla_shape.shapes(data.decode())] == [s.line for s in sites]
        assert all(s.line and s.column and s.path is None for s in sites)
    else:
        assert all(s.path and s.line is None for s in sites)


@pytest.mark.parametrize(
    "stem", sorted({p.name.split(".hlo.")[0] for p in (FIXTURES / "modules").iterdir()})
)
def test_module_text_and_proto_hold_the_same_instruction_shapes(stem):
    def results(path):
        return {
            (s.computation, s.instruction): str(s.shape)
            for s in xla_shape.shapes(path)
            if s.role == "result"
        }

    text = results(FIXTURES / "modules" / f"{stem}.hlo.txt")
    proto = results(FIXTURES / "modules" / f"{stem}.hlo.pb")
    assert text and text == proto


def test_dumps_list_every_instruction_shape():
    dump = FIXTURES / "dumps" / "transposed" / "module_0000.jit_f.cpu_after_optimizations.txt"
    sites = xla_shape.shapes(dump)
    roles = {s.role for s in sites}
    assert {"entry_parameter", "entry_result", "result"} <= roles
    first = sites[0]
    assert (first.line, first.role, first.index) == (1, "entry_parameter", 0)
    assert all(s.shape is not None for s in sites)
