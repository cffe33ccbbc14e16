"""Exploration on the H100: JAX timing paths, harness overhead at 2**26."""
import time, sys, statistics, cProfile, pstats, io
import numpy as np

def med(xs): return statistics.median(xs)

print("== JAX timing paths", flush=True)
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
print(jax.__version__, jax.devices())
try:
    from jax._src.lib import mosaic_gpu as mg
    ext = mg._mosaic_gpu_ext
    print("mosaic_gpu ext:", ext, [n for n in dir(ext) if "cupti" in n])
except Exception as e:
    ext = None; print("no mosaic ext:", type(e).__name__, e)
import cupy as cp
N = 1 << 26
for dt in ("float32", "float64"):
    rng = np.random.default_rng(0)
    a = rng.random(N).astype(dt); b = rng.random(N).astype(dt)
    ja, jb = jax.device_put(a), jax.device_put(b)
    for name, fn in [("add", jax.jit(lambda x, y: x + y)),
                     ("hypot", jax.jit(lambda x, y: jnp.sqrt(x * x + y * y))),
                     ("sigmoid", jax.jit(lambda x, y: 1.0 / (1.0 + jnp.exp(-x))))]:
        fn(ja, jb).block_until_ready()
        host = []
        for _ in range(30):
            t = time.perf_counter(); r = fn(ja, jb); r.block_until_ready(); host.append(time.perf_counter() - t)
        batch = []
        for _ in range(10):
            t = time.perf_counter()
            rs = [fn(ja, jb) for _ in range(20)]
            rs[-1].block_until_ready(); batch.append((time.perf_counter() - t) / 20)
            del rs
        cup = None; names = None
        if ext is not None:
            try:
                ext._cupti_init()
                rs = [fn(ja, jb) for _ in range(10)]
                jax.block_until_ready(rs)
                tim = ext._cupti_get_timings(False)
                names = sorted({n for n, _ in tim})
                cup = med([t for _, t in tim]) * 1e-3
                del rs
            except Exception as e:
                print("cupti failed", type(e).__name__, e)
        print(f"jax {name} {dt}: host {med(host)*1e6:.1f} us min {min(host)*1e6:.1f}; batch20 {med(batch)*1e6:.1f} us; cupti {cup and cup*1e6} us kernels {names}", flush=True)
    # cupy event reference
    ca, cb = cp.asarray(a), cp.asarray(b)
    out = cp.empty_like(ca)
    for name, f in [("add", lambda: cp.add(ca, cb, out=out)),
                    ("hypot", lambda: cp.sqrt(ca * ca + cb * cb))]:
        f(); cp.cuda.Device().synchronize()
        e0, e1 = cp.cuda.Event(), cp.cuda.Event(); ts = []
        for _ in range(20):
            e0.record(); f(); e1.record(); e1.synchronize(); ts.append(cp.cuda.get_elapsed_time(e0, e1) * 1e-3)
        print(f"cupy {name} {dt}: events {med(ts)*1e6:.1f} us", flush=True)
    del ja, jb, ca, cb, out
try:
    from jax.experimental import pallas as pl
    def add_kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]
    blk = 1 << 16
    padd = jax.jit(lambda x, y: pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // blk,), in_specs=[pl.BlockSpec((blk,), lambda i: (i,))] * 2,
        out_specs=pl.BlockSpec((blk,), lambda i: (i,)))(x, y))
    x = jnp.ones(N, jnp.float32); y = jnp.ones(N, jnp.float32)
    padd(x, y).block_until_ready()
    ts = []
    for _ in range(20):
        t = time.perf_counter(); padd(x, y).block_until_ready(); ts.append(time.perf_counter() - t)
    print(f"pallas add f32 host {med(ts)*1e6:.1f} us", flush=True)
except Exception as e:
    print("pallas failed:", type(e).__name__, str(e)[:300])

print("== harness overhead (cupy-gpu) at 2**26", flush=True)
sys.path.insert(0, "src")
from gpubench.spec import get_kernel, Case, implementations
from gpubench.backends import load_backend
from gpubench.harness import measure, Settings
import gpubench.kernels  # noqa
b = load_backend("cupy-gpu"); b.start(16)
s = Settings(min_samples=10, max_time_s=0.03, target_rel_spread=0.03)
for k, v, dt in [("vector_add", "default", "float32"), ("elementwise", "hypot", "float64"), ("reduction", "dot", "float32")]:
    spec = get_kernel(k); case = Case(k, v, N, dt, {})
    t = time.perf_counter(); inp = spec.make_inputs(case, np.random.default_rng(1)); t1 = time.perf_counter()
    ref = spec.reference(case, inp); t2 = time.perf_counter()
    print(f"{k} {v} {dt}: inputs {t1-t:.2f} s ref {t2-t1:.2f} s", flush=True)
    impl = list(implementations(k, "cupy", "gpu"))[0]
    measure(spec, impl, case, b, s, inp, ref)
    pr = cProfile.Profile(); t = time.perf_counter(); pr.enable()
    m = measure(spec, impl, case, b, s, inp, ref)
    pr.disable(); print(f"  measure {impl.name}: {time.perf_counter()-t:.2f} s, {m.fields['status']}", flush=True)
    st = io.StringIO(); pstats.Stats(pr, stream=st).sort_stats("tottime").print_stats(8); print(st.getvalue()[-2500:])
