#!/usr/bin/env python3
"""Seeds for the guard_diff fuzz target (session 21): pairs of shape-line files
(`old` NUL `new`) with changes, lines added and removed, program shapes among them and
a module against shape lines, so that the replay (`props::guard_diff`) compares the
diff of two files read as they are compared with the diff of their listings read whole.
Usage: guard_diff_lines.py fuzz/corpus/guard_diff (names are the SHA-1 of the bytes, as
libFuzzer names them)."""
import hashlib, os, sys

pairs = [
    ("f32[2]{0}\ns32[]\nbf16[8,128]{1,0}\n", "f32[2]{0}\ns32[3]{0}\nbf16[8,128]{0,1}\npred[]\n"),
    ("f32[2]{0}\n", "f32[3]{0}\n"),
    ("f32[2]{0}\ns32[]\n", "f32[2]{0}\n"),
    ("(p0: f32[2]{0}, p1: s32[]) -> f32[2]{0}\nf32[4]{0}\n", "(p0: f32[2]{0}) -> (f32[2]{0}, s32[])\nf32[4]{0:T(2)}\nu8[1]{0}\n"),
    ("// a comment\nf32[8,128]{1,0:T(8,128)}\n(f32[2]{0}, s32[])\ntoken[]\n", "f32[8,128]{1,0:T(8,128)(2,1)}\n(f32[2]{0}, s32[], pred[])\n"),
    ("HloModule m\n\nENTRY main {\n  p = f32[2]{0} parameter(0)\n  ROOT c = f32[2]{0} copy(p)\n}\n", "f32[2]{0}\nf32[2]{0}\ns32[]\n"),
]
out = sys.argv[1]
for old, new in pairs:
    data = old.encode() + b"\0" + new.encode()
    name = hashlib.sha1(data).hexdigest()
    open(os.path.join(out, name), "wb").write(data)
    print(name, len(data))
