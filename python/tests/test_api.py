"""The API itself: every function, attribute and error, and bad input of every kind."""

import json
import os
import pathlib
import pickle
import subprocess
import sys
import warnings

import pytest

import xla_shape
from conftest import FIXTURES


def test_done_when_example():
    assert xla_shape.Shape.parse("bf16[8,128]{1,0:T(8,128)(2,1)}").byte_size() == 2048


def test_shape_attributes():
    shape = xla_shape.Shape("bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}")
    assert shape.element_type == "bf16"
    assert shape.kind == "array" and shape.is_array and not shape.is_tuple
    assert shape.dimensions == (32, 32, 4096)
    assert shape.rank == 3 and shape.true_rank == 3
    assert shape.dimension_letters == ("z", "y", "x")
    assert shape.is_dynamic is False
    assert shape.tuple_shapes == ()
    layout = shape.layout
    assert layout.minor_to_major == (2, 1, 0)
    assert layout.tiles == ((8, 128), (2, 1))
    assert layout.memory_space == 1
    assert layout.element_size_in_bits == 0
    assert layout.tail_padding_alignment_in_elements == 1
    assert layout.split_configs == ()
    assert layout.padded_dimensions is None
    assert str(layout) == "{2,1,0:T(8,128)(2,1)S(1)}"
    assert layout == xla_shape.Layout.parse("{2,1,0:T(8,128)(2,1)S(1)}")
    assert shape.byte_size() == 32 * 32 * 4096 * 2
    assert shape.element_count() == 32 * 32 * 4096
    assert shape.strides() is None  # the (2,1) tile interleaves rows
    assert str(shape) == "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}"
    assert repr(shape) == 'Shape("bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}")'
    assert "bf16" in shape.explain()


def test_dynamic_tuple_token_buffer():
    shape = xla_shape.Shape("f32[<=4,?,3]")
    assert shape.dimensions == (4, None, 3)
    assert shape.dynamic_dimensions == (True, True, False)
    assert shape.is_dynamic and shape.element_count() is None and shape.byte_size() is None
    tup = xla_shape.Shape("(f32[2]{0}, (s8[], token[]))")
    assert tup.kind == "tuple" and tup.element_type == "tuple"
    assert [str(s) for s in tup.tuple_shapes] == ["f32[2]{0}", "(s8[], token[])"]
    assert tup.tuple_shapes[1].tuple_shapes[1].kind == "token"
    assert tup.dimensions == () and tup.layout is None and tup.byte_size() is None
    with pytest.raises(TypeError):
        tup.strides()
    buf = xla_shape.Shape("b(f32[8]{0})")
    assert buf.kind == "buffer" and buf.element_type == "f32" and buf.dimensions == (8,)
    assert xla_shape.Shape("f32[2,<=3]").true_rank == 2
    assert xla_shape.Shape("f32[1,5,1]").true_rank == 1
    assert xla_shape.Shape("f32[1,2,3,4,5]").dimension_letters is None


def test_indexing_as_the_seeds_and_tiled_layout_doc():
    # docs/tiled_layout.md, figure 1.
    shape = xla_shape.Shape("f32[3,5]{1,0:T(2,2)}")
    assert shape.linear_index((2, 3)) == 17
    assert shape.multi_index(17) == (2, 3)
    assert shape.multi_index(11) is None  # padding
    assert shape.allocated_bytes() == 96
    # The seeds' legacy padded example: [2 x 3] padded to [3,5], minor_to_major {0,1}.
    padded = xla_shape.Shape("f32[2,3]{0,1:PD(3,5)}")
    assert [padded.linear_index((i, j)) for j in range(3) for i in range(2)] == [0, 1, 3, 4, 6, 7]
    assert padded.strides() == (4, 12)
    with pytest.raises(IndexError):
        shape.linear_index((3, 0))
    with pytest.raises(IndexError):
        shape.linear_index((0,))
    with pytest.raises(IndexError):
        shape.multi_index(24)
    with pytest.raises((TypeError, OverflowError)):
        shape.linear_index((-1, 0))
    with pytest.raises(xla_shape.Error):
        xla_shape.Shape("f32[?]").linear_index((0,))
    assert xla_shape.Shape("f32[2,3]{0,1}").element_strides() == (1, 2)
    assert xla_shape.Shape("s4[2,3]{1,0:E(4)}").strides() is None


