"""Writes a large real module text for the module-scan bench: the optimized HLO that
XLA compiles for one training step of a small Mixtral-like model (grouped-query
attention with rotary embeddings, eight experts chosen top-2, RMS norms), its
weights sharded over a 2x8 mesh of 16 host devices, so the module has the
collectives, shardings, fusions and metadata of a sharded model's dump.

XLA's own `hlo_mixtral_8x7b_bf16_2x8.hlo` (openxla/xla, xla/tools/benchmarks/hlo/) is
the module the speed issue names; this one is its stand-in where that file cannot be
had: with 20 layers it is 4.0 MB of 44,500 lines, 89 bytes a line (the mixtral module:
4.1 MB, 73 bytes a line), and costs the scanner about the same instructions a line.

    python3 benches/moe_module.py 20 > /tmp/moe20.hlo
    XLA_SHAPE_BENCH_HLO=/tmp/moe20.hlo cargo bench --bench text -- module_text

Needs jax and jaxlib (fixtures/requirements.txt pins them). The first argument is
the number of layers (default 8); each is unrolled in the module.
"""
import os
import sys

# Before jax loads: sixteen CPU devices for the 2x8 mesh.
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=16"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

LAYERS = int(sys.argv[1]) if len(sys.argv) > 1 else 8
# Model width, query heads, key/value heads, head width, expert width, experts,
# vocabulary, batch, sequence.
D, H, KV, HD, F, E, V, B, S = 512, 8, 2, 64, 1024, 8, 4096, 8, 128

mesh = Mesh(np.array(jax.devices()).reshape(2, 8), ("data", "model"))


def rms_norm(x, w):
    scale = jax.lax.rsqrt(jnp.mean(x.astype(jnp.float32) ** 2, -1, keepdims=True) + 1e-6)
    return x * scale.astype(x.dtype) * w


def rotary(x):
    pos = jnp.arange(x.shape[1])[:, None]
    angle = pos / (10000 ** (jnp.arange(0, HD, 2) / HD))
    cos, sin = jnp.cos(angle)[None, :, None, :], jnp.sin(angle)[None, :, None, :]
    even, odd = x[..., ::2], x[..., 1::2]
    return jnp.concatenate([even * cos - odd * sin, even * sin + odd * cos], -1).astype(x.dtype)


def layer(p, x):
    h = rms_norm(x, p["norm_attention"])
    q = rotary(jnp.einsum("bsd,dhk->bshk", h, p["wq"]))
    k = rotary(jnp.einsum("bsd,dhk->bshk", h, p["wk"]))
    v = jnp.einsum("bsd,dhk->bshk", h, p["wv"])
    k, v = jnp.repeat(k, H // KV, 2), jnp.repeat(v, H // KV, 2)
    scores = jnp.einsum("bqhk,bthk->bhqt", q, k) / np.sqrt(HD)
    scores = jnp.where(jnp.tril(jnp.ones((S, S), bool)), scores, -1e9)
    weights = jax.nn.softmax(scores.astype(jnp.float32), -1).astype(x.dtype)
    x = x + jnp.einsum("bhqt,bthk,hkd->bqd", weights, v, p["wo"])

    h = rms_norm(x, p["norm_experts"])
    gate = jax.nn.softmax(jnp.einsum("bsd,de->bse", h, p["gate"]).astype(jnp.float32), -1)
    top, chosen = jax.lax.top_k(gate, 2)
    mix = jnp.sum(jax.nn.one_hot(chosen, E) * top[..., None], -2).astype(x.dtype)
    up = jax.nn.silu(jnp.einsum("bsd,edf->bsef", h, p["w1"])) * jnp.einsum("bsd,edf->bsef", h, p["w3"])
    down = jnp.einsum("bsef,efd->bsed", up, p["w2"])
    return x + jnp.einsum("bsed,bse->bsd", down, mix)


def loss(params, tokens):
    x = params["embedding"][tokens[:, :-1]]
    for p in params["layers"]:
        x = layer(p, x)
    logits = jnp.einsum("bsd,vd->bsv", rms_norm(x, params["norm"]), params["embedding"])
    logp = jax.nn.log_softmax(logits.astype(jnp.float32))
    return -jnp.mean(jnp.take_along_axis(logp, tokens[:, 1:, None], -1))


def train_step(params, tokens):
    value, grads = jax.value_and_grad(loss)(params, tokens)
    return value, jax.tree.map(lambda w, g: w - 1e-3 * g.astype(w.dtype), params, grads)


def weight(shape, *spec):
    return jax.ShapeDtypeStruct(shape, jnp.bfloat16, sharding=NamedSharding(mesh, P(*spec)))


def layer_weights():
    return {
        "wq": weight((D, H, HD), None, "model", None),
        "wk": weight((D, KV, HD), None, None, None),
        "wv": weight((D, KV, HD), None, None, None),
        "wo": weight((H, HD, D), "model", None, None),
        "gate": weight((D, E), None, None),
        "w1": weight((E, D, F), None, None, "model"),
        "w3": weight((E, D, F), None, None, "model"),
        "w2": weight((E, F, D), None, "model", None),
        "norm_attention": weight((D,), None),
        "norm_experts": weight((D,), None),
    }


params = {
    "embedding": weight((V, D), "model", None),
    "norm": weight((D,), None),
    "layers": [layer_weights() for _ in range(LAYERS)],
}
tokens = jax.ShapeDtypeStruct((B, S + 1), jnp.int32, sharding=NamedSharding(mesh, P("data", None)))
sys.stdout.write(jax.jit(train_step).lower(params, tokens).compile().as_text())
