"""Every fixture converts, validates and prints through Python exactly as through the
command line (the xla-shape binary of the same checkout)."""

import json
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

import xla_shape
from conftest import jsonl, module_files

FORMS = ("binary", "json", "hlo")


def _in_python_words(message):
    """The command line's words, with the package's arguments for its options (the
    package's errors say `src=`, `message=` and `hlo_style=`)."""
    return (
        message.replace(" (or no --from)", ' (or src="auto")')
        .replace("--from ", "src=")
        .replace("--message ", "message=")
        .replace("--hlo-style ", "hlo_style=")
    )


def _python(data, src, dst, message, **options):
    """(ok, output) through Python, output as the CLI writes it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = xla_shape.convert(data, src, dst, message, **options)
        except xla_shape.Error as e:
            return False, str(e)
    return True, out if isinstance(out, bytes) else (out + "\n").encode()


def _compare(cli, cases):
    """cases: (label, input bytes, src, dst, message, options). The CLI reads the input
    from standard input and writes to a pipe."""

    def one(case):
        label, data, src, dst, message, options = case
        args = ["convert", "--from", src, "--to", dst, "--message", message]
        if options.get("hlo_style"):
            args += ["--hlo-style", options["hlo_style"]]
        if options.get("json_names"):
            args += ["--json-names", options["json_names"]]
        if options.get("pretty"):
            args += ["--pretty"]
        if options.get("ignore_unknown_fields"):
            args += ["--ignore-unknown-fields"]
        done = cli(args, data)
        py_data = data if src == "binary" else data.decode()
        ok, out = _python(py_data, src, dst, message, **options)
        if done.returncode == 0:
            assert ok, f"{label}: the CLI converts, Python says {out}"
            assert out == done.stdout, label
        else:
            assert done.returncode == 2, label
            assert not ok, f"{label}: the CLI fails ({done.stderr!r}), Python converts"
            stderr = done.stderr.decode()
            assert _in_python_words(stderr).endswith(f"xla-shape: <stdin>: {out}\n"), (label, stderr, out)
        return 1

    with ThreadPoolExecutor(4) as pool:
        return sum(pool.map(one, cases))


def test_every_message_converts_as_through_the_cli(cli):
    cases = []
    for row in jsonl("messages.jsonl"):
        data = bytes.fromhex(row["hex"])
        for dst in FORMS:
            cases.append((row["id"], data, "binary", dst, row["message"], {}))
        cases.append((row["id"], data, "binary", "hlo", row["message"], {"hlo_style": "exact"}))
    assert _compare(cli, cases) >= 4000


def test_every_hlo_shape_converts_and_prints_as_through_the_cli(cli):
    cases = []
    for row in jsonl("hlo_shapes.jsonl"):
        data = row["text"].encode()
        for dst in FORMS:
            cases.append((row["text"], data, "hlo", dst, "shape", {}))
        cases.append((row["text"], data, "hlo", "json", "shape", {"json_names": "proto", "pretty": True}))
    assert _compare(cli, cases) >= 4000


def test_every_json_input_converts_as_through_the_cli(cli):
    cases = []
    for row in jsonl("json_inputs.jsonl"):
        options = {"ignore_unknown_fields": True} if row["ignore_unknown_fields"] else {}
        for dst in FORMS:
            cases.append((row["id"], row["json"].encode(), "json", dst, row["message"], options))
    assert _compare(cli, cases) >= 500


def test_every_valid_hlo_shape_explains_as_through_the_cli(cli):
    shapes = []
    for row in jsonl("hlo_shapes.jsonl"):
        try:
            shape = xla_shape.Shape.parse(row["text"])
        except xla_shape.Error:
            continue
        # Two fixtures of ~44 million elements take 25-40 s each to explain in a debug
        # build (the library walks their elements); the rest take milliseconds.
        if (shape.element_count() or 0) <= 10_000_000:
            shapes.append((row["text"], shape))

    def one(item):
        text, shape = item
        done = cli(["explain", "--text", text])
        assert done.returncode == 0, text
        assert done.stdout.decode() == shape.explain() + "\n", text
        return 1

    with ThreadPoolExecutor(4) as pool:
        assert sum(pool.map(one, shapes)) >= 1000


def _fixture_files(tmp_path):
    """Every fixture as a file: each message of messages.jsonl as .binpb, each JSON
    input as .json, each HLO shape as .txt, then every module and dump file."""
    files = []
    for i, row in enumerate(jsonl("messages.jsonl")):
        path = tmp_path / f"m{i:04}.binpb"
        path.write_bytes(bytes.fromhex(row["hex"]))
        files.append(path)
    for i, row in enumerate(jsonl("json_inputs.jsonl")):
        path = tmp_path / f"j{i:04}.json"
        path.write_text(row["json"])
        files.append(path)
    for i, row in enumerate(jsonl("hlo_shapes.jsonl")):
        path = tmp_path / f"h{i:04}.txt"
        path.write_text(row["text"] + "\n")
        files.append(path)
    return files + module_files()


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_every_fixture_validates_as_through_the_cli(cli, tmp_path, fmt):
    files = _fixture_files(tmp_path)
    done = cli(["validate", "--format", fmt, "-j", "2", *map(str, files)])
    assert done.returncode in (0, 1, 2)
    reports = {}
    for path in files:
        try:
            reports[str(path)] = xla_shape.validate(path)
        except xla_shape.DecodeError as e:
            reports[str(path)] = e
    if fmt == "json":
        document = json.loads(done.stdout)
        assert [f["path"] for f in document["files"]] == [str(p) for p in files]
        unreadable = 0
        for entry in document["files"]:
            ours = reports[entry["path"]]
            if isinstance(ours, xla_shape.DecodeError):
                unreadable += 1
                assert entry["status"] == "unreadable", entry["path"]
                assert ours.code == entry["error"]["code"]
                message = _in_python_words(entry["error"]["message"])
                assert str(ours) == f"{entry['path']}: {message}"
            else:
                assert json.loads(ours.render("json"))["files"] == [entry], entry["path"]
                assert ours.ok == (entry["status"] == "valid")
                assert [f.code for f in ours.findings] == [f["code"] for f in entry["findings"]]
        assert unreadable >= 10 and document["summary"]["invalid"] >= 100
    else:
        text = "".join(r.to_text() for r in reports.values() if isinstance(r, xla_shape.Report))
        assert text == done.stdout.decode()
        assert text.count("\n") >= 100