def test_equality_and_hash():
    a = xla_shape.Shape("f32[2,3]")
    b = xla_shape.Shape.parse("f32[2,3]{1,0}")
    c = xla_shape.Shape("f32[2,3]{0,1}")
    assert a == b and hash(a) == hash(b) and a != c
    assert len({a, b, c}) == 2
    assert a != "f32[2,3]{1,0}"


def test_proto_and_json_round_trips():
    shape = xla_shape.Shape("f32[2,3]")
    assert shape.to_proto().hex() == "100b1a0202032a070a02010080010132020000"
    assert xla_shape.Shape.from_proto(shape.to_proto()) == shape
    assert xla_shape.Shape.from_json(shape.to_json()) == shape
    assert '"element_type"' in shape.to_json(json_names="proto")
    assert shape.to_json(pretty=True).count("\n") > 5


def test_convert_options_and_forms():
    data = bytes.fromhex("100b1a0202032a040a020100")
    assert xla_shape.convert(data, "binary", "hlo") == "f32[2,3]{1,0}"
    assert xla_shape.convert(data, "binary", "binary") == data
    assert xla_shape.convert("{1,0:T(8,128)}", "hlo", "hlo", "layout") == "{1,0:T(8,128)}"
    program = "(a: f32[2], b: s32[])->f32[]"
    assert xla_shape.convert(program, "hlo", "hlo", "program-shape") == "(f32[2]{0}, s32[])->f32[]"
    assert xla_shape.convert(program, "hlo", "hlo", "program_shape", hlo_style="exact") == (
        "(a: f32[2]{0}, b: s32[])->f32[]"
    )
    legacy = xla_shape.convert("f32[2,3]{0,1:PD(3,5)PV(zero)}", "hlo", "binary")
    assert xla_shape.convert(legacy, "binary", "hlo") == "f32[2,3]{0,1}"
    assert xla_shape.convert(legacy, "binary", "hlo", hlo_style="exact") == "f32[2,3]{0,1:PD(3,5)PV(zero)}"


def test_convert_warns_about_dropped_unknown_fields():
    data = bytes.fromhex("100b1a0202032a040a020100") + bytes([0x98, 0x06, 0x07])  # field 99
    with pytest.warns(UserWarning, match="unknown field 99 is not written"):
        assert xla_shape.convert(data, "binary", "hlo") == "f32[2,3]{1,0}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert xla_shape.convert(data, "binary", "binary") == data
    with pytest.raises(xla_shape.Error, match="unknown field 99 has no text form"):
        xla_shape.convert(data, "binary", "hlo", hlo_style="exact")


def test_parse_error_has_the_span_and_caret():
    with pytest.raises(xla_shape.ParseError) as caught:
        xla_shape.Shape.parse("f32[2,3]{0}")
    e = caught.value
    assert isinstance(e, xla_shape.Error) and isinstance(e, ValueError)
    assert e.message == "dimensions size is 2, but minor to major size is 1"
    assert e.span == (8, 11)
    assert e.rendered == str(e) == (
        "dimensions size is 2, but minor to major size is 1\n  f32[2,3]{0}\n          ^^^"
    )


def test_validation_error_carries_the_report():
    with pytest.raises(xla_shape.ValidationError) as caught:
        xla_shape.Shape.from_proto(bytes.fromhex("100b1a0202032a040a020101"))
    report = caught.value.report
    assert isinstance(report, xla_shape.Report) and not report.ok
    (finding,) = report.findings
    assert (finding.code, finding.severity, finding.path) == (
        "duplicate_dimension",
        "error",
        "layout.minor_to_major[1]",
    )
    assert str(caught.value) == f"{finding.path}: {finding.message}"


