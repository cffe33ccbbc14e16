"""vector_add in JAX: a jitted function on device-resident arrays (returns a new array)."""

from gpubench.spec import implementation


@implementation("vector_add", "jax", "jit", devices=("cpu", "gpu"), parallel=True)
def jit(ctx):
    import jax

    add = jax.jit(lambda x, y: x + y)
    a, b = ctx.inputs["a"], ctx.inputs["b"]
    return lambda: add(a, b)
