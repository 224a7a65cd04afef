"""Generates xla_parser_cases.jsonl: shape strings and what XLA's own parser (jaxlib
0.10.2, `jaxlib._hlo.Shape(text)`) makes of them, in the format of
fixtures/hlo_shapes.jsonl: {"text", "ok", "xla_hex", "xla_text", "error"}.

The strings are hand-written probes of the parser's corners (lenient attribute
parentheses, tuple element validation, comments, lexing) plus random shapes from a
small grammar, half of them mutated. Strings on which XLA aborts the process (a CHECK
failure, e.g. `L(0)` or a negative tile) are left out. Deterministic:

    python3 tests/data/xla_parser_cases.py > tests/data/xla_parser_cases.jsonl
"""
import json
import random
import subprocess
import sys

PROBES = r"""
f32[4]{1}
f32[2]{}
token[]{}
f32[1]{0:S(300)}
f32[1]{0:S(200)}
f32[1]{0:#(f32)}
f32[1]{0:#(s32)}
f32[1]{0:#(token)}
f32[1]{0:M(-4)}
f32[1]{0:E(-1)}
f32[1]{0:T()}
f32[1]{0:T(0)}
f32[1]{0:SC(0:)}
f32[1]{0:}
f32[1]{:}
f32[1]{0:S(1}
f32[1]{0:S1)}
f32[1]{0:S}
f32[1]{0:S()}
f32[1]{0:S(}
f32[1]{0:E(4}
f32[1]{0:E(x)}
f32[1]{0:M(4}
f32[1]{0:L(4}
f32[1]{0:L(}
f32[1]{0:#(u8}
f32[1]{0:#u8}
f32[1]{0:#u8)}
f32[1]{0:#}
f32[1]{0:#()}
f32[1]{0:#(q)}
f32[1]{0:#(}
f32[1]{0:#(u8 u8)}
f32[1]{0:#(u8 S(1)}
f32[1]{0:#S(1)}
f32[1]{0:#()S(1)}
f32[1]{0:*}
f32[1]{0:*()}
f32[1]{0:*u16}
f32[1]{0:* u8)}
f32[1]{0:T(2}
f32[1]{0:T2}
f32[1]{0:T}
f32[1]{0:T(2)(3}
f32[1]{0:T(2,3}
f32[1]{0:T(1,}
f32[1]{0:T(*}
f32[1]{0:T(1)(}
f32[1]{0:T(1)(2,}
f32[1]{0:T(1 2)}
f32[1]{0:T(,)}
f32[1]{0:T(}
f32[1]{0:T,}
f32[1]{0:T 2)}
f32[1]{0:T(*,1,2S(128)}
f32[1]{0:SC(0:1}
f32[1]{0:SC0:1)}
f32[1]{0:SC}
f32[1]{0:SC(0:}
f32[1]{0:SC(0:1,}
f32[1]{0:SC(0:1)(}
f32[1]{0:SC(0:1)(1:}
f32[1]{0:SC(:1)}
f32[1]{0:SC(}
f32[1]{0:SC(0}
f32[1]{0:SC(0)}
f32[1]{0:SC(0:1 2)}
f32[1]{0:SC(0:1,(1:2)}
f32[1]{0:SC(}(1:2)}
f32[1]{0:SC 0:1)}
f32[1]{0:D(D}
f32[1]{0:DD)}
f32[1]{0:D}
f32[1]{0:D(}
f32[1]{0:D(D,}
f32[1]{0:D(D C)}
f32[1]{0:D(D+}
f32[1]{0:D(D~+)}
f32[1]{0:D(X)}
f32[1]{0:D 2}
f32[1]{0:D(D,C)T(2}
f32[123]{0:D(D+~)}
f32[10,10]{1,0:D(C)}
f32[10,10]{1,0:D(D,C)T(128,8)}
f32[1]{0:P(f32[1]}
f32[1]{0:P}
f32[1]{0:P(f32[1])}
f32[2,3]{0:P(f32[1])}
f32[1]{0:S(1)E(4)}
f32[1]{0:E(1)(2)}
f32[1]{0:S(1)S(2)}
f32[1]{0:T(2)T(3)}
f32[1]{0:SC(0:1)S(1)}
f32[1]{0:Q}
f32[1]{0:T(2)x}
f32[1]{0:T(1)S}
f32[1]{0:T(1)L}
f32[1]{0:S 1)}
f32[1]{0:L 4}
f32[1]{0:E(-}
f32[1]{0:L(52E(32)}
f32[1,]
f32[1 2]
f32[,1]
f32[1]{0 1}
f32[1]{0,}
f32[1,2]{1, 0, }
f32[<= 3]
f32[< =3]
f32[<=?]
f32[<=-1]
f32[-1]
f32[9223372036854775807]
f32[9223372036854775808]
f32[3]{ 0 }
f32[3] {0}
f32[3]/*x*/{0}
f32[1]//c
f32[1]/* unterminated
 f32[1]
opaque_type[]
OPAQUE[]
tuple[]
buffer[]
b()
b(s32[], f32[])
b((f32[]))
b(token[])
b(f32[1]{0:#(u64)})
b(f32[1]{0:T()})
(f32[], )
()
(f32[]{:#(u64)})
(f32[1]{0:L(4)})
(f32[1]{0:E(-1)})
(f32[1]{0:T()})
(f32[1]{0:T(0)})
(f32[1]{0:SC(0:1)})
(f32[1]{0:*(u8)})
(f32[1]{0:M(-4)})
(f32[1]{0:S(128)})
(f32[2,3]{1,1})
(f32[2]{5})
((f32[2]{5}))
(b(f32[2]{5}))
(f32[2]{0:T(2,*)})
(f32[?]{0})
(f32[9223372036854775807,2])
(f32[4611686018427387904]{0})
(token[], f32[4]{0:SC(0:2)})
(f32[4]{0:SC(0:4)})
(f32[4]{0:SC(1:2)})
(f32[4]{0:SC(0:2,1)})
(bf16[20,3]{1,0:SC(0:18)})
(bf16[5,3]{1,0:SC(0:18)})
(bf16[?,3]{1,0:SC(0:18)})
(bf16[?,3]{1,0:SC(1:2)})
(s8[9223372036854775807]{0:T(2)})
(s8[9223372036854775807]{0:T(1)L(2)})
(s8[4611686018427387904]{0:T(1)L(4611686018427387905)})
(f32[1]{0:S(1}, f32[])
(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[])
""".strip("\n").split("\n")