def test_validate_report_model():
    report = xla_shape.validate("f32[2,3]{1,1}\nf32[2]{0}\n")
    assert not report.ok and report.form == "hlo" and report.shapes == 2
    (finding,) = report.findings
    assert (finding.line, finding.column, finding.shape) == (1, 1, "f32[2,3]{1,1}")
    assert finding.instruction is None and finding.computation is None
    assert str(finding).startswith("<text>:1:1: error[duplicate_dimension]")
    assert len(report) == 1 and list(report) == report.findings == report.errors
    assert report.warnings == []
    assert report.render("json").startswith("{")
    sarif = json.loads(report.render("sarif"))
    assert sarif["version"] == "2.1.0"
    # Every input was checked: the run succeeded, and exits 1 for its finding.
    assert sarif["runs"][0]["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]
    assert report.render("github").startswith("::error")
    with pytest.raises(xla_shape.ValidationError) as caught:
        report.raise_for_errors()
    assert caught.value.report is report
    assert xla_shape.validate("f32[2,3]{1,1}", allow=["duplicate_dimension"]).ok
    warned = xla_shape.validate(bytes.fromhex("100b1a0202032a040a020100") + b"\x98\x06\x07")
    assert warned.ok and warned.warnings and not xla_shape.validate(
        bytes.fromhex("100b1a0202032a040a020100") + b"\x98\x06\x07", strict=True
    ).ok
    xla_shape.validate("f32[2]{0}").raise_for_errors()


def test_validate_module_findings_have_their_place():
    text = (FIXTURES / "modules" / "matmul.hlo.txt").read_text()
    broken = text.replace("f32[2,4]{1,0} dot", "f32[2,4]{1,1} dot", 1)
    assert broken != text
    report = xla_shape.validate(broken)
    assert not report.ok and report.form == "hlo-module"
    finding = report.errors[0]
    assert finding.code == "duplicate_dimension" and finding.line and finding.instruction


def test_validate_with_a_policy(cli, tmp_path):
    module = FIXTURES / "modules" / "matmul.hlo.txt"
    # The shipped example policy, as a path: the real module meets it.
    example = FIXTURES.parent / "examples" / "policy.toml"
    assert xla_shape.validate(module, policy=example).ok
    # The TOML text itself: f32 denied everywhere fires at every f32 array, as the CLI does.
    report = xla_shape.validate(module, policy='[all]\ndeny_element_types = ["f32"]\n')
    assert not report.ok
    codes = {f.code for f in report.errors}
    assert codes == {"policy.deny_element_types"}
    assert all(f.line for f in report.errors)
    assert any(f.computation and f.instruction for f in report.errors)
    policy = tmp_path / "policy.toml"
    policy.write_text('[all]\ndeny_element_types = ["f32"]\n')
    run = cli(["validate", "--format", "json", "--policy", str(policy), str(module)])
    assert run.returncode == 1
    expected = json.loads(run.stdout)["files"][0]["findings"]
    assert [(f.code, f.line, f.column, f.message) for f in report.findings] == [
        (e["code"], e["line"], e["column"], e["message"]) for e in expected
    ]
    # A policy that does not read names what is wrong.
    with pytest.raises(ValueError, match="deny_element_type"):
        xla_shape.validate(module, policy='[all]\ndeny_element_type = ["f32"]\n')
    # One that sets no rule would pass everything: refused too.
    with pytest.raises(ValueError, match="sets no rule"):
        xla_shape.validate(module, policy="[all]\n")
    with pytest.raises(TypeError):
        xla_shape.validate(module, policy=42)
    assert xla_shape.validate("f32[2]{0}", policy=None).ok


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: xla_shape.Shape.parse("f32[2,3"), xla_shape.ParseError),
        (lambda: xla_shape.Shape.parse(""), xla_shape.ParseError),
        (lambda: xla_shape.Shape.parse("L(0)"), xla_shape.ParseError),
        (lambda: xla_shape.Shape.parse("f32[2]{0:L(0)}"), xla_shape.ParseError),
        (lambda: xla_shape.Shape.parse("token[2]"), xla_shape.ParseError),
        (lambda: xla_shape.Shape.parse("f32[2]\0"), xla_shape.ParseError),
        (lambda: xla_shape.Shape.parse("(" * 100000 + "f32[]" + ")" * 100000), xla_shape.Error),
        (lambda: xla_shape.Shape.parse("f32[9223372036854775807,2]"), xla_shape.ValidationError),
        (lambda: xla_shape.Shape.parse(b"f32[2]"), TypeError),
        (lambda: xla_shape.Shape(b"f32[2]"), TypeError),
        (lambda: xla_shape.Shape(None), TypeError),
        (lambda: xla_shape.Shape.from_proto("f32[2]"), TypeError),
        (lambda: xla_shape.Shape.from_proto(b"\xff"), xla_shape.DecodeError),
        (lambda: xla_shape.Shape.from_proto(b"\x0a\x05"), xla_shape.DecodeError),
        (lambda: xla_shape.Shape.from_proto(b""), xla_shape.ValidationError),
        (lambda: xla_shape.Shape.from_proto(b"\x2a" * 1000), xla_shape.DecodeError),
        (lambda: xla_shape.Shape.from_json("{"), xla_shape.DecodeError),
        (lambda: xla_shape.Shape.from_json('{"rank": 2}'), xla_shape.DecodeError),
        (lambda: xla_shape.Shape.from_json('{"elementType": "F32", "dimensions": ["-1"]}'), xla_shape.ValidationError),
        (lambda: xla_shape.convert(b"\x08", "binary", "json"), xla_shape.DecodeError),
        (lambda: xla_shape.convert("f32[2]", "binary", "json"), TypeError),
        (lambda: xla_shape.convert(b"f32[2]", "hlo", "json"), TypeError),
        (lambda: xla_shape.convert("f32[2]", "hlo", "xml"), ValueError),
        (lambda: xla_shape.convert("f32[2]", "text", "hlo"), ValueError),
        (lambda: xla_shape.convert("f32[2]", "hlo", "hlo", "tensor"), ValueError),
        (lambda: xla_shape.convert("f32[2]", "hlo", "json", json_names="snake"), ValueError),
        (lambda: xla_shape.convert("f32[2]", "hlo", "hlo", hlo_style="pretty"), ValueError),
        (lambda: xla_shape.convert("f32[2]", "hlo", "hlo", colour=True), TypeError),
        (lambda: xla_shape.convert("{", "json", "hlo"), xla_shape.DecodeError),
        (lambda: xla_shape.convert("(" * 200 + ")" * 200, "hlo", "binary"), xla_shape.DecodeError),
        (lambda: xla_shape.convert("f32[-5]", "hlo", "hlo"), xla_shape.ParseError),
        (lambda: xla_shape.validate(b""), xla_shape.DecodeError),
        (lambda: xla_shape.validate("hello"), xla_shape.DecodeError),
        (lambda: xla_shape.validate("   \n"), xla_shape.DecodeError),
        (lambda: xla_shape.validate(b"\x0a\x05", "binary"), xla_shape.DecodeError),
        (lambda: xla_shape.validate("f32[2]", "hlo-module-proto"), xla_shape.DecodeError),
        (lambda: xla_shape.validate(12), TypeError),
        (lambda: xla_shape.validate("f32[2]", src="xml"), ValueError),
        (lambda: xla_shape.validate("f32[2]", allow=["no_such_code"]), ValueError),
        (lambda: xla_shape.validate(pathlib.Path("/nonexistent/x.pb")), FileNotFoundError),
        (lambda: xla_shape.validate(FIXTURES), IsADirectoryError),
        (lambda: xla_shape.shapes("f32[2]"), xla_shape.DecodeError),
        (lambda: xla_shape.shapes(b""), xla_shape.DecodeError),
        (lambda: xla_shape.shapes(b"\x0a\x05"), xla_shape.DecodeError),
        (lambda: xla_shape.shapes(3.5), TypeError),
        (lambda: xla_shape.shapes(pathlib.Path("/nonexistent")), FileNotFoundError),
        (lambda: xla_shape.Layout.parse("{1,1}"), xla_shape.ValidationError),
        (lambda: xla_shape.Layout.parse("{1,"), xla_shape.ParseError),
        (lambda: xla_shape.Shape("f32[2]").numpy_dtype if False else xla_shape.Shape("token[]").numpy_dtype, TypeError),
    ],
)
def test_bad_input_raises(call, error):
    with pytest.raises(error):
        call()


