"""What the MPI jobs need of JAX: one process driving several devices, by sharding
or by ``shard_map`` (:mod:`gpubench.mpi.jobs`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.backends.hooks import MultiDevice


def jax_mesh(ctx: Any, parts: list[np.ndarray]) -> tuple[Any, Any]:
    """A one-axis mesh of one JAX device per part, and the parts as one array sharded
    over it."""
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    host, ndev = np.concatenate(parts), len(parts)
    jax.config.update("jax_enable_x64", True)
    platform = "gpu" if ctx.ad.device == "gpu" else "cpu"
    devs = jax.devices(platform)
    if len(devs) < ndev:
        raise RuntimeError(f"{ndev} JAX {platform} devices needed, {len(devs)} visible")
    if len(host) % ndev:
        raise ValueError(f"size {len(host)} is not a multiple of {ndev} devices "
                         "(JAX sharding)")
    mesh = Mesh(np.array(devs[:ndev]), ("d",))
    return mesh, jax.device_put(host, NamedSharding(mesh, PartitionSpec("d")))


def jax_sharding(ctx: Any, parts: list[np.ndarray]) -> Callable[[], float]:
    """JAX: one sharded array; ``jit`` of the global expression, XLA's partitioner adds
    the cross-device sum."""
    import jax
    import jax.numpy as jnp

    _mesh, x = jax_mesh(ctx, parts)
    fn = jax.jit(lambda a: jnp.vdot(a, a))
    return lambda: float(fn(x))


def jax_shard_map(ctx: Any, parts: list[np.ndarray]) -> Callable[[], float]:
    """JAX: the per-device program written by hand with ``shard_map`` (each device's
    ``vdot`` of its shard) and the collective named: ``lax.psum`` over the mesh axis.
    ``shard_map`` is the successor of ``pmap`` (``jax.shard_map``; older JAX:
    ``jax.experimental.shard_map``)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec

    shard_map = getattr(jax, "shard_map", None)
    if shard_map is None:
        from jax.experimental.shard_map import shard_map
    mesh, x = jax_mesh(ctx, parts)
    per_device = shard_map(lambda a: jax.lax.psum(jnp.vdot(a, a), "d"), mesh=mesh,
                           in_specs=PartitionSpec("d"), out_specs=PartitionSpec())
    fn = jax.jit(per_device)
    return lambda: float(fn(x))


#: the ``multi_gpu`` job's modes (:meth:`~gpubench.backends.hooks.MultiDevice.steps`)
STEPS = {"jax_sharding": jax_sharding, "jax_shard_map": jax_shard_map}


class JaxMulti(MultiDevice):
    """JAX's several-device steps: sharding, and ``shard_map``."""

    @classmethod
    def steps(cls) -> dict[str, Callable[[Any, list[np.ndarray]], Callable[[], float]]]:
        return STEPS


class JaxCpuMulti(JaxMulti):
    """On the host, JAX sees one device unless told to make several (the XLA flag;
    newer JAX's option) before it starts."""

    @classmethod
    def prepare_devices(cls, devices: int) -> None:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   f" --xla_force_host_platform_device_count={devices}")
        try:  # newer JAX reads its own option instead of the XLA flag
            import jax

            jax.config.update("jax_num_cpu_devices", devices)
        except Exception:  # noqa: BLE001 - older JAX: the XLA flag above applies
            pass
