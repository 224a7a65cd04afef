"""xla_shape.diff: the report `xla-shape diff` gives, as Python objects and as its
rendered forms, for the dumps XLA wrote (fixtures/dumps) and for modules given as text
or bytes."""

import json

import pytest

import xla_shape
from conftest import FIXTURES

DUMPS = FIXTURES / "dumps"
PAIRS = [
    ("base", "transposed"),
    ("transposed", "base"),
    ("base", "dtype"),
    ("base", "extra_output"),
    ("base", "base_again"),
]
FORMATS = ["text", "json", "github", "sarif"]


@pytest.mark.parametrize("old,new", PAIRS)
def test_diff_of_dumps_renders_as_the_cli_writes_it(cli, old, new):
    a, b = DUMPS / old, DUMPS / new
    report = xla_shape.diff(a, b)
    for fmt in FORMATS:
        done = cli(["diff", "--format", fmt, str(a), str(b)])
        assert report.render(fmt) == done.stdout.decode(), fmt
        assert report.exit_code == done.returncode
    whole = json.loads(report.render("json"))
    assert report.summary == whole["summary"]
    assert report.ok == (report.exit_code == 0)
    assert len(report) == len(report.files) == whole["summary"]["files"]
    assert (report.old, report.new) == (str(a), str(b))


@pytest.mark.parametrize("old,new", PAIRS)
def test_each_pair_and_change_carries_what_the_json_report_says(old, new):
    report = xla_shape.diff(DUMPS / old, DUMPS / new)
    files = json.loads(report.render("json"))["files"]
    assert [f.key for f in report] == [f["key"] for f in files]
    for got, want in zip(report.files, files):
        assert (got.old, got.new, got.status, got.error) == (
            want["old"], want["new"], want["status"], want["error"])
        assert len(got.changes) == len(want["changes"])
        for change, c in zip(got.changes, want["changes"]):
            for field in ("what", "place", "computation", "instruction", "old", "new",
                          "old_bytes", "new_bytes", "line", "column", "path"):
                assert getattr(change, field) == c[field], field
            assert change.aspects == [(a["kind"], a["words"]) for a in c["aspects"]]
        assert [(m.computation, m.old, m.new, m.how) for m in got.matches] == [
            (m["computation"], m["old"], m["new"], m["how"]) for m in want["matches"]]
    lines = report.render("text").splitlines()
    words = [f"{f.key}: {c}" for f in report for c in f.changes]
    words += [f"{f.key}: note: {m}" for f in report for m in f.matches]
    assert sorted(words) == sorted(line for line in lines if "only in" not in line)


RENUMBERED = FIXTURES / "renumbered"
CALLERS = FIXTURES / "callers"
STEP = "module_0000.jit_loss.cpu_after_optimizations"


def step_pair(cli, variants, changed, ext):
    """`xla_shape.diff` of a fixture's plain step against its `changed` one (the same as
    the CLI's JSON): its changes as (what, place), and its matches as (old, new, how)."""
    a, b = (variants / name / f"{STEP}.{ext}" for name in ("plain", changed))
    report = xla_shape.diff(a, b)
    assert report.render("json") == cli(["diff", "--format", "json", str(a), str(b)]).stdout.decode()
    [pair] = report.files
    return [(c.what, c.place) for c in pair.changes], [(m.old, m.new, m.how) for m in pair.matches]


@pytest.mark.parametrize("ext", ["txt", "hlo.pb"])
def test_one_more_operation_that_renumbers_the_rest_is_exactly_that_change(cli, ext):
    # fixtures/renumbered: a training step, and the same with its input scaled first,
    # which XLA fused; the later fusions and computations took their neighbours' names.
    changes, matches = step_pair(cli, RENUMBERED, "scaled", ext)
    assert changes == [
        ("removed", "main.5/wrapped_convert"),
        ("added", "main.5/convert_convert_fusion.1"),
        ("removed", "computation wrapped_convert_computation"),
        ("added", "computation fused_computation.14"),
    ]
    assert [(old, new) for old, new, how in matches if how == "caller"] == [
        ("wrapped_convert_computation.1", "wrapped_convert_computation"),
        ("wrapped_convert_computation.2", "wrapped_convert_computation.1"),
        ("wrapped_convert_computation.3", "wrapped_convert_computation.2"),
        ("wrapped_convert_computation.4", "wrapped_convert_computation.3"),
    ]


@pytest.mark.parametrize("ext", ["txt", "hlo.pb"])
def test_a_computation_goes_with_the_instruction_that_calls_it(cli, ext):
    # fixtures/callers: a causal mask replaced one fusion by two, and XLA gave the
    # removed fusion's computation name to a new, different computation.
    changes, matches = step_pair(cli, CALLERS, "masked", ext)
    assert changes == [
        ("removed", "main.5/add_multiply_fusion"),
        ("added", "main.8/broadcast_select_fusion"),
        ("added", "main.8/multiply_select_fusion"),
        ("removed", "computation fused_computation.3"),
        ("added", "computation fused_computation.3"),
        ("added", "computation fused_computation.8"),
    ]
    assert ("region_0.1", "region_0.3", "caller") in matches


