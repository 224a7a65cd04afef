#!/usr/bin/env python3
"""Seeds for the module_proto fuzz target (session 21): module protos whose program
shapes hold unknown fields, tuples with fields of their own and results given more
than once, and instruction tuples with fields of their own, so that the replay
(`props::module_proto`) compares the reads a shape at a time with the whole ones on
them. Usage: module_proto_parts.py fuzz/corpus/module_proto (names are the SHA-1 of
the bytes, as libFuzzer names them)."""
import hashlib, os, sys
def varint(n):
    out=bytearray()
    while True:
        b=n&0x7f; n>>=7
        if n: out.append(b|0x80)
        else: out.append(b); return bytes(out)
def tag(f,w): return varint((f<<3)|w)
def ld(f,body): return tag(f,2)+varint(len(body))+body
def vi(f,v): return tag(f,0)+varint(v)
def packed(f,vals): return ld(f,b"".join(varint(v) for v in vals))
def arr(et, dims, m2m=None, extra=b""):
    s=vi(2,et)+packed(3,dims)
    if m2m is not None: s+=ld(5,packed(1,m2m))
    return s+extra
F32,S32,TUPLE=11,4,13
unk_v=vi(99,1)            # unknown varint field 99
unk_f=tag(41,5)+b"\x07\x00\x00\x00"  # unknown fixed32 41
e1=arr(F32,[8,128],[1,0]); e2=arr(S32,[2],[0]); bad=arr(S32,[2],[1])
def tup(*els, own=b""): return vi(2,TUPLE)+b"".join(ld(4,e) for e in els)+own
def instr(name, opcode, shape): return ld(1,name)+ld(2,opcode)+ld(3,shape)
def comp(name, instrs, program=None, extra=b""):
    c=ld(1,name)+b"".join(ld(2,i) for i in instrs)
    if program is not None: c+=ld(4,program)
    return c+extra
def module(comps, host=None, entry=b"main"):
    m=ld(1,b"m")+ld(2,entry)+b"".join(ld(3,c) for c in comps)
    if host is not None: m+=ld(4,host)
    return m
seeds=[]
# 1. result twice (tuple halves), unknown fields at the top, in a parameter, in a nested tuple.
prog=ld(1,e1+unk_v)+ld(1,tup(e1,tup(e2,bad+unk_f)))+ld(2,vi(2,TUPLE)+ld(4,e1))+ld(2,ld(4,bad)+ld(4,e2+unk_v))+ld(3,b"p0")+ld(3,b"p1")+unk_v
seeds.append(module([comp(b"main",[instr(b"p0",b"parameter",e1)],prog)]))
# 2. the host program shape with its result given three times, an array merged.
host=ld(1,e2)+ld(2,vi(2,S32)+packed(3,[2]))+ld(2,packed(3,[3])+ld(5,packed(1,[0,1])))+ld(2,unk_f)+ld(3,b"a")
seeds.append(module([comp(b"main",[instr(b"t",b"tuple",tup(e1,e2))])],host=host))
# 3. a parameter that is a tuple with fields of its own (dimensions and a layout), result once with an unknown field in its layout.
prog=ld(1,tup(e1,e2,own=packed(3,[2])+ld(5,packed(1,[0]))))+ld(2,tup(arr(F32,[4],[0],unk_v)))+ld(3,b"x")
seeds.append(module([comp(b"main",[instr(b"x",b"parameter",tup(e1))],prog)]))
# 4. an instruction's tuple with an unknown field of its own and in an element, and a nested tuple with a layout.
sh=tup(e1+unk_f,tup(e2,own=ld(5,packed(1,[0]))),own=unk_v)
seeds.append(module([comp(b"main",[instr(b"t",b"tuple",sh),instr(b"u",b"copy",tup(bad))])]))
# 5. result twice with its first occurrence broken (a wrong wire type inside), so that the whole decode's error is given.
prog=ld(1,e1)+ld(2,vi(2,TUPLE)+ld(4,e1))+ld(2,tag(4,0)+varint(1))+ld(3,b"p")
seeds.append(module([comp(b"main",[instr(b"p",b"parameter",e1)],prog)]))
# 6. two computations, each with a program shape given twice (protobuf merges repeated program_shape fields too).
prog_a=ld(1,e1)+ld(2,tup(e1))+ld(3,b"p")
prog_b=ld(2,tup(e2))+unk_v
seeds.append(module([comp(b"main",[instr(b"p",b"parameter",e1)],prog_a,extra=ld(4,prog_b)),comp(b"f",[instr(b"q",b"parameter",e2)],prog_b)]))
out=sys.argv[1]
for s in seeds:
    name=hashlib.sha1(s).hexdigest()
    open(os.path.join(out,name),"wb").write(s)
    print(name,len(s))
