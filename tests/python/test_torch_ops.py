"""torch.ops.tilegraph.* against torch's own matmul in float64 (docs/python.md).

Each distinct epilogue is a JIT compile of several seconds, so the module uses six kernels, all
in KERNELS, and compiles them up front from two threads (the cache builds distinct kernels
concurrently); every other call finds its kernel built.
"""
import ast
import concurrent.futures
import os
import subprocess
import sys

import pytest
import torch

import tilegraph

GELU_BIAS = "D = gelu(acc * alpha + bias[col])"
RELU_C = "D = relu(acc + C)"
# A column vector, a bf16 output (the type its cast names) and both kinds of reduction.
REDUCE = "t = acc * scale[row]\nD = bf16(t)\ns = row_sum(t)\nm = col_max(t)"
REDUCE_OUTPUTS = ("D", "s", "m")


def gelu(x):
    """The epilogue's gelu: the tanh approximation."""
    return torch.nn.functional.gelu(x, approximate="tanh")


def run_gelu_bias(a, b, bias, alpha=0.5):
    return tilegraph.evg_matmul(a, b, GELU_BIAS, bias=bias, alpha=alpha)


def run_relu_c(a, b, c):
    return tilegraph.evg_matmul(a, b, RELU_C, C=c)


def run_reduce(a, b, scale):
    return tilegraph.evg_matmul(a, b, REDUCE, scale=scale, outputs=REDUCE_OUTPUTS)


# One small call of each kernel the module uses.
KERNELS = [
    lambda: tilegraph.basic_matmul(torch.randn(3, 4), torch.randn(4, 5)),
    lambda: tilegraph.basic_matmul(torch.randn(3, 4), torch.randn(4, 5), out_dtype="float16"),
    lambda: tilegraph.basic_matmul(torch.randn(3, 4), torch.randn(4, 5), out_dtype=torch.bfloat16),
    lambda: run_gelu_bias(torch.randn(3, 4), torch.randn(4, 5), torch.randn(5)),
    lambda: run_relu_c(torch.randn(3, 4), torch.randn(4, 5), torch.randn(3, 5)),
    lambda: run_reduce(torch.randn(3, 4), torch.randn(4, 5), torch.randn(3)),
]


@pytest.fixture(scope="module", autouse=True)
def compiled_kernels():
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for future in [pool.submit(kernel) for kernel in KERNELS]:
            future.result()


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def matrix(rows, cols, dtype=torch.float32, layout="row"):
    """rows x cols of `dtype`: packed, a transposed view, every other column, or padded rows."""
    if layout == "row":
        return torch.randn(rows, cols).to(dtype)
    if layout == "t":
        return torch.randn(cols, rows).to(dtype).t()
    if layout == "slice":
        return torch.randn(rows, 2 * cols).to(dtype)[:, ::2]
    if layout == "padded":
        return torch.randn(rows, cols + 5).to(dtype)[:, :cols]
    raise ValueError(layout)


def accumulation_bound(a, b):
    """f32 accumulation over K terms: within (K + 2) units in the last place of sum |a b|.

    The reference multiplies the very values the GEMM reads (f16 and bf16 inputs are exact in
    float64 and in f32 products), so the input precision adds nothing beyond this.
    """
    k = a.shape[1]
    return (k + 2) * 2.0**-24 * (a.double().abs() @ b.double().abs())


OUT_EPS = {torch.float32: 0.0, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}


def assert_close(got, want, tol):
    assert got.shape == want.shape
    err = (got.double() - want).abs()
    bad = ~(err <= tol)
    assert not bool(bad.any()), f"{int(bad.sum())} elements out of bound; worst excess {float((err - tol).max()):.3g}"


def assert_matmul(got, a, b, out_dtype=torch.float32):
    assert got.dtype == out_dtype and got.device.type == "cpu"
    want = a.double() @ b.double()
    bound = accumulation_bound(a, b)
    eps = OUT_EPS[out_dtype]
    # The cast rounds the result to nearest; float16 subnormals are 2^-24 apart.
    tol = bound + eps * (want.abs() + bound) + (2.0**-25 if out_dtype == torch.float16 else 0.0)
    assert_close(got, want, tol)


# -- basic_matmul ------------------------------------------------------------------------------