def test_entry_only_and_ignore_are_the_cli_options(cli):
    a, b = DUMPS / "base", DUMPS / "transposed"
    for kwargs, args in [
        ({"entry_only": True}, ["--entry-only"]),
        ({"ignore": ["minor-to-major"]}, ["--ignore", "minor-to-major"]),
        ({"ignore": ["minor-to-major", "tiles"]},
         ["--ignore", "minor-to-major", "--ignore", "tiles"]),
    ]:
        report = xla_shape.diff(a, b, **kwargs)
        done = cli(["diff", "--format", "json", *args, str(a), str(b)])
        assert report.render("json") == done.stdout.decode(), args
    everything = xla_shape.diff(a, b).summary["changes"]
    assert 0 < xla_shape.diff(a, b, ignore=["minor-to-major"]).summary["changes"] < everything


def module(name):
    return FIXTURES / "modules" / name


def test_modules_given_as_text_or_bytes_compare_as_their_files():
    text = module("custom_layout.hlo.txt").read_text()
    changed = text.replace("{1,0}", "{0,1}", 1)
    assert changed != text
    report = xla_shape.diff(text, changed)
    assert (report.old, report.new, report.exit_code) == ("<old>", "<new>", 1)
    [pair] = report.files
    assert (pair.key, pair.old, pair.new, pair.status) == ("<new>", "<old>", "<new>", "changed")
    assert len(pair.changes) >= 1
    # As text, as the file, mixed: the same changes.
    path = module("custom_layout.hlo.txt")
    for old in (text, path, text.encode()):
        again = xla_shape.diff(old, changed)
        assert [str(c) for c in again.files[0].changes] == [str(c) for c in pair.changes]
    # A module proto as bytes against its own file: no difference.
    proto = module("custom_layout.hlo.pb")
    same = xla_shape.diff(proto.read_bytes(), proto)
    assert same.ok and same.exit_code == 0 and same.files[0].status == "same"
    assert same.render() == ""


def test_what_cannot_be_read_is_an_unreadable_pair():
    report = xla_shape.diff(b"\xff\x00not a message", "f32[2]{0}\n")
    [pair] = report.files
    assert pair.status == "unreadable" and report.exit_code == 2 and not report.ok
    assert pair.error["file"] == "<old>" and pair.error["code"]
    assert pair.changes == [] and report.summary["unreadable"] == 1
    assert report.render().startswith("<new>: cannot compare: <old>: ")


def test_bad_arguments_raise(tmp_path):
    with pytest.raises(ValueError, match='no kind of change "tile"'):
        xla_shape.diff("f32[]", "f32[]", ignore=["tile"])
    with pytest.raises(FileNotFoundError):
        xla_shape.diff(tmp_path / "absent", "f32[]")
    with pytest.raises(IsADirectoryError):
        xla_shape.diff(DUMPS / "base", "f32[]")
    two = "a.hlo: f32[2]{0}\nb.hlo: f32[3]{0}\n"
    with pytest.raises(ValueError, match="lists 2 files"):
        xla_shape.diff(two, two)
    with pytest.raises(TypeError):
        xla_shape.diff(1, "f32[]")
    with pytest.raises(ValueError, match="format must be"):
        xla_shape.diff("f32[]", "f32[]").render("xml")
    # Listings naming several files compare as paths, file by file.
    (tmp_path / "a.txt").write_text(two)
    (tmp_path / "b.txt").write_text(two.replace("f32[3]", "s32[3]"))
    report = xla_shape.diff(tmp_path / "a.txt", tmp_path / "b.txt")
    assert [(f.key, f.status) for f in report] == [("a.hlo", "same"), ("b.hlo", "changed")]


def test_two_directories_without_a_file_compare_nothing_and_do_not_pass(tmp_path):
    # A guard pointed at two empty dump directories compared nothing: exit 2, not ok.
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    report = xla_shape.diff(tmp_path / "old", tmp_path / "new")
    assert report.files == [] and report.summary["files"] == 0
    assert report.exit_code == 2 and not report.ok
    # SARIF says so to a consumer that reads only the invocation.
    (invocation,) = json.loads(report.render("sarif"))["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    (note,) = invocation["toolExecutionNotifications"]
    assert "nothing to compare" in note["message"]["text"]
    (tmp_path / "new" / "a.txt").write_text("f32[2]{0}\n")
    report = xla_shape.diff(tmp_path / "old", tmp_path / "new")
    assert [(f.key, f.status) for f in report] == [("a.txt", "only_new")]
    assert report.exit_code == 1
