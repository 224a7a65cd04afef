#!/usr/bin/env python3
"""Writes tests/data/google_differential.tsv: mutated fixture messages with Google's verdict.

Each fixture message of fixtures/messages.jsonl is mutated at random (bytes replaced, bits
flipped, bytes inserted or removed, pieces of other messages spliced in) and run through
Google's protobuf runtime (python protobuf, upb): parse, then serialize. The schema is
XLA's current one for these messages, built here as a descriptor: ShapeProto,
LayoutProto (fields 2-5 only reserved), TileProto, SplitConfigProto, ProgramShapeProto.

Columns: message (shape|layout|program-shape), input hex, Google's output hex or `error`.
Deterministic for a given fixtures file (the committed table was made from the 1564-message
fixtures/messages.jsonl of the fixtures generator). Run from the crate root:

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


def main():
    classes = schema()
    corpus = []
    for line in open("fixtures/messages.jsonl"):
        row = json.loads(line)
        corpus.append((row["message"], bytes.fromhex(row["hex"])))
    rng = random.Random(20261122)
    kept = {"changed": [], "same": [], "error": []}
    quota = {"changed": 700, "same": 300, "error": 400}
    while any(len(kept[k]) < quota[k] for k in kept):
        kind, data = rng.choice(corpus)
        data = mutate(rng, data, corpus)
        message = classes[kind]()
        try:
            message.ParseFromString(data)
            out = message.SerializeToString().hex()
            bucket = "same" if out == data.hex() else "changed"
        except Exception:
            out, bucket = "error", "error"
        if len(kept[bucket]) < quota[bucket]:
            kept[bucket].append(f"{kind}\t{data.hex()}\t{out}\n")
    with open("tests/data/google_differential.tsv", "w") as f:
        for bucket in ("changed", "same", "error"):
            f.writelines(kept[bucket])


if __name__ == "__main__":
    main()