def test_an_unknown_allowed_code_is_said_in_a_few_words():
    # The code was echoed whole: a megabyte of error message.
    with pytest.raises(ValueError) as caught:
        xla_shape.validate("f32[2]", allow=["x" * 1_000_000])
    assert "no such code" in str(caught.value) and len(str(caught.value)) < 400


def test_a_shape_over_the_list_limit_is_refused_in_every_form():
    """One shape holds at most 1,048,576 list entries (MAX_LIST_ENTRIES), in every form."""
    rank = 1_048_576 // 3
    fits = "f32[%s]" % ",".join(["1"] * rank)
    assert xla_shape.Shape.parse(fits).rank == rank
    over = "f32[%s]" % ",".join(["1"] * (rank + 1))
    with pytest.raises(xla_shape.ParseError, match="more than 1048576 entries"):
        xla_shape.Shape.parse(over)
    # Field 2 (F32), then field 3 packed: 600,000 dimensions and 600,000 flags.
    ones = b"\x01" * 600_000
    packed = b"\xc0\xcf\x24" + ones
    data = b"\x10\x0b\x1a" + packed + b"\x32" + packed
    with pytest.raises(xla_shape.DecodeError, match="more than 1048576 entries"):
        xla_shape.convert(data, "binary", "json")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_file_is_refused_at_once():
    """`/dev/zero` by path breaks the protobuf wire format in its first MiB: refused
    at once as the bytes it is (no module, for `shapes` and `iter_shapes`), never read
    without end (in a child process under a 200 MB address space, so that a read
    without bound fails the test)."""
    code = r"""
import pathlib, resource, xla_shape
resource.setrlimit(resource.RLIMIT_AS, (200 << 20, 200 << 20))
zero = pathlib.Path("/dev/zero")
for call in (lambda: xla_shape.validate(zero),
             lambda: xla_shape.shapes(zero),
             lambda: list(xla_shape.iter_shapes(zero))):
    try:
        call()
    except xla_shape.Error as e:
        print(type(e).__name__, str(e)[:120])
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 3, done.stdout
    assert all(line.startswith("DecodeError /dev/zero: ") for line in lines), done.stdout
    assert "invalid field number 0 at byte 0" in lines[0], done.stdout
    assert all(line.endswith("it reads as binary") for line in lines[1:]), done.stdout


def test_garbage_never_crashes():
    """Random and truncated bytes through every entry point: exceptions, never a crash
    of the interpreter (run in a child process so a crash fails the test)."""
    code = r"""