TYPES = ["f32", "bf16", "s4", "u8", "pred", "s32", "f8e4m3fn", "c64", "u32", "token", "opaque"]


def dims(n):
    out = []
    for _ in range(n):
        r = random.random()
        if r < 0.1:
            out.append("?")
        elif r < 0.2:
            out.append("<=%d" % random.randint(0, 9))
        else:
            out.append(str(random.choice([0, 1, 2, 3, 8, 128, 1000])))
    return out


def layout(n):
    m = list(range(n))
    random.shuffle(m)
    if random.random() < 0.1:
        m = m[:-1] if m else [0]
    s = "{" + ",".join(map(str, m))
    if random.random() < 0.5:
        attrs = ""
        if random.random() < 0.1:
            attrs += "D(" + ",".join(random.choice(["D", "C", "S", "H", "C+", "C~", "C+~"]) for _ in range(max(n, 1))) + ")"
        if random.random() < 0.5:
            attrs += "T" + "".join(
                "(" + ",".join(random.choice(["8", "128", "2", "1", "*", "0"]) for _ in range(random.randint(0, 3))) + ")"
                for _ in range(random.randint(1, 2)))
        if random.random() < 0.2:
            attrs += "L(%d)" % random.randint(1, 1024)
        if random.random() < 0.1:
            attrs += "#(%s)" % random.choice(["u32", "s8", "f32", "u64"])
        if random.random() < 0.1:
            attrs += "*(%s)" % random.choice(["u16", "u8"])
        if random.random() < 0.2:
            attrs += "E(%d)" % random.choice([0, 1, 4, 8, 32, -1])
        if random.random() < 0.2:
            attrs += "S(%d)" % random.choice([0, 1, 5, 127, 128, 300, -3])
        if random.random() < 0.1:
            attrs += "SC" + "".join(
                "(%d:%s)" % (random.randint(0, 3), ",".join(str(random.randint(0, 50)) for _ in range(random.randint(0, 2))))
                for _ in range(random.randint(1, 2)))
        if random.random() < 0.05:
            attrs += "P(f32[2])"
        if random.random() < 0.1:
            attrs += "M(%d)" % random.choice([0, 16, -4])
        s += ":" + attrs
    return s + "}"


def shape(depth=0):
    r = random.random()
    if depth < 3 and r < 0.15:
        return "(" + ", ".join(shape(depth + 1) for _ in range(random.randint(0, 6))) + ")"
    if depth < 3 and r < 0.2:
        return "b(" + shape(depth + 1) + ")"
    t = random.choice(TYPES)
    if t in ("token", "opaque"):
        return t + "[]"
    n = random.randint(0, 4)
    s = t + "[" + ",".join(dims(n)) + "]"
    if random.random() < 0.8:
        s += layout(n)
    return s


PIECES = ["[", "]", "{", "}", "(", ")", ",", ":", "*", "<=", "?", " ", "0", "1", "3", "T", "S", "L",
          "M", "E", "P", "#", "D", "/*x*/", "SC", "-", "+", "~", "b(", "u8", ".", "_"]


def mutate(s):
    for _ in range(random.randint(1, 4)):
        if not s:
            break
        i = random.randrange(len(s))
        r = random.random()
        if r < 0.4:
            s = s[:i] + s[i + 1:]
        elif r < 0.8:
            s = s[:i] + random.choice(PIECES) + s[i:]
        else:
            s = s[:i] + " " + s[i:]
    return s


def generated(seed, count):
    random.seed(seed)
    out = []
    seen = set()
    while len(out) < count:
        s = shape()
        if random.random() < 0.5:
            s = mutate(s)
        if s not in seen and "\n" not in s:
            seen.add(s)
            out.append(s)
    return out


WORKER = r"""
import json, sys
import jaxlib._hlo as h
for line in sys.stdin:
    text = json.loads(line)
    print(json.dumps({"start": text}), flush=True)
    try:
        shape = h.Shape(text)
        result = {"text": text, "ok": True, "xla_hex": shape.to_serialized_proto().hex(),
                  "xla_text": str(shape), "error": None}
    except Exception as e:
        result = {"text": text, "ok": False, "xla_hex": None, "xla_text": None, "error": str(e)}
    print(json.dumps(result), flush=True)
"""


def run_all(texts):
    """Runs XLA on each text in a child process; a text that kills it is skipped."""
    results = []
    i = 0
    while i < len(texts):
        child = subprocess.run([sys.executable, "-c", WORKER],
                               input="".join(json.dumps(t) + "\n" for t in texts[i:]),
                               capture_output=True, text=True)
        done = 0
        for line in child.stdout.splitlines():
            record = json.loads(line)
            if "start" not in record:
                results.append(record)
                done += 1
        i += done
        if i < len(texts):
            i += 1  # XLA aborted on texts[i]: leave it out.
    return results


def main():
    texts = []
    for text in PROBES + generated(1, 1200) + generated(11, 1200):
        if text not in texts:
            texts.append(text)
    for record in run_all(texts):
        print(json.dumps(record))


main()
