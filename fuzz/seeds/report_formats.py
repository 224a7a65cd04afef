#!/usr/bin/env python3
"""Seeds for the report_formats fuzz target (session 44): a selector byte (strict, a
policy, the text style), a file name (hostile ones among them: `:`, `,`, `%`, CR and
LF, non-ASCII, empty), NUL, then an input from the fixtures: the module texts and
protos of `fixtures/modules`, groups of shape lines (valid and invalid) of
`hlo_shapes.jsonl`, binary messages of `messages.jsonl` and JSON of
`json_inputs.jsonl`. Usage: report_formats.py fuzz/corpus/report_formats (names are the
SHA-1 of the bytes, as libFuzzer names them)."""
import hashlib, json, os, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures")
names = ["m.hlo.txt", "dir/a:b,c.txt", "100%0A done\r\nx", "ünïcode ☃.pb", "", "::error::x", "a=b,title=c"]
inputs = []
modules = os.path.join(root, "modules")
for f in sorted(os.listdir(modules)):
    inputs.append(open(os.path.join(modules, f), "rb").read())
lines = [json.loads(l) for l in open(os.path.join(root, "hlo_shapes.jsonl"))]
for start in range(0, min(len(lines), 400), 40):
    inputs.append("".join(l["text"] + "\n" for l in lines[start:start + 40]).encode())
for l in open(os.path.join(root, "messages.jsonl")).readlines()[:30]:
    inputs.append(bytes.fromhex(json.loads(l)["hex"]))
for l in open(os.path.join(root, "json_inputs.jsonl")).readlines()[:30]:
    inputs.append(json.loads(l)["json"].encode())
out = sys.argv[1]
for i, data in enumerate(inputs):
    seed = bytes([i % 8]) + names[i % len(names)].encode() + b"\0" + data
    open(os.path.join(out, hashlib.sha1(seed).hexdigest()), "wb").write(seed)
print(len(inputs), "seeds")
