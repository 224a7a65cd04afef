#!/usr/bin/env python3
"""Writes tests/data/google_differential.tsv: odd and broken messages with Google's verdict.

Two kinds of input, each run through Google's protobuf runtime (python protobuf, upb):
parse, then serialize.
- Mutated fixture messages (fixtures/messages.jsonl and fixtures/pending/messages.jsonl):
  bytes replaced, bits flipped, bytes inserted or removed, pieces of other messages
  spliced in.
- Field soups: random fields with numbers the schema uses and some it does not, every
  wire type, nested messages and groups, overlong and huge varints.
The schema is XLA's current one for these messages, built here as a descriptor:
ShapeProto, LayoutProto (fields 2-5 only reserved), TileProto, SplitConfigProto,
ProgramShapeProto.

Columns: message (shape|layout|program-shape), input hex, Google's output hex or `error`.
Deterministic for given fixture files (the committed table was made from the 1564 messages
of fixtures/messages.jsonl and fixtures/pending/messages.jsonl). Run from the crate root:

    python3 tests/data/google_differential.py
"""
import json
import random

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto
I64, BOOL, ENUM, MSG, STR = F.TYPE_INT64, F.TYPE_BOOL, F.TYPE_ENUM, F.TYPE_MESSAGE, F.TYPE_STRING


def schema():
    fdp = descriptor_pb2.FileDescriptorProto(name="xla_data.proto", package="xla", syntax="proto3")
    for name, values in [("PrimitiveType", ["PRIMITIVE_TYPE_INVALID"]), ("DimLevelType", ["DIM_DENSE"])]:
        enum = fdp.enum_type.add(name=name)
        for number, value in enumerate(values):
            enum.value.add(name=value, number=number)

    def message(name, fields):
        m = fdp.message_type.add(name=name)
        for field_name, number, repeated, kind, type_name in fields:
            label = F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL
            f = m.field.add(name=field_name, number=number, label=label, type=kind)
            if type_name:
                f.type_name = ".xla." + type_name

    message("TileProto", [("dimensions", 1, True, I64, None)])
    message("SplitConfigProto", [("dimension", 1, False, I64, None), ("split_indices", 2, True, I64, None)])
    message("LayoutProto", [
        ("minor_to_major", 1, True, I64, None), ("tiles", 6, True, MSG, "TileProto"),
        ("element_size_in_bits", 7, False, I64, None), ("memory_space", 8, False, I64, None),
        ("dim_level_types", 9, True, ENUM, "DimLevelType"), ("physical_shape", 10, False, MSG, "ShapeProto"),
        ("index_primitive_type", 11, False, ENUM, "PrimitiveType"),
        ("pointer_primitive_type", 12, False, ENUM, "PrimitiveType"), ("dim_unique", 13, True, BOOL, None),
        ("dim_ordered", 14, True, BOOL, None), ("dynamic_shape_metadata_prefix_bytes", 15, False, I64, None),
        ("tail_padding_alignment_in_elements", 16, False, I64, None),
        ("split_configs", 17, True, MSG, "SplitConfigProto"),
    ])
    message("ShapeProto", [
        ("element_type", 2, False, ENUM, "PrimitiveType"), ("dimensions", 3, True, I64, None),
        ("tuple_shapes", 4, True, MSG, "ShapeProto"), ("layout", 5, False, MSG, "LayoutProto"),
        ("is_dynamic_dimension", 6, True, BOOL, None),
    ])
    message("ProgramShapeProto", [
        ("parameters", 1, True, MSG, "ShapeProto"), ("result", 2, False, MSG, "ShapeProto"),
        ("parameter_names", 3, True, STR, None),
    ])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    get = lambda n: message_factory.GetMessageClass(pool.FindMessageTypeByName("xla." + n))
    return {"shape": get("ShapeProto"), "layout": get("LayoutProto"), "program-shape": get("ProgramShapeProto")}


def mutate(rng, data, corpus):
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(5)
        if op == 0 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 1 and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif op == 2:
            b.insert(rng.randrange(len(b) + 1), rng.randrange(256))
        elif op == 3 and b:
            del b[rng.randrange(len(b))]
        else:
            other = rng.choice(corpus)[1]
            i, j = sorted((rng.randrange(len(other) + 1), rng.randrange(len(other) + 1)))
            k = rng.randrange(len(b) + 1)
            b[k:k] = other[i:j]
    return bytes(b)


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        c, v = v & 0x7F, v >> 7
        if v:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def soup(rng, depth=0):
    out = b""
    for _ in range(rng.randint(0, 5)):
        number = rng.choice([1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 13, 16, 17, 99, 1000])
        wire = rng.choice([0, 0, 0, 2, 2, 2, 1, 5, 3])
        if wire == 0:
            value = rng.choice([0, 1, 2, 127, 128, 2**31, 2**32 + 5, 2**63, 2**64 - 1, rng.getrandbits(64)])
            encoded = varint(value)
            if rng.random() < 0.1:  # overlong
                encoded = encoded[:-1] + bytes([encoded[-1] | 0x80, 0])
            out += varint(number << 3) + encoded
        elif wire == 2:
            if depth < 4 and rng.random() < 0.6:
                body = soup(rng, depth + 1)
            else:
                body = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 4)))
            out += varint(number << 3 | 2) + varint(len(body)) + body
        elif wire == 1:
            out += varint(number << 3 | 1) + bytes(8)
        elif wire == 5:
            out += varint(number << 3 | 5) + bytes(4)
        else:
            inner = soup(rng, depth + 1) if depth < 4 else b""
            out += varint(number << 3 | 3) + inner + varint(number << 3 | 4)
    return out


def verdict(classes, kind, data):
    message = classes[kind]()
    try:
        message.ParseFromString(data)
        return message.SerializeToString().hex()
    except Exception:
        return "error"


def main():
    classes = schema()
    corpus = []
    for name in ("fixtures/messages.jsonl", "fixtures/pending/messages.jsonl"):
        try:
            lines = open(name).readlines()
        except FileNotFoundError:
            continue
        for line in lines:
            row = json.loads(line)
            corpus.append((row["message"], bytes.fromhex(row["hex"])))
    rng = random.Random(20261122)
    kept = {"changed": [], "same": [], "error": []}
    quota = {"changed": 700, "same": 300, "error": 400}
    while any(len(kept[k]) < quota[k] for k in kept):
        kind, data = rng.choice(corpus)
        data = mutate(rng, data, corpus)
        out = verdict(classes, kind, data)
        bucket = "error" if out == "error" else "same" if out == data.hex() else "changed"
        if len(kept[bucket]) < quota[bucket]:
            kept[bucket].append(f"{kind}\t{data.hex()}\t{out}\n")
    soups = []
    while len(soups) < 600:
        kind = rng.choice(["shape", "layout", "program-shape"])
        data = soup(rng)
        soups.append(f"{kind}\t{data.hex()}\t{verdict(classes, kind, data)}\n")
    with open("tests/data/google_differential.tsv", "w") as f:
        for bucket in ("changed", "same", "error"):
            f.writelines(kept[bucket])
        f.writelines(soups)


if __name__ == "__main__":
    main()
