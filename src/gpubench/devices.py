"""Vendor peaks of known GPUs: the second reference for efficiency, beside the measured
ceilings of :mod:`gpubench.ceilings`.

A measured ceiling says what this machine's best library call reached on the day; the
vendor's peak says what the part is sold as. Both are shown: "% of the measured copy"
can read 100 % on a board whose copy reaches only 89 % of its datasheet bandwidth.

Each entry is a datasheet figure, with the datasheet named (title and address) and the
public page on which the figure was checked. Only devices whose figures could be checked
are listed; any other name gets ``None`` from :func:`vendor_peak` and the report says
"no vendor peak known for <name>". FP32 and FP64 are the non-tensor (CUDA core) peaks;
where the datasheet gives an FP64 tensor-core peak it is kept apart
(``fp64_tensor_tflops``): cuBLAS DGEMM runs on the FP64 tensor cores of A100/H100/H200,
so a DGEMM is read against that, its upper bound. Bandwidth is the DRAM (HBM/GDDR) peak.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: a share of a reference above this (in %) is not plausible without a reason
#: (the same 10 % margin as :data:`gpubench.plausibility.MAX_OVER_CEILING`)
FLAG_ABOVE_PCT = 110.0


@dataclass(frozen=True)
class Peak:
    """One device's datasheet peaks (GB/s and TFLOP/s; ``None`` where not given)."""

    device: str
    memory_gbps: float
    fp32_tflops: float | None
    fp64_tflops: float | None
    fp64_tensor_tflops: float | None
    source: str
    checked: str

    def gflops_for(self, dtype: str, gemm: bool = False) -> tuple[str, float] | None:
        """(label, GFLOP/s) of the peak bounding a row of ``dtype``; a float64 GEMM
        against the FP64 tensor-core peak where the datasheet gives one."""
        if dtype == "float32" and self.fp32_tflops:
            return f"FP32 {self.fp32_tflops:g} TFLOP/s", self.fp32_tflops * 1e3
        if dtype == "float64":
            if gemm and self.fp64_tensor_tflops:
                return (f"FP64 tensor core {self.fp64_tensor_tflops:g} TFLOP/s",
                        self.fp64_tensor_tflops * 1e3)
            if self.fp64_tflops:
                return f"FP64 {self.fp64_tflops:g} TFLOP/s", self.fp64_tflops * 1e3
        return None


_H100 = ("NVIDIA H100 Tensor Core GPU Datasheet, https://resources.nvidia.com/"
         "en-us-tensor-core/nvidia-tensor-core-gpu-datasheet")
_H100_CHECKED = ("https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html (SXM and "
                 "PCIe columns); https://glennklockwood.com/garden/processors/h100")
_H200 = ("NVIDIA H200 Tensor Core GPU Datasheet, https://resources.nvidia.com/"
         "en-us-data-center-overview-mc/en-us-data-center-overview/hpc-datasheet-sc23-h200")
_A100 = ("NVIDIA A100 Tensor Core GPU Datasheet, https://www.nvidia.com/content/dam/en-zz/"
         "Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf")
_A100_CHECKED = ("https://www.thundercompute.com/blog/nvidia-a100-specs-full-guide "
                 "(bandwidth per form factor); https://glennklockwood.com/garden/"
                 "processors/A100 (FP32 19.5, FP64 9.7, FP64 tensor 19.5)")