SHAPES = [
    (1, 1, 1), (1, 61, 113), (37, 1, 113), (37, 61, 1), (37, 61, 113),
    (0, 61, 113), (37, 0, 113), (37, 61, 0), (0, 0, 0),
    (211, 401, 263),  # several blocks, partial ones, more than one K block
]


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_basic_matmul_shapes(m, n, k):
    a, b = matrix(m, k), matrix(k, n)
    assert_matmul(tilegraph.basic_matmul(a, b), a, b)


LAYOUTS = ["row", "t", "slice", "padded"]


@pytest.mark.parametrize("layout_a", LAYOUTS)
@pytest.mark.parametrize("layout_b", LAYOUTS)
def test_basic_matmul_layouts(layout_a, layout_b):
    a, b = matrix(37, 113, layout=layout_a), matrix(113, 61, layout=layout_b)
    assert_matmul(tilegraph.basic_matmul(a, b), a, b)


@pytest.mark.parametrize("m,n,k", [(1, 61, 113), (37, 1, 113), (1, 1, 7)])
def test_basic_matmul_vectors_in_any_strides(m, n, k):
    # A dimension of size 1 has no meaningful stride: slices of it run like any other.
    a = torch.randn(m, 3 * k)[:, ::3]
    b = torch.randn(3 * n, k).t()[:, ::3]
    assert_matmul(tilegraph.basic_matmul(a, b), a, b)


