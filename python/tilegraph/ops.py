"""The Python layer of the torch_catlass-style flow: friendly wrappers over torch.ops.tilegraph.* (docs/python.md).

They only normalise arguments (out_dtype given as a name, operands given as keywords); every check
on tensors, shapes and epilogues is the op's, and its failures are RuntimeErrors.
"""
from typing import NamedTuple, Optional, Sequence, Tuple, Union

import torch

DType = Union[None, str, torch.dtype]


def _dtype(out_dtype: DType) -> Optional[torch.dtype]:
    """torch.float16 for torch.float16, "float16" or "half" (any torch.<name> that is a dtype)."""
    if out_dtype is None or isinstance(out_dtype, torch.dtype):
        return out_dtype
    if isinstance(out_dtype, str):
        dtype = getattr(torch, out_dtype, None)
        if isinstance(dtype, torch.dtype):
            return dtype
        raise ValueError(f"out_dtype {out_dtype!r} is not the name of a torch dtype (e.g. 'float16')")
    raise TypeError(f"out_dtype must be a torch.dtype, a dtype name or None, not {type(out_dtype).__name__}")


def basic_matmul(a: torch.Tensor, b: torch.Tensor, out_dtype: DType = None) -> torch.Tensor:
    """a (M x K) @ b (K x N) with f32 accumulation, as out_dtype (float32, float16, bfloat16)."""
    return torch.ops.tilegraph.basic_matmul(a, b, _dtype(out_dtype))


def evg_matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    epilogue: str,
    /,
    *,
    out_dtype: DType = None,
    outputs: Union[str, Sequence[str]] = "D",
    **operands: Union[torch.Tensor, float],
) -> Union[torch.Tensor, Tuple[torch.Tensor, ...]]:
    """The epilogue's outputs over acc = a @ b.

    Operands are keywords: a tensor is a matrix (M x N) or, indexed in the epilogue, a row vector
    (bias[col], N long) or column vector (scale[row], M long); a number is an f32 scalar.
    `outputs` names what to return: one name returns that tensor, a sequence a tuple in its order
    (row_*/col_* reductions are float32 vectors of N / M values).

        d = evg_matmul(a, b, "D = gelu(acc * alpha + bias[col])", bias=bias, alpha=0.5)
        d, r = evg_matmul(a, b, "D = acc + C; r = row_sum(D)", C=c, outputs=("D", "r"))
    """
    names, tensors, scalar_names, scalars = [], [], [], []
    for name, value in operands.items():
        if isinstance(value, torch.Tensor):
            names.append(name)
            tensors.append(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            scalar_names.append(name)
            scalars.append(float(value))
        else:
            raise TypeError(f"operand {name!r} must be a tensor or a number, not {type(value).__name__}")
    single = isinstance(outputs, str)
    results = torch.ops.tilegraph.evg_matmul(
        a, b, epilogue, names, tensors, scalar_names, scalars, _dtype(out_dtype),
        [outputs] if single else list(outputs),
    )
    return results[0] if single else tuple(results)


class CacheStats(NamedTuple):
    kernels: int  # kernels built and held in this process
    hits: int  # calls that found their kernel built
    misses: int  # calls that built it
    jit_compiles: int  # kernels this process compiled (the rest of the misses came from memory or disk)
    jit_disk_hits: int  # kernels this process loaded from the JIT's disk cache


def cache_stats() -> CacheStats:
    """The in-process kernel cache's counters and the JIT's, for this process."""
    return CacheStats(*torch.ops.tilegraph.cache_stats())
