#!/usr/bin/python3
"""torch's D = gelu(addmm(bias, A, B)) timed for `tilegraph-bench gemm` (its fused section).

Runs as a persistent child so that the suite can alternate it with the other peers round by
round. Protocol, one JSON object per line:
  out (start)  {"torch": version, "blas": ...}            or {"error": why} and exit
  in           {"m": M, "n": N, "k": K, "threads": T, "b_transposed": bool, "min_seconds": S}
  out          {"seconds": time per call, "calls": n}    or {"error": why}
A (row-major f32), B and bias are random, created once per shape (B as the transpose of an
N x K weight, as a linear layer stores it, when b_transposed); each request runs calls
until S seconds have passed (after one warm-up call) and reports the mean per call: one
repetition, of which the suite takes the median over its rounds.
"""
import json
import sys
import time


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:  # torch missing or broken: say so, the suite reports it
        reply({"error": "cannot import torch: %s" % e})
        return 0
    blas = "?"
    try:
        blas = torch.__config__.show().split("BLAS_INFO=")[1].split(",")[0]
    except Exception:
        pass
    reply({"torch": torch.__version__, "blas": blas})
    torch.manual_seed(0)
    operands = {}
    for line in sys.stdin:
        try:
            req = json.loads(line)
            m, n, k = int(req["m"]), int(req["n"]), int(req["k"])
            torch.set_num_threads(int(req["threads"]))
            transposed = bool(req.get("b_transposed", False))
            key = (m, n, k, transposed)
            if key not in operands:
                operands.clear()  # one shape at a time: the suite runs shapes in sequence
                b = (torch.rand(n, k) * 2 - 1).t() if transposed else torch.rand(k, n) * 2 - 1
                operands[key] = (torch.rand(m, k) * 2 - 1, b, torch.rand(n) * 4 - 2)
            a, b, bias = operands[key]

            def call():
                return F.gelu(torch.addmm(bias, a, b), approximate="tanh")

            call()
            calls = 0
            start = time.perf_counter()
            deadline = start + float(req["min_seconds"])
            while True:
                call()
                calls += 1
                now = time.perf_counter()
                if now >= deadline:
                    break
            reply({"seconds": (now - start) / calls, "calls": calls})
        except Exception as e:
            reply({"error": str(e)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