DTYPES = [torch.float32, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("dtype_a", DTYPES)
@pytest.mark.parametrize("dtype_b", DTYPES)
def test_basic_matmul_input_dtypes(dtype_a, dtype_b):
    a, b = matrix(37, 113, dtype_a), matrix(113, 61, dtype_b, layout="t")
    assert_matmul(tilegraph.basic_matmul(a, b), a, b)


@pytest.mark.parametrize("out_dtype", ["float16", torch.float16, "half", "bfloat16", torch.bfloat16, "float32"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_basic_matmul_out_dtype(out_dtype, dtype):
    a, b = matrix(37, 113, dtype), matrix(113, 61, dtype)
    want_dtype = getattr(torch, out_dtype) if isinstance(out_dtype, str) else out_dtype
    assert_matmul(tilegraph.basic_matmul(a, b, out_dtype=out_dtype), a, b, want_dtype)


def test_basic_matmul_through_torch_ops():
    a, b = matrix(5, 7), matrix(7, 3)
    assert_matmul(torch.ops.tilegraph.basic_matmul(a, b), a, b)
    assert_matmul(torch.ops.tilegraph.basic_matmul(a, b, torch.float16), a, b, torch.float16)


def test_results_do_not_depend_on_the_thread_count(two_threads):
    a, b = matrix(211, 263), matrix(263, 401, layout="t")
    scale = torch.randn(211)
    two = tilegraph.basic_matmul(a, b), run_reduce(a, b, scale)
    torch.set_num_threads(1)
    one = tilegraph.basic_matmul(a, b), run_reduce(a, b, scale)
    assert torch.equal(two[0], one[0])
    for x, y in zip(two[1], one[1]):
        assert torch.equal(x, y)


def test_concurrent_callers(two_threads):
    # torch.ops calls drop the GIL: each calling thread runs in a workspace of its own.
    cases = [(matrix(m, 97), matrix(97, 53 + m)) for m in (1, 30, 64, 129, 200, 7, 90, 33)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda ab: tilegraph.basic_matmul(*ab), cases * 4))
    for (a, b), got in zip(cases * 4, results):
        assert_matmul(got, a, b)


# -- evg_matmul --------------------------------------------------------------------------------


@pytest.mark.parametrize("m,n,k", [(37, 61, 113), (1, 1, 1), (1, 61, 113), (37, 1, 113), (0, 61, 113), (37, 61, 0),
                                   (211, 401, 263)])
def test_gelu_bias(m, n, k):
    a, b, bias = matrix(m, k), matrix(k, n, layout="t"), torch.randn(n)
    got = run_gelu_bias(a, b, bias, alpha=0.5)
    want = gelu(0.5 * (a.double() @ b.double()) + bias.double())
    # gelu's slope is at most 1.13; then a few ulps of gelu evaluated in f32.
    assert_close(got, want, 1.13 * 0.5 * accumulation_bound(a, b) + 4e-7 * (want.abs() + 1))


def test_gelu_bias_operands_in_any_order_and_strides():
    a, b = matrix(37, 113), matrix(113, 61)
    bias = torch.randn(3 * 61)[::3]
    got = tilegraph.evg_matmul(a, b, GELU_BIAS, alpha=2, bias=bias)
    want = gelu(2 * (a.double() @ b.double()) + bias.double())
    assert_close(got, want, 1.13 * 2 * accumulation_bound(a, b) + 4e-7 * (want.abs() + 1))


@pytest.mark.parametrize("layout", ["row", "t", "slice", "padded", "broadcast"])
def test_relu_plus_matrix(layout):
    a, b = matrix(37, 113, torch.bfloat16), matrix(113, 61, torch.float16)
    c = torch.randn(61).expand(37, 61) if layout == "broadcast" else matrix(37, 61, layout=layout)
    got = run_relu_c(a, b, c)
    want = torch.relu(a.double() @ b.double() + c.double())
    assert got.dtype == torch.float32
    assert_close(got, want, accumulation_bound(a, b) + 2.0**-24 * want.abs())


@pytest.mark.parametrize("m,n,k", [(37, 61, 113), (1, 61, 113), (37, 1, 113), (0, 61, 113), (37, 61, 0),
                                   (211, 401, 263)])
def test_column_vector_and_reductions(m, n, k):
    a, b, scale = matrix(m, k), matrix(k, n), torch.randn(m)
    d, s, mx = run_reduce(a, b, scale)
    t = (a.double() @ b.double()) * scale.double()[:, None]
    tol = scale.double().abs()[:, None] * accumulation_bound(a, b) + 2.0**-24 * t.abs()
    assert d.dtype == torch.bfloat16 and s.dtype == mx.dtype == torch.float32
    assert s.shape == (n,) and mx.shape == (m,)
    assert_close(d, t, tol + 2.0**-8 * (t.abs() + tol))
    # A sum of M values each within its bound, then M roundings of the running sum.
    assert_close(s, t.sum(0), tol.sum(0) + m * 2.0**-24 * t.abs().sum(0))
    assert_close(mx, t.max(1).values, tol.max(1).values)


def test_evg_matmul_through_torch_ops():
    a, b, c = matrix(5, 7), matrix(7, 3), matrix(5, 3)
    (got,) = torch.ops.tilegraph.evg_matmul(a, b, RELU_C, ["C"], [c], [], [], None, None)
    assert_close(got, torch.relu(a.double() @ b.double() + c.double()), accumulation_bound(a, b) + 1e-7)


@torch.jit.script
def scripted_gelu_bias(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    # TorchScript takes no Python globals: GELU_BIAS written out.
    return torch.ops.tilegraph.evg_matmul(a, b, "D = gelu(acc * alpha + bias[col])", ["bias"], [bias], ["alpha"],
                                          [0.5], None, None)[0]


def test_torchscript_calls_the_ops():
    a, b, bias = matrix(5, 7), matrix(7, 3), torch.randn(3)
    assert torch.equal(scripted_gelu_bias(a, b, bias), run_gelu_bias(a, b, bias))


# -- the in-process cache and the JIT's disk cache -----------------------------------------------


def test_every_kernel_is_compiled_once():
    stats = tilegraph.cache_stats()
    assert stats.jit_compiles == len(KERNELS), "a test compiled a kernel outside KERNELS"


def test_a_second_call_hits_the_cache():
    a, b, bias = matrix(9, 11), matrix(11, 13), torch.randn(13)
    run_gelu_bias(a, b, bias)
    before = tilegraph.cache_stats()
    run_gelu_bias(a, b, bias)
    tilegraph.evg_matmul(a, b, GELU_BIAS, alpha=0.5, bias=bias)  # keywords in another order
    after = tilegraph.cache_stats()
    assert after.hits == before.hits + 2
    assert (after.misses, after.kernels, after.jit_compiles) == (before.misses, before.kernels, before.jit_compiles)


def test_a_new_process_loads_the_kernel_from_disk():
    script = (
        "import torch, tilegraph\n"
        "tilegraph.basic_matmul(torch.randn(2, 3), torch.randn(3, 4))\n"
        "print(tuple(tilegraph.cache_stats()))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env=os.environ.copy(), capture_output=True, text=True,
                         check=True)
    kernels, hits, misses, jit_compiles, jit_disk_hits = ast.literal_eval(out.stdout)
    assert (kernels, misses, jit_compiles, jit_disk_hits) == (1, 1, 0, 1)


# -- errors: RuntimeErrors with the op's name, never a crash ---------------------------------------


def raises(pattern):
    return pytest.raises(RuntimeError, match=pattern)


def test_k_mismatch():
    with raises(r"tilegraph\.basic_matmul: a is 5x7 and b is 6x3: a's columns must equal b's rows \(K\)"):
        tilegraph.basic_matmul(matrix(5, 7), matrix(6, 3))


def test_not_a_matrix():
    with raises(r"a is 3-D \(2x5x7\); expected a 2-D matrix"):
        tilegraph.basic_matmul(torch.randn(2, 5, 7), matrix(7, 3))
    with raises(r"b is 1-D \(7\); expected a 2-D matrix"):
        tilegraph.evg_matmul(matrix(5, 7), torch.randn(7), RELU_C, C=matrix(5, 3))


def test_unsupported_dtypes():
    with raises(r"a is float64; the GEMM takes float32, float16 or bfloat16"):
        tilegraph.basic_matmul(matrix(5, 7).double(), matrix(7, 3))
    with raises(r"b is int32"):
        tilegraph.basic_matmul(matrix(5, 7), torch.ones(7, 3, dtype=torch.int32))
    with raises(r"out_dtype float64: basic_matmul writes float32, float16 or bfloat16"):
        tilegraph.basic_matmul(matrix(5, 7), matrix(7, 3), out_dtype="float64")
    with raises(r"'C' is int64; operands are float32, float16, bfloat16, int8 or int32"):
        run_relu_c(matrix(5, 7), matrix(7, 3), torch.ones(5, 3, dtype=torch.int64))


def test_other_devices():
    with raises(r"a is on meta; the tilegraph ops run on the CPU"):
        tilegraph.basic_matmul(torch.empty(5, 7, device="meta"), matrix(7, 3))
    if torch.cuda.is_available():
        with raises(r"b is on cuda:0; the tilegraph ops run on the CPU"):
            tilegraph.basic_matmul(matrix(5, 7), matrix(7, 3).cuda())


def test_bad_epilogues_name_the_position():
    a, b, c = matrix(5, 7), matrix(7, 3), matrix(5, 3)
    with raises(r"tilegraph\.evg_matmul: evg: 1:16: unknown name 'Cx' \(declared: acc, C, D\)"):
        tilegraph.evg_matmul(a, b, "D = relu(acc + Cx)", C=c)
    with raises(r"evg: 2:9: expected a value"):
        tilegraph.evg_matmul(a, b, "t = acc\nD = t + *", C=c)
    with raises(r"evg: 1:1: type mismatch: output 'D' is f16 but its value is f32: write D = f16\(\.\.\.\)"):
        tilegraph.evg_matmul(a, b, RELU_C, C=c, out_dtype=torch.float16)
    with raises(r"row_sum\(\.\.\.\) reduces over the whole output"):
        tilegraph.evg_matmul(a, b, "D = acc\nr = row_sum(D)")


def test_operand_mistakes_cost_no_compile():
    a, b = matrix(5, 7), matrix(7, 3)
    before = tilegraph.cache_stats()
    with raises(r"'bias' is 1-D \(5\); as bias\[col\], a row vector, must be N = 3 long"):
        run_gelu_bias(a, b, torch.randn(5))
    with raises(r"'C' is 2-D \(3x5\); as C, a matrix, must be M x N = 5x3"):
        tilegraph.evg_matmul(a, b, "D = relu(acc + C) * 2", C=matrix(3, 5))
    with raises(r"'scale' is 0-D; operands are 1-D vectors or 2-D matrices \(pass scalars as numbers\)"):
        run_reduce(a, b, torch.tensor(2.0))
    with raises(r"'C' is named twice"):
        torch.ops.tilegraph.evg_matmul(a, b, RELU_C, ["C"], [matrix(5, 3)], ["C"], [1.0], None, None)
    with raises(r"1 names for 0 tensors"):
        torch.ops.tilegraph.evg_matmul(a, b, RELU_C, ["C"], [], [], [], None, None)
    after = tilegraph.cache_stats()
    assert (after.misses, after.jit_compiles) == (before.misses, before.jit_compiles)


def test_wrapper_argument_errors():
    a, b = matrix(5, 7), matrix(7, 3)
    with pytest.raises(ValueError, match="out_dtype 'float17' is not the name of a torch dtype"):
        tilegraph.basic_matmul(a, b, out_dtype="float17")
    with pytest.raises(TypeError, match="operand 'C' must be a tensor or a number, not list"):
        tilegraph.evg_matmul(a, b, RELU_C, C=[1.0])
