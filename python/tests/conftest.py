"""Shared helpers: the repository's fixtures and the command-line binary."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"


def jsonl(name):
    """The records of fixtures/NAME (one JSON object a line), and of
    fixtures/pending/NAME, which the Rust tests read too."""
    rows = []
    for path in (FIXTURES / name, FIXTURES / "pending" / name):
        if path.exists():
            rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def module_files():
    """Every module of fixtures/modules and every dump file of fixtures/dumps."""
    files = sorted((FIXTURES / "modules").iterdir())
    files += sorted(p for p in (FIXTURES / "dumps").rglob("*") if p.is_file())
    return files


@pytest.fixture(scope="session")
def cli():
    """Runs the xla-shape binary (XLA_SHAPE_CLI, else target/debug/xla-shape, which
    `cargo test` builds): cli(args, stdin=b"") -> CompletedProcess."""
    binary = os.environ.get("XLA_SHAPE_CLI") or str(ROOT / "target" / "debug" / "xla-shape")
    if not os.path.exists(binary):
        pytest.fail(f"no xla-shape binary at {binary}: run cargo build, or set XLA_SHAPE_CLI")

    def run(args, stdin=b""):
        return subprocess.run([binary, *args], input=stdin, capture_output=True, check=False)

    return run
