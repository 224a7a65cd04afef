"""Time XLA's own HLO module parser (jaxlib._hlo.hlo_module_from_text) on the same
~100 MB of module text that benches/text.rs scans: the real modules in fixtures/modules,
repeated in file-name order until 100 MiB. A concatenation is not one module, so each
module text is parsed on its own; the time is the sum over the whole dump.

    python3 benches/xla_parse_time.py
"""
import pathlib
import time

import jaxlib._hlo as hlo

TARGET = 100 << 20
root = pathlib.Path(__file__).resolve().parent.parent
texts = [p.read_text() for p in sorted((root / "fixtures" / "modules").glob("*.hlo.txt"))]
assert texts, "no modules in fixtures/modules"

# Warm up once per module.
for text in texts:
    hlo.hlo_module_from_text(text)

total = 0
start = time.perf_counter()
while total < TARGET:
    for text in texts:
        hlo.hlo_module_from_text(text)
        total += len(text.encode()) + 1
elapsed = time.perf_counter() - start
print(f"XLA hlo_module_from_text: {total / 1e6:.1f} MB in {elapsed:.2f} s = {total / 1e6 / elapsed:.1f} MB/s")
