"""Relayout from Python: the crate's relayout (tested byte for byte against the seeds'
figures in tests/relayout.rs) reached through the binding, checked here against numpy's
own transposes and against the `xla-shape relayout` binary."""

import numpy
import pytest

import xla_shape

ml_dtypes = pytest.importorskip("ml_dtypes")


def test_a_transpose_is_numpys_transpose():
    a = numpy.arange(6 * 7, dtype=numpy.float32).reshape(6, 7)
    moved = xla_shape.relayout(a.tobytes(), "f32[6,7]{1,0}", "{0,1}")
    assert moved == a.T.tobytes()
    # The same with a Layout and with a Shape as the destination.
    assert xla_shape.relayout(a.tobytes(), "f32[6,7]", xla_shape.Layout.parse("{0,1}")) == moved
    assert xla_shape.relayout(a.tobytes(), "f32[6,7]", "f32[6,7]{0,1}") == moved
    assert xla_shape.relayout(moved, "f32[6,7]{0,1}", "{1,0}") == a.tobytes()


@pytest.mark.parametrize(
    "text, dtype",
    [
        ("f32[9,300]{1,0:T(8,128)}", numpy.float32),
        ("f32[9,300]{0,1:T(8,128)}", numpy.float32),
        ("bf16[17,260]{1,0:T(8,128)(2,1)}", ml_dtypes.bfloat16),
        ("s8[5,3,7]{0,2,1}", numpy.int8),
        ("s4[3,5]{0,1:E(4)}", ml_dtypes.int4),
        ("u4[7,9]{1,0:T(2,8)E(4)}", ml_dtypes.uint4),
        ("f32[3,5]{0,1:PD(4,6)}", numpy.float32),
    ],
)
def test_device_bytes_round_trip(text, dtype):
    shape = xla_shape.Shape.parse(text)
    dims = shape.dimensions
    rng = numpy.random.default_rng(7)
    values = rng.integers(-8 if "s4" in text else 0, 8, size=dims)
    array = values.astype(dtype)
    device = shape.to_device_bytes(array)
    assert len(device) == shape.allocated_bytes()
    back = shape.from_device_bytes(device)
    assert back.dtype == shape.numpy_dtype and back.shape == tuple(dims)
    assert (back == array).all()
    # Each element sits where the layout engine says.
    if shape.layout.element_size_in_bits == 0:
        width = numpy.dtype(dtype).itemsize
        for index in [(0,) * len(dims), tuple(d - 1 for d in dims)]:
            at = shape.linear_index(index) * width
            assert device[at : at + width] == array[index].tobytes()


def test_relayout_agrees_with_the_command_line(cli, tmp_path):
    shape = "bf16[17,260]{1,0}"
    data = numpy.arange(17 * 260, dtype=numpy.uint16).tobytes()
    source = tmp_path / "in.bin"
    source.write_bytes(data)
    out = tmp_path / "out.bin"
    run = cli(["relayout", "--shape", shape, "--to", "{0,1:T(8,128)(2,1)}", str(source), "-o", str(out)])
    assert run.returncode == 0, run.stderr
    assert xla_shape.relayout(data, shape, "{0,1:T(8,128)(2,1)}") == out.read_bytes()


def test_bad_buffers_and_arrays_are_value_errors():
    with pytest.raises(ValueError, match="24"):
        xla_shape.relayout(bytes(23), "f32[2,3]{1,0}", "{0,1}")
    with pytest.raises(ValueError):
        xla_shape.relayout(bytes(24), "f32[2,3]{1,0}", "f32[3,2]{1,0}")
    with pytest.raises(TypeError):
        xla_shape.relayout("not bytes", "f32[2,3]{1,0}", "{0,1}")
    shape = xla_shape.Shape.parse("f32[2,3]{0,1}")
    with pytest.raises(ValueError, match="dimensions"):
        shape.to_device_bytes(numpy.zeros((3, 2), dtype=numpy.float32))
    with pytest.raises(ValueError, match="dtype"):
        shape.to_device_bytes(numpy.zeros((2, 3), dtype=numpy.float64))
    with pytest.raises(ValueError):
        shape.from_device_bytes(bytes(5))
    with pytest.raises(TypeError):
        xla_shape.Shape.parse("(f32[2], s8[])").from_device_bytes(b"")


def test_a_parallel_relayout_starts_no_more_threads_than_the_address_space_holds(tmp_path):
    # Asked for 512 threads in a 600 MB address space (each thread's stack takes some),
    # a relayout large enough to run side by side used to make rayon panic when it
    # could not start them; the pool is now started with as many as there is room for.
    import subprocess
    import sys

    script = (
        "import numpy, xla_shape\n"
        "a = numpy.arange(2048 * 1024, dtype=numpy.float32).reshape(2048, 1024)\n"
        "moved = xla_shape.relayout(a.tobytes(), 'f32[2048,1024]{1,0}', '{0,1}')\n"
        "assert moved == a.T.tobytes()\n"
        "print('ok')\n"
    )
    run = subprocess.run(
        ["sh", "-c", f"ulimit -v 600000 && exec {sys.executable} -c \"$0\"", script],
        env={**__import__("os").environ, "RAYON_NUM_THREADS": "512"},
        capture_output=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr.decode()
    assert run.stdout == b"ok\n"
