"""tilegraph's torch ops: GEMMs with string-declared epilogues on the CPU, through tilegraph's JIT.

    import torch, tilegraph
    d = tilegraph.basic_matmul(a, b, out_dtype="float16")
    d = tilegraph.evg_matmul(a, b, "D = gelu(acc * alpha + bias[col])", bias=bias, alpha=0.5)

Importing the package loads the extension, which registers torch.ops.tilegraph.* (docs/python.md).
"""
from pathlib import Path

import torch

_LIBRARY = Path(__file__).with_name("libtilegraph_torch.so")
if not _LIBRARY.exists():
    raise ImportError(
        f"tilegraph: the torch extension {_LIBRARY} is missing: build it with "
        "`ninja -C build tilegraph_torch` and put build/python on PYTHONPATH"
    )
torch.ops.load_library(str(_LIBRARY))

from .ops import CacheStats, basic_matmul, cache_stats, evg_matmul  # noqa: E402

__all__ = ["basic_matmul", "evg_matmul", "cache_stats", "CacheStats"]