import random, xla_shape
rng = random.Random(13)
seeds = [bytes.fromhex("100b1a0202032a070a02010080010132020000"),
         open(%r, "rb").read()]
for i in range(3000):
    seed = rng.choice(seeds)
    data = bytearray(seed[: rng.randrange(len(seed) + 1)])
    for _ in range(rng.randrange(4)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    data = bytes(data)
    for call in (lambda: xla_shape.Shape.from_proto(data),
                 lambda: xla_shape.convert(data, "binary", "hlo"),
                 lambda: xla_shape.convert(data, "binary", "json"),
                 lambda: xla_shape.validate(data),
                 lambda: xla_shape.shapes(data),
                 lambda: xla_shape.Shape.parse(data.decode("latin-1")),
                 lambda: xla_shape.validate(data.decode("latin-1"))):
        try:
            call()
        except (xla_shape.Error, TypeError, IndexError):
            pass
print("survived")
""" % str(FIXTURES / "modules" / "scan_while.hlo.pb")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "survived"


def test_shapes_roles_and_places():
    text = "HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n\nENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{0} negate(f32[2]{0} p)\n}\n"
    sites = xla_shape.shapes(text)
    assert [(s.role, s.index, s.instruction, s.line) for s in sites] == [
        ("entry_parameter", 0, None, 1),
        ("entry_result", None, None, 1),
        ("result", None, "p", 4),
        ("result", None, "n", 5),
        ("operand", 0, "n", 5),
    ]
    assert all(str(s.shape) == "f32[2]{0}" for s in sites)
    assert "ShapeSite(" in repr(sites[0])


def _site(s):
    return (str(s.shape) if s.shape else None, s.text, s.role, s.index, s.name,
            s.computation, s.instruction, s.line, s.column, s.path)


@pytest.mark.parametrize("path", [
    FIXTURES / "modules" / "scan_while.hlo.txt",
    FIXTURES / "modules" / "scan_while.hlo.pb",
])
def test_iter_shapes_gives_what_shapes_lists(path, tmp_path):
    want = [_site(s) for s in xla_shape.shapes(path)]
    assert len(want) > 10
    assert [_site(s) for s in xla_shape.iter_shapes(path)] == want
    assert [_site(s) for s in xla_shape.iter_shapes(path.read_bytes())] == want
    if path.suffix == ".txt":
        # Past the first MiB, which tells the form: a comment line of a MiB after the
        # first line.
        first, rest = path.read_text().split("\n", 1)
        big = tmp_path / "big.hlo.txt"
        big.write_text(first + "\n// " + "x" * (1 << 20) + "\n" + rest)
        sites = [_site(s) for s in xla_shape.iter_shapes(big)]
        assert [s[1:7] for s in sites] == [s[1:7] for s in want]
        assert sites == [_site(s) for s in xla_shape.shapes(big)]


def test_iter_shapes_refuses_what_is_not_a_module_at_once(tmp_path):
    path = tmp_path / "shape.txt"
    path.write_text("f32[2]{0}\n")
    for data in (path, "f32[2]{0}\n", b"\x08\x0b"):
        with pytest.raises(xla_shape.DecodeError):
            xla_shape.iter_shapes(data)
    with pytest.raises(FileNotFoundError):
        xla_shape.iter_shapes(tmp_path / "missing.hlo.txt")


def test_iter_shapes_reads_a_module_file_as_it_goes(tmp_path):
    """A module of 300,000 instructions (about 12 MB) is iterated in far less memory
    than its list takes, and an iterator dropped early lets its scan go."""
    path = tmp_path / "many.hlo.txt"
    with open(path, "w") as out:
        out.write("HloModule m\n\nENTRY e {\n  p = f32[8]{0} parameter(0)\n")
        for i in range(300_000):
            out.write(f"  n.{i} = f32[8]{{0}} negate(p)\n")
        out.write("  ROOT r = f32[8]{0} negate(p)\n}\n")
    code = """
import pathlib, resource, sys, xla_shape
path, how = pathlib.Path(sys.argv[1]), sys.argv[2]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if how == "iter":
    count = sum(1 for s in xla_shape.iter_shapes(path) if s.shape is not None)
else:
    count = sum(1 for s in xla_shape.shapes(path) if s.shape is not None)
grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
first = [s.instruction for _, s in zip(range(3), xla_shape.iter_shapes(path))]
print(count, grew, first)
"""
    grew = {}
    for how in ("iter", "list"):
        done = subprocess.run([sys.executable, "-c", code, str(path), how],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        count, kb, first = done.stdout.split(" ", 2)
        assert int(count) == 300_002
        assert first.strip() == "['p', 'n.0', 'n.1']"
        grew[how] = int(kb)
    # The list holds 300,002 sites (hundreds of MB); the iterator a few thousand.
    assert grew["iter"] < 40_000 < grew["list"], grew


def test_iter_shapes_advanced_from_two_threads(tmp_path):
    """Two threads advancing one iterator get every shape once between them: one that
    finds the other advancing it gets ValueError (as a generator does), never a hang."""
    path = tmp_path / "many.hlo.txt"
    lines = [f"  n.{i} = f32[8]{{0}} negate(p)\n" for i in range(20_000)]
    path.write_text("HloModule m\n\nENTRY e {\n  p = f32[8]{0} parameter(0)\n" + "".join(lines)
                    + "  ROOT r = f32[8]{0} negate(p)\n}\n")
    code = """
import pathlib, sys, threading, xla_shape
shapes = xla_shape.iter_shapes(pathlib.Path(sys.argv[1]))
seen = [[], []]
def advance(k):
    while True:
        try:
            seen[k].append(next(shapes).instruction)
        except StopIteration:
            return
        except ValueError:
            pass
threads = [threading.Thread(target=advance, args=(k,)) for k in (0, 1)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(seen[0]) + len(seen[1]), len(set(seen[0]) | set(seen[1])))
"""
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["20002", "20002"]


def test_module_attributes():
    assert xla_shape.__version__
    assert xla_shape.COMBINE_DIMENSION == -(2**63)
    assert xla_shape.Shape("f32[8,128]{1,0:T(2,*)}").layout.tiles == ((2, xla_shape.COMBINE_DIMENSION),)
    assert issubclass(xla_shape.ParseError, xla_shape.Error)
    assert issubclass(xla_shape.DecodeError, xla_shape.Error)
    assert issubclass(xla_shape.ValidationError, xla_shape.Error)
    assert xla_shape.Shape.__doc__ and xla_shape.convert.__doc__ and xla_shape.validate.__doc__


def test_stubs_and_py_typed_are_installed():
    package = pathlib.Path(xla_shape.__file__).parent
    assert (package / "py.typed").exists()
    stub = (package / "__init__.pyi").read_text()
    for name in ("def convert", "def validate", "def shapes", "def iter_shapes", "class Shape",
                 "class Report", "class ShapeIterator",
                 "class Finding", "class Layout", "class ShapeSite", "class ParseError"):
        assert name in stub


def test_a_shape_that_is_no_array_says_what_it_is():
    for text, phrase in [
        ("opaque[]", "is an opaque, not an array"),
        ("(f32[2])", "is a tuple, not an array"),
        ("token[]", "is a token, not an array"),
    ]:
        with pytest.raises(TypeError, match=phrase):
            xla_shape.Shape(text).linear_index([0])


def test_a_str_that_names_a_file_is_text_and_the_error_says_how_to_read_the_file(tmp_path):
    path = tmp_path / "module.hlo.txt"
    path.write_text("HloModule m\n\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n")
    for call in (xla_shape.validate, xla_shape.shapes, xla_shape.iter_shapes):
        with pytest.raises(xla_shape.DecodeError) as caught:
            call(str(path))
        assert "a str is the text itself" in str(caught.value), call
        assert f"pathlib.Path({json.dumps(str(path))})" in str(caught.value), call
    assert xla_shape.validate(path).ok
    assert [s.text for s in xla_shape.shapes(path)] == [s.text for s in xla_shape.iter_shapes(path)]
    # A str that names no file has no such words.
    with pytest.raises(xla_shape.DecodeError) as caught:
        xla_shape.validate(str(tmp_path / "missing.hlo.txt"))
    assert "pathlib" not in str(caught.value)


def test_errors_name_this_package_s_arguments_not_the_command_line_s():
    with pytest.raises(xla_shape.DecodeError) as caught:
        xla_shape.validate("not a shape at all")
    message = str(caught.value)
    assert "give src=binary|json|hlo|hlo-module|hlo-module-proto" in message, message
    assert "--from" not in message, message
    # A shape with an unknown field has no lossless text.
    with pytest.raises(xla_shape.Error) as caught:
        xla_shape.convert(bytes.fromhex("100b08011a0102"), "binary", "hlo", hlo_style="exact")
    assert "(hlo_style=xla drops it with a warning)" in str(caught.value), str(caught.value)
