"""numpy interop: Shape.from_numpy agrees with numpy on C- and F-ordered and
transposed arrays of every numpy dtype that has an XLA element type."""

import itertools

import pytest

import xla_shape

np = pytest.importorskip("numpy")

NUMPY = {
    "bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}
ML_DTYPES = {
    "bfloat16": "bf16", "int2": "s2", "uint2": "u2", "int4": "s4", "uint4": "u4",
    "float8_e5m2": "f8e5m2", "float8_e4m3fn": "f8e4m3fn",
    "float8_e4m3b11fnuz": "f8e4m3b11fnuz", "float8_e5m2fnuz": "f8e5m2fnuz",
    "float8_e4m3fnuz": "f8e4m3fnuz", "float8_e4m3": "f8e4m3", "float8_e3m4": "f8e3m4",
    "float8_e8m0fnu": "f8e8m0fnu", "float4_e2m1fn": "f4e2m1fn",
    "float6_e3m2fn": "f6e3m2fn", "float6_e2m3fn": "f6e2m3fn",
}


def dtypes():
    out = [(np.dtype(name), xla) for name, xla in NUMPY.items()]
    try:
        import ml_dtypes
    except ImportError:
        return out
    for name, xla in ML_DTYPES.items():
        if hasattr(ml_dtypes, name):
            out.append((np.dtype(getattr(ml_dtypes, name)), xla))
    return out


def views(dtype):
    """C- and F-ordered arrays and transposes, of ranks 0 to 4, some with size-1 and
    size-0 dimensions."""
    for dims in [(), (5,), (2, 3), (3, 1, 4), (2, 3, 4, 5), (0, 3), (1, 1)]:
        for order in "CF":
            base = np.zeros(dims, dtype=dtype, order=order)
            yield base
            for axes in itertools.islice(itertools.permutations(range(len(dims))), 1, 6):
                yield base.transpose(axes)


def agrees_with_numpy(array, shape):
    """Every element's byte offset in numpy (the strides) is where the layout puts it."""
    assert shape.dimensions == array.shape
    if array.size == 0:
        return
    strides = shape.strides()
    for index, dim in enumerate(array.shape):
        if dim > 1:
            assert strides[index] == array.strides[index], (array.shape, array.strides)
    itemsize = array.dtype.itemsize
    for index in itertools.islice(np.ndindex(*array.shape), 200):
        byte_offset = sum(i * s for i, s in zip(index, array.strides))
        assert shape.linear_index(index) * itemsize == byte_offset


@pytest.mark.parametrize("dtype, xla", dtypes(), ids=lambda v: str(v))
def test_from_numpy_agrees_with_numpy(dtype, xla):
    count = 0
    for array in views(dtype):
        shape = xla_shape.Shape.from_numpy(array)
        assert shape.element_type == xla
        assert shape.numpy_dtype == array.dtype
        agrees_with_numpy(array, shape)
        count += 1
    assert count > 30


def test_the_dtype_table_covers_numpy_and_ml_dtypes():
    assert len(dtypes()) >= len(NUMPY)
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert len(dtypes()) == len(NUMPY) + sum(hasattr(ml_dtypes, n) for n in ML_DTYPES)


def test_layouts_of_c_f_and_transposed():
    a = np.zeros((2, 3, 4), np.float32)
    assert str(xla_shape.Shape.from_numpy(a)) == "f32[2,3,4]{2,1,0}"
    assert str(xla_shape.Shape.from_numpy(np.asfortranarray(a))) == "f32[2,3,4]{0,1,2}"
    assert str(xla_shape.Shape.from_numpy(a.transpose(2, 0, 1))) == "f32[4,2,3]{0,2,1}"
    assert str(xla_shape.Shape.from_numpy(np.float64(1.5).reshape(()))) == "f64[]"


@pytest.mark.parametrize(
    "array, match",
    [
        (np.broadcast_to(np.zeros(3, np.float32), (4, 3)), "broadcast|stride 0|0"),
        (np.zeros((4, 3), np.float32)[::-1], "negative|revers|-12"),
        (np.zeros((4, 6), np.float32)[:, :3], "gaps|sliced"),
        (np.zeros((4, 6), np.float32)[:, ::2], "contiguous|stride|gaps"),
    ],
)
def test_strides_that_are_no_layout_are_a_clear_error(array, match):
    with pytest.raises(xla_shape.Error, match=match):
        xla_shape.Shape.from_numpy(array)


def test_dtypes_without_an_xla_element_type():
    for array in (np.zeros(2, object), np.zeros(2, "U3"), np.zeros(2, "datetime64[s]"),
                  np.zeros(2, [("a", "i4")])):
        with pytest.raises(TypeError, match="no XLA element type"):
            xla_shape.Shape.from_numpy(array)
    with pytest.raises(TypeError, match="big-endian"):
        xla_shape.Shape.from_numpy(np.zeros(2, ">i4"))
    with pytest.raises((TypeError, AttributeError)):
        xla_shape.Shape.from_numpy([1, 2, 3])
    with pytest.raises(TypeError):
        xla_shape.Shape("(f32[2])").numpy_dtype


def test_numpy_dtype_of_parsed_shapes():
    assert xla_shape.Shape("f32[2]").numpy_dtype == np.float32
    assert xla_shape.Shape("pred[]").numpy_dtype == np.bool_
    assert xla_shape.Shape("c128[1]").numpy_dtype == np.complex128
