#!/usr/bin/env python3
"""Seeds for the npy fuzz target (session 44): for each shape of `props::NPY_SHAPES` (by
its place, the seed's first byte), `.npy` files NumPy writes of its logical array: C
and Fortran order, little- and big-endian where the dtype has an order, format
versions 1 and 2, and the narrow types' alternatives (int8 for s4, uint8 for u4, bool
for pred, raw bits for bf16 and float8). Usage (with NumPy): npy.py
fuzz/corpus/npy (names are the SHA-1 of the bytes, as libFuzzer names them)."""
import hashlib, io, os, sys
import numpy as np

# (dimensions, dtypes NumPy writes for it) in the order of props::NPY_SHAPES.
shapes = [
    ((2, 3), ["<f4", ">f4"]),
    ((2, 3), ["<f4"]),
    ((4,), ["<u2"]),
    ((3,), ["|i1"]),
    ((2, 2), ["|u1"]),
    ((2, 2), ["|b1", "|u1"]),
    ((2,), ["<c8", ">c8"]),
    ((0, 3), ["|i1"]),
    ((), ["<f8", ">f8"]),
    ((3, 1, 2), ["<u2", ">u2"]),
    ((5,), ["|u1"]),
    ((1, 2), ["<c16"]),
]
out = sys.argv[1]
rng = np.random.default_rng(44)
count = 0
for place, (dims, dtypes) in enumerate(shapes):
    for dtype in dtypes:
        for fortran in (False, True):
            for version in ((1, 0), (2, 0)):
                values = rng.integers(0, 2 if dtype == "|b1" else 7, size=dims)
                array = np.asarray(values).astype(np.dtype(dtype))
                if place == 3:  # s4: int8 values that fit
                    array = (values - 3).astype("i1")
                if fortran:
                    array = np.asfortranarray(array)
                buffer = io.BytesIO()
                np.lib.format.write_array(buffer, array, version=version)
                seed = bytes([place]) + buffer.getvalue()
                open(os.path.join(out, hashlib.sha1(seed).hexdigest()), "wb").write(seed)
                count += 1
print(count, "seeds")