#: (pattern on the normalised name, peaks); the first match wins, so the narrower
#: names (PCIe, NVL, 40GB) come before the broader ones
DEVICES: tuple[tuple[str, Peak | None], ...] = (
    # H100 NVL, H800, GH200 have other figures (or none checked): they must not fall
    # through to the H100/H200 entries
    (r"\bh100\b.*\bnvl\b|\bh800\b|\bgh200\b|\bh200\b.*\bnvl\b", None),
    (r"\bh100\b.*\bpcie\b", Peak("H100 PCIe", 2000.0, 51.0, 26.0, 51.0, _H100,
                                  _H100_CHECKED)),
    (r"\bh100\b", Peak("H100 SXM5", 3350.0, 67.0, 34.0, 67.0, _H100, _H100_CHECKED)),
    (r"\bh200\b", Peak("H200 SXM", 4800.0, 67.0, 34.0, 67.0, _H200,
                       "https://lzwjava.github.io/nvidia-h200-gpu-specs-en (4.8 TB/s; FP64 "
                       "34 TFLOPS, compute as H100 SXM); https://glennklockwood.com/garden/"
                       "processors/h100 (H200: the H100 SXM5 with HBM3e; FP32 66.9, FP64 "
                       "tensor 66.9)")),
    (r"\ba100\b.*\bpcie\b.*\b80 ?gb\b|\ba100\b.*\b80 ?gb\b.*\bpcie\b",
     Peak("A100 80GB PCIe", 1935.0, 19.5, 9.7, 19.5, _A100, _A100_CHECKED)),
    (r"\ba100\b.*\bpcie\b", Peak("A100 40GB PCIe", 1555.0, 19.5, 9.7, 19.5, _A100,
                                  _A100_CHECKED)),
    (r"\ba100\b.*\b80 ?gb\b", Peak("A100 80GB SXM", 2039.0, 19.5, 9.7, 19.5, _A100,
                                    _A100_CHECKED)),
    (r"\ba100\b", Peak("A100 40GB SXM", 1555.0, 19.5, 9.7, 19.5, _A100, _A100_CHECKED)),
    (r"\bl40s\b", Peak("L40S", 864.0, 91.6, None, None,
                       "NVIDIA L40S GPU Datasheet, https://resources.nvidia.com/en-us-l40s/"
                       "l40s-datasheet-28413",
                       "https://www.mullet.se/product.html?product_id=355414 (L40S: 864 "
                       "GB/s, FP32 91.6 TFLOPS; no FP64 figure in the datasheet)")),
    (r"\bv100\b.*\bsxm2\b", Peak("V100 SXM2", 900.0, 15.7, 7.8, None,
                                  "NVIDIA Tesla V100 GPU Accelerator datasheet, https://images."
                                  "nvidia.com/content/technologies/volta/pdf/tesla-volta-v100-"
                                  "datasheet-letter-fnl-web.pdf",
                                  "https://cvw.cac.cornell.edu/gpu-architecture/gpu-example-"
                                  "tesla-v100/tesla (FP64 7.8, FP32 15.7 TFLOPS at 1.53 GHz); "
                                  "900 GB/s: https://huggingface.co/RajBhope/gpu-runtime-"
                                  "predictor/blob/main/gpu_catalog.json")),
    (r"\ba10\b", Peak("A10", 600.0, 31.2, None, None,
                      "NVIDIA A10 Tensor Core GPU Datasheet, https://www.nvidia.com/content/"
                      "dam/en-zz/Solutions/Data-Center/a10/pdf/datasheet-new/"
                      "nvidia-a10-datasheet.pdf",
                      "https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/ "
                      "(600 GB/s); https://sysrqmts.com/ru/gpus/compare/nvidia-a10-pcie-vs-"
                      "nvidia-quadro-rtx-4000 (FP32 31.24 TFLOPS)")),
    (r"\bl4\b", Peak("L4", 300.0, 30.3, None, None,
                     "NVIDIA L4 Tensor Core GPU Datasheet, https://resources.nvidia.com/"
                     "en-us-data-center-overview/l4-gpu-datasheet",
                     "https://grokipedia.com/page/NVIDIA_L4_vs_L40S (300 GB/s); "
                     "https://fpsbench.com/compare/gpu/nvidia-l4-vs-nvidia-tesla-m40 "
                     "(FP32 30.29 TFLOPS)")),
)


def _normalise(name: str) -> str:
    """Lower case, separators as spaces: ``NVIDIA A100-SXM4-80GB`` -> ``nvidia a100
    sxm4 80gb``."""
    return re.sub(r"[\s_\-/,()]+", " ", name.lower()).strip()


def vendor_peak(gpu_name: Any) -> Peak | None:
    """The datasheet peaks of the GPU the probe named (``nvidia-smi``'s or the CUDA
    runtime's name: ``NVIDIA H100 80GB HBM3`` is the H100 SXM5, ``NVIDIA H100 PCIe``
    the PCIe card, ``NVIDIA H200`` the H200 SXM); ``None`` for any other name,
    including variants whose figures were not checked (H100 NVL, H200 NVL, H800,
    GH200, A10G, V100 PCIe, V100S)."""
    if not isinstance(gpu_name, str) or not gpu_name.strip():
        return None
    name = _normalise(gpu_name)
    for pattern, peak in DEVICES:
        if re.search(pattern, name):
            return peak
    return None


def gpu_name(env_data: Mapping[str, Any]) -> str | None:
    """The GPU name the probe recorded: the ceilings' ``gpu_name`` (the device the
    ceilings were measured on), else the first of ``gpus``."""
    ceilings = env_data.get("ceilings")
    if isinstance(ceilings, Mapping) and isinstance(ceilings.get("gpu_name"), str):
        return str(ceilings["gpu_name"])
    gpus = env_data.get("gpus")
    if isinstance(gpus, list) and gpus and isinstance(gpus[0], Mapping):
        name = gpus[0].get("name")
        return str(name) if isinstance(name, str) else None
    return None


def unknown_text(name: str | None) -> str:
    """What the report says where no peak is known."""
    return (f"no vendor peak known for {name}" if name
            else "no vendor peak known: the probe recorded no GPU name")


def vendor_reference(row: Mapping[str, Any], peak: Peak | None) -> tuple[str, float, str]:
    """(label, value, the row's column it bounds) of the vendor peak a GPU row is read
    against: DRAM bandwidth (GB/s, ``gbps``) for memory-bound kernels, the FLOP peak of
    its dtype (GFLOP/s, ``gflops``) for matmul; ('', nan, '') otherwise (CPU rows,
    transfers: the host link is not in the table, unknown device)."""
    from gpubench.spec import kernel_bound

    if peak is None or row.get("device") != "gpu":
        return "", float("nan"), ""
    bound = kernel_bound(row.get("kernel"))
    if bound == "memory":
        return f"{peak.device} DRAM {peak.memory_gbps:,.0f} GB/s", peak.memory_gbps, "gbps"
    if bound == "compute":
        ref = peak.gflops_for(str(row.get("dtype")), gemm=True)
        if ref:
            return f"{peak.device} {ref[0]}", ref[1], "gflops"
    return "", float("nan"), ""


def pct_of_vendor(row: Mapping[str, Any], peak: Peak | None) -> tuple[str, float]:
    """(label, % of the vendor peak) for one result row; ('', nan) where none applies."""
    label, ref, key = vendor_reference(row, peak)
    if not label:
        return "", float("nan")
    try:
        value = float(row.get(key))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "", float("nan")
    if not (value > 0 and value < float("inf")):
        return "", float("nan")
    return label, 100.0 * value / ref
