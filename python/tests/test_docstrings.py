"""Every example in the docstrings runs and prints what it says."""

import doctest

import pytest

import xla_shape


def test_docstring_examples():
    pytest.importorskip("numpy")  # Shape.from_numpy's example
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = finder.find(xla_shape, "xla_shape")
    for name in ("Shape", "Layout", "Report"):
        tests += finder.find(getattr(xla_shape, name), f"xla_shape.{name}")
    seen = set()
    for test in tests:
        if test.name in seen:
            continue
        seen.add(test.name)
        runner.run(test)
    assert runner.failures == 0
    assert runner.tries >= 12, runner.tries
