// The ShardingInterface's rules checked by what they claim: for every op kind, on random shapes
// (sizes 1, primes, channels around 32, 64 and 128) and random output windows, the op computed
// on the operand windows backWindow returns equals the same window of the op's full result, bit
// for bit (each window runs the same reference code on the same values). The split and per-step
// queries are checked on the cases where an op must refuse or map dimensions in a stated way.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <mlir/IR/BuiltinOps.h>
#include <mlir/Parser/Parser.h>

#include "compiler_case.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/compiler/host_tensor.h"
#include "tilegraph/compiler/interpreter.h"
#include "tilegraph/core/dtype.h"
#include "tilegraph/core/quant.h"

namespace tg::compiler::tx8be {
namespace {

using Shape = std::vector<int64_t>;
using Rng = std::mt19937;

int64_t pick(Rng& rng, std::initializer_list<int64_t> values) {
  return *(values.begin() + std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng));
}
int64_t uniform(Rng& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

// Sizes a dimension takes: 1, primes, and channel counts around 32, 64 and 128.
int64_t edge_size(Rng& rng) { return pick(rng, {1, 2, 3, 5, 7, 13, 31, 32, 33, 63, 64, 65, 127, 128, 129}); }
int64_t small_size(Rng& rng) { return pick(rng, {1, 2, 3, 4, 5, 7}); }
int64_t divisor_of(Rng& rng, int64_t n) {
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) divisors.push_back(d);
  }
  return divisors[size_t(uniform(rng, 0, int64_t(divisors.size()) - 1))];
}

std::string element_name(DType type) {
  switch (type) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::I32: return "i32";
    case DType::Q8_0: return "!tx8be.q<\"q8_0\">";
    default: return "f32";
  }
}

std::string type_name(DType type, const Shape& shape) {
  std::string text = "tensor<";
  for (int64_t s : shape) text += std::to_string(s) + "x";
  return text + element_name(type) + ">";
}

// Random values of `type`; i32 tensors hold indices in [0, index_limit).
HostTensor random_tensor(Rng& rng, DType type, const Shape& shape, int64_t index_limit = 0) {
  HostTensor t = HostTensor::zeros(type, shape);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  const auto n = size_t(t.elements());
  auto* bytes = static_cast<std::byte*>(t.mutable_data());
  if (type == DType::F32) {
    for (size_t i = 0; i < n; ++i) reinterpret_cast<float*>(bytes)[i] = value(rng);
  } else if (type == DType::F16) {
    for (size_t i = 0; i < n; ++i) reinterpret_cast<f16*>(bytes)[i] = f32_to_f16(value(rng));
  } else if (type == DType::I32) {
    for (size_t i = 0; i < n; ++i) reinterpret_cast<int32_t*>(bytes)[i] = int32_t(uniform(rng, 0, index_limit - 1));
  } else if (type == DType::Q8_0) {
    auto* blocks = reinterpret_cast<BlockQ8_0*>(bytes);
    for (size_t b = 0; b < n / 32; ++b) {
      blocks[b].d = f32_to_f16(0.01f + 0.02f * float(uniform(rng, 0, 9)));
      for (int8_t& q : blocks[b].qs) q = int8_t(uniform(rng, -127, 127));
    }
  }
  return t;
}

// The window [start, start + size) of `t`, with `fill` outside `t` (a window may reach past its
// edges: the halo of a padded convolution). Block-quantized tensors are cut along whole rows.
HostTensor slice(const HostTensor& t, const Shape& start, const Shape& size, float fill = 0.0f) {
  HostTensor out = HostTensor::zeros(t.type(), size);
  const int rank = t.rank();
  const bool blocks = is_quantized(t.type());
  const Shape& shape = t.shape();
  const size_t row_bytes =
      rank == 0 ? t.nbytes() : t.nbytes() / size_t(std::max<int64_t>(t.elements() / shape.back(), 1));
  const size_t element = blocks ? 0 : dtype_traits(t.type()).type_size;
  if (out.elements() == 0) return out;
  auto* dst = static_cast<std::byte*>(out.mutable_data());
  if (!blocks && fill != 0.0f) {
    for (int64_t i = 0; i < out.elements(); ++i) {
      if (t.type() == DType::F32) reinterpret_cast<float*>(dst)[i] = fill;
    }
  }
  const auto* src = static_cast<const std::byte*>(t.data());
  Shape index(size_t(rank), 0);
  for (int64_t i = 0; i < out.elements(); ++i) {
    int64_t rest = i;
    for (int d = rank - 1; d >= 0; --d) {
      index[size_t(d)] = rest % size[size_t(d)];
      rest /= size[size_t(d)];
    }
    if (blocks && index.back() != 0) continue;  // whole rows at once
    bool inside = true;
    int64_t flat = 0;
    for (int d = 0; d < rank; ++d) {
      const int64_t at = start[size_t(d)] + index[size_t(d)];
      inside = inside && at >= 0 && at < shape[size_t(d)];
      flat = flat * shape[size_t(d)] + at;
    }
    if (!inside) continue;
    if (blocks) {
      std::memcpy(dst + size_t(i / size.back()) * row_bytes, src + size_t(flat / shape.back()) * row_bytes, row_bytes);
    } else {
      std::memcpy(dst + size_t(i) * element, src + size_t(flat) * element, element);
    }
  }
  return out;
}

struct Operand {
  Operand(DType type, Shape shape, int64_t index_limit = 0)
      : type(type), shape(std::move(shape)), index_limit(index_limit) {}
  DType type;
  Shape shape;
  int64_t index_limit;  // i32: indices below it
};

struct OpCase {
  OpCase(std::string op, std::string attrs, std::vector<Operand> operands, DType result_type, Shape result,
         std::optional<float> pad_fill = std::nullopt)
      : op(std::move(op)),
        attrs(std::move(attrs)),
        operands(std::move(operands)),
        result_type(result_type),
        result(std::move(result)),
        pad_fill(pad_fill) {}
  std::string op;  // mnemonic
  std::string attrs;
  std::vector<Operand> operands;
  DType result_type;
  Shape result;
  // Conv and pool: the window along H and W reaches into padding, filled with this value.
  std::optional<float> pad_fill;
};

std::string attr_dict(const std::string& attrs) { return attrs.empty() ? "" : " {" + attrs + "}"; }

std::string module_text(const std::string& op, const std::string& attrs, const std::vector<std::string>& operand_types,
                        const std::string& result) {
  std::string args, names, types;
  for (size_t i = 0; i < operand_types.size(); ++i) {
    const std::string sep = i ? ", " : "";
    args += sep + "%a" + std::to_string(i) + ": " + operand_types[i];
    names += sep + "%a" + std::to_string(i);
    types += sep + operand_types[i];
  }
  return "func.func @main(" + args + ") -> " + result + " {\n  %0 = tx8be." + op + " " + names + attr_dict(attrs) +
         " : (" + types + ") -> " + result + "\n  return %0 : " + result + "\n}\n";
}

std::string dense_pair(int64_t h, int64_t w) { return "[:i64 " + std::to_string(h) + ", " + std::to_string(w) + "]"; }

// Random instances of each op kind.
using CaseMaker = std::function<OpCase(Rng&)>;

std::vector<std::pair<std::string, CaseMaker>> op_kinds() {
  std::vector<std::pair<std::string, CaseMaker>> kinds;
  auto image = [](Rng& rng) {
    return Shape{small_size(rng), edge_size(rng), small_size(rng) + 2, small_size(rng) + 2};
  };
  for (const char* unary : {"relu", "gelu", "gelu_erf", "silu", "sigmoid", "tanh", "exp", "neg", "abs", "sqrt", "rsqrt",
                            "load_var", "store_var", "channel_norm"}) {
    kinds.push_back({unary, [unary, image](Rng& rng) {
                       const Shape s = image(rng);
                       return OpCase{unary, "", {{DType::F32, s}}, DType::F32, s, {}};
                     }});
  }
  kinds.push_back(
      {"scale", [image](Rng& rng) {
         const Shape s = image(rng);
         return OpCase{"scale", "scale = 0.5 : f32, bias = 0.25 : f32", {{DType::F32, s}}, DType::F32, s, {}};
       }});
  kinds.push_back({"convert", [image](Rng& rng) {
                     const Shape s = image(rng);
                     return OpCase{"convert", "", {{DType::F32, s}}, DType::F16, s, {}};
                   }});
  for (const char* binary : {"add", "sub", "mul", "div"}) {
    kinds.push_back({binary, [binary](Rng& rng) {
                       const Shape lhs{small_size(rng), edge_size(rng), small_size(rng) * 2, small_size(rng) * 3};
                       Shape rhs;
                       for (int64_t s : lhs) rhs.push_back(uniform(rng, 0, 2) == 0 ? s : divisor_of(rng, s));
                       return OpCase{binary, "", {{DType::F32, lhs}, {DType::F32, rhs}}, DType::F32, lhs, {}};
                     }});
  }
  kinds.push_back({"broadcast", [](Rng& rng) {
                     const Shape out{small_size(rng), small_size(rng) * 2, edge_size(rng), small_size(rng) * 3};
                     Shape in;
                     for (int64_t s : out) in.push_back(divisor_of(rng, s));
                     return OpCase{"broadcast", "", {{DType::F32, in}}, DType::F32, out, {}};
                   }});
  kinds.push_back({"batchnorm_inference", [image](Rng& rng) {
                     const Shape s = image(rng);
                     const Shape c{s[1]};
                     OpCase k{"batchnorm_inference", "epsilon = 1.0e-5 : f32", {{DType::F32, s}}, DType::F32, s, {}};
                     for (int i = 0; i < 4; ++i) k.operands.push_back({DType::F32, c});
                     return k;
                   }});
  kinds.push_back({"matmul", [](Rng& rng) {
                     const int64_t a2 = small_size(rng);
                     const int64_t b2 = a2 * small_size(rng);
                     const DType lhs_type = uniform(rng, 0, 2) == 0 ? DType::Q8_0 : DType::F16;
                     const int64_t k = lhs_type == DType::Q8_0 ? 32 * pick(rng, {1, 2, 4}) : edge_size(rng);
                     const int64_t m = edge_size(rng);
                     const int64_t n = small_size(rng);
                     return OpCase{
                         "matmul",      "", {{lhs_type, {1, a2, m, k}}, {DType::F32, {2, b2, n, k}}}, DType::F32,
                         {2, b2, n, m}, {}};
                   }});
  kinds.push_back({"conv2d", [](Rng& rng) {
                     const int64_t kh = pick(rng, {1, 2, 3}), kw = pick(rng, {1, 3});
                     const int64_t sh = pick(rng, {1, 2}), sw = pick(rng, {1, 2});
                     const int64_t ph = uniform(rng, 0, 2), pw = uniform(rng, 0, 1);
                     const int64_t dh = pick(rng, {1, 2}), dw = 1;
                     const int64_t h = dh * (kh - 1) + 1 + uniform(rng, 0, 9), w = kw + uniform(rng, 0, 8);
                     const int64_t c = pick(rng, {1, 3, 5, 32, 33});
                     const int64_t o = pick(rng, {1, 2, 7, 31, 64, 65});
                     const int64_t n = small_size(rng);
                     const int64_t oh = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1;
                     const int64_t ow = (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
                     return OpCase{"conv2d",
                                   "strides = " + dense_pair(sh, sw) + ", pads = " + dense_pair(ph, pw) +
                                       ", dilations = " + dense_pair(dh, dw),
                                   {{DType::F32, {n, c, h, w}}, {DType::F32, {o, c, kh, kw}}},
                                   DType::F32,
                                   {n, o, oh, ow},
                                   0.0f};
                   }});
  for (const char* mode : {"max", "avg"}) {
    kinds.push_back({std::string("pool2d_") + mode, [mode](Rng& rng) {
                       const int64_t kh = pick(rng, {2, 3}), kw = pick(rng, {1, 2, 3});
                       const int64_t sh = pick(rng, {1, 2}), sw = pick(rng, {1, 2, 3});
                       const int64_t ph = uniform(rng, 0, kh / 2), pw = uniform(rng, 0, kw / 2);
                       const int64_t h = kh + uniform(rng, 0, 9), w = kw + uniform(rng, 0, 9);
                       const Shape in{small_size(rng), edge_size(rng), h, w};
                       const int64_t oh = (h + 2 * ph - kh) / sh + 1, ow = (w + 2 * pw - kw) / sw + 1;
                       return OpCase{"pool2d",
                                     std::string("mode = \"") + mode + "\", kernel = " + dense_pair(kh, kw) +
                                         ", strides = " + dense_pair(sh, sw) + ", pads = " + dense_pair(ph, pw),
                                     {{DType::F32, in}},
                                     DType::F32,
                                     {in[0], in[1], oh, ow},
                                     std::string(mode) == "max" ? -INFINITY : 0.0f};
                     }});
  }
  for (const char* row_op : {"rmsnorm", "layernorm"}) {
    kinds.push_back({row_op, [row_op](Rng& rng) {
                       const Shape s{small_size(rng), small_size(rng), edge_size(rng), edge_size(rng)};
                       return OpCase{row_op, "epsilon = 1.0e-5 : f32", {{DType::F32, s}}, DType::F32, s, {}};
                     }});
  }
  kinds.push_back({"sum_rows", [](Rng& rng) {
                     const Shape s{small_size(rng), small_size(rng), edge_size(rng), edge_size(rng)};
                     return OpCase{"sum_rows", "", {{DType::F32, s}}, DType::F32, {s[0], s[1], s[2], 1}, {}};
                   }});
  kinds.push_back({"argmax", [](Rng& rng) {
                     const Shape s{edge_size(rng), edge_size(rng)};
                     return OpCase{"argmax", "", {{DType::F32, s}}, DType::I32, {s[0]}, {}};
                   }});
  kinds.push_back(
      {"softmax", [](Rng& rng) {
         const Shape s{small_size(rng) * 2, small_size(rng), edge_size(rng), edge_size(rng)};
         OpCase k{"softmax", "scale = 0.5 : f32", {{DType::F32, s}}, DType::F32, s, {}};
         if (uniform(rng, 0, 1)) {
           k.operands.push_back(
               {DType::F32, {divisor_of(rng, s[0]), divisor_of(rng, s[1]), s[2] + uniform(rng, 0, 3), s[3]}});
         }
         return k;
       }});
  kinds.push_back({"rope", [](Rng& rng) {
                     const int64_t d = pick(rng, {2, 4, 8, 64, 128});
                     const int64_t t = edge_size(rng) % 17 + 1;
                     const Shape s{1, t, small_size(rng), d};
                     const int64_t n_dims = 2 * uniform(rng, 1, d / 2);
                     return OpCase{"rope",
                                   "n_dims = " + std::to_string(n_dims) +
                                       " : i32, mode = " + std::to_string(pick(rng, {0, 2})) + " : i32",
                                   {{DType::F32, s}, {DType::I32, {t}, 4096}},
                                   DType::F32,
                                   s,
                                   {}};
                   }});
  kinds.push_back({"attention", [](Rng& rng) {
                     const int64_t hkv = pick(rng, {1, 2, 3});
                     const int64_t h = hkv * pick(rng, {1, 2, 4});
                     const int64_t b = pick(rng, {1, 2});
                     const int64_t nq = pick(rng, {1, 2, 5, 7});
                     const int64_t nkv = pick(rng, {1, 3, 32, 33});
                     const int64_t d = pick(rng, {4, 16, 64}), dv = pick(rng, {4, 16});
                     OpCase k{
                         "attention",
                         "scale = 0.25 : f32",
                         {{DType::F32, {b, h, nq, d}}, {DType::F16, {b, hkv, nkv, d}}, {DType::F16, {b, hkv, nkv, dv}}},
                         DType::F32,
                         {b, nq, h, dv},
                         {}};
                     if (uniform(rng, 0, 1))
                       k.operands.push_back({DType::F32, {pick(rng, {1, b}), pick(rng, {1, h}), nq, nkv}});
                     return k;
                   }});
  kinds.push_back({"reshape", [](Rng& rng) {
                     const int64_t a = small_size(rng), b = edge_size(rng), c = small_size(rng) * 2;
                     return OpCase{"reshape", "", {{DType::F32, {a, b, c}}}, DType::F32, {a * b, c / 2, 2}, {}};
                   }});
  kinds.push_back({"transpose", [](Rng& rng) {
                     const Shape s{small_size(rng), edge_size(rng), small_size(rng), small_size(rng) + 1};
                     std::vector<int64_t> perm{0, 1, 2, 3};
                     std::shuffle(perm.begin(), perm.end(), rng);
                     Shape out;
                     for (int64_t p : perm) out.push_back(s[size_t(p)]);
                     return OpCase{"transpose",
                                   "perm = [:i64 " + std::to_string(perm[0]) + ", " + std::to_string(perm[1]) + ", " +
                                       std::to_string(perm[2]) + ", " + std::to_string(perm[3]) + "]",
                                   {{DType::F32, s}},
                                   DType::F32,
                                   out,
                                   {}};
                   }});
  kinds.push_back({"view", [](Rng& rng) {
                     const int64_t rows = edge_size(rng) + 2, cols = edge_size(rng) + 1;
                     const int64_t r = uniform(rng, 1, rows - 1), c = uniform(rng, 1, cols);
                     const int64_t offset = uniform(rng, 0, rows - r) * cols + uniform(rng, 0, cols - c);
                     return OpCase{"view",
                                   "offset = " + std::to_string(offset) + " : i64, strides = [:i64 " +
                                       std::to_string(cols) + ", 1]",
                                   {{DType::F32, {rows, cols}}},
                                   DType::F32,
                                   {r, c},
                                   {}};
                   }});
  kinds.push_back({"concat", [](Rng& rng) {
                     const Shape base{small_size(rng), edge_size(rng), small_size(rng)};
                     const int64_t dim = uniform(rng, 0, 2);
                     OpCase k{"concat", "dim = " + std::to_string(dim) + " : i64", {}, DType::F32, base, {}};
                     k.result[size_t(dim)] = 0;
                     for (int64_t i = 0, n = uniform(rng, 2, 3); i < n; ++i) {
                       Shape s = base;
                       s[size_t(dim)] = small_size(rng);
                       k.result[size_t(dim)] += s[size_t(dim)];
                       k.operands.push_back({DType::F32, s});
                     }
                     return k;
                   }});
  kinds.push_back(
      {"gather", [](Rng& rng) {
         const int64_t rows = edge_size(rng), e = edge_size(rng), n = small_size(rng) + 1;
         const int64_t t2 = small_size(rng);
         const DType table = uniform(rng, 0, 1) ? DType::F16 : DType::F32;
         return OpCase{"gather",           "", {{table, {1, t2, rows, e}}, {DType::I32, {1, t2, n}, rows}}, DType::F32,
                       Shape{1, t2, n, e}, {}};
       }});
  kinds.push_back({"set_rows", [](Rng& rng) {
                     const int64_t rows = edge_size(rng) + 1, e = edge_size(rng), n = small_size(rng);
                     const int64_t d2 = small_size(rng) * 2;
                     const int64_t i1 = divisor_of(rng, d2);
                     return OpCase{
                         "set_rows",
                         "",
                         {{DType::F16, {1, d2, rows, e}}, {DType::F32, {1, d2, n, e}}, {DType::I32, {1, i1, n}, rows}},
                         DType::F16,
                         Shape{1, d2, rows, e},
                         {}};
                   }});
  kinds.push_back({"glu", [](Rng& rng) {
                     const Shape s{small_size(rng), edge_size(rng), 2 * edge_size(rng)};
                     if (uniform(rng, 0, 1)) {
                       return OpCase{"glu", "kind = \"swiglu\"", {{DType::F32, s}, {DType::F32, s}}, DType::F32, s, {}};
                     }
                     return OpCase{"glu",      "kind = \"geglu\", swapped = true", {{DType::F32, s}},
                                   DType::F32, Shape{s[0], s[1], s[2] / 2},        {}};
                   }});
  return kinds;
}

struct Built {
  test::CompilerContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::Operation* op = nullptr;
};

std::unique_ptr<Built> build(const OpCase& k, const std::vector<std::string>& operand_types, const std::string& attrs,
                             const std::string& result) {
  auto built = std::make_unique<Built>();
  const std::string text = module_text(k.op, attrs, operand_types, result);
  built->module = mlir::parseSourceString<mlir::ModuleOp>(text, &built->context.context);
  if (!built->module) {
    ADD_FAILURE() << "does not parse:\n" << text;
    return nullptr;
  }
  built->module->walk([&](mlir::Operation* op) {
    if (mlir::isa<ShardingInterface>(op)) built->op = op;
  });
  return built;
}

std::vector<std::string> operand_type_names(const OpCase& k) {
  std::vector<std::string> names;
  for (const Operand& o : k.operands) names.push_back(type_name(o.type, o.shape));
  return names;
}

// Whether the op accepts a cut of output dimension `dim` (outermost first) in two.
bool cuttable(mlir::Operation* op, const Shape& result, size_t dim) {
  if (result[dim] < 2) return false;
  ShardingSplitParam parts;
  parts.outSharding.assign(result.size(), 1);
  parts.outSharding[dim] = 2;
  return !cast<ShardingInterface>(op).tileShardingSplit(parts).empty();
}

// Checks `windows` random output windows of case `k`; returns how many the rule served.
int check_windows(const OpCase& k, Rng& rng, int windows) {
  auto full = build(k, operand_type_names(k), k.attrs, type_name(k.result_type, k.result));
  if (!full) return 0;
  std::vector<HostTensor> inputs;
  for (const Operand& o : k.operands) inputs.push_back(random_tensor(rng, o.type, o.shape, o.index_limit));
  const HostTensor want = interpret(*full->module, inputs)[0];
  int served = 0;
  for (int w = 0; w < windows; ++w) {
    WindowParam window;
    for (size_t d = 0; d < k.result.size(); ++d) {
      const int64_t extent = k.result[d];
      const bool cut = uniform(rng, 0, 2) != 0 && cuttable(full->op, k.result, d);
      const int64_t size = cut ? uniform(rng, 1, extent) : extent;
      window.start.push_back(cut ? uniform(rng, 0, extent - size) : 0);
      window.size.push_back(size);
    }
    const std::vector<WindowParam> operand_windows = cast<ShardingInterface>(full->op).backWindow(window);
    if (operand_windows.empty()) continue;  // refused
    ++served;
    SCOPED_TRACE(k.op + " " + k.attrs + " window " + ::testing::PrintToString(window.start) + " + " +
                 ::testing::PrintToString(window.size));
    EXPECT_EQ(operand_windows.size(), k.operands.size());
    std::string attrs = k.attrs;
    std::vector<HostTensor> slices;
    std::vector<std::string> types;
    for (size_t i = 0; i < k.operands.size(); ++i) {
      Shape start = operand_windows[i].start;
      Shape size = operand_windows[i].size;
      if (i == 0 && k.pad_fill) {
        // The unclipped window, the clipped rows filled as the op pads; the op then pads nothing.
        const auto pair = [&](const char* name) {
          const size_t at = k.attrs.find(std::string(name) + " = [:i64 ");
          int64_t h = 0, w = 0;
          std::sscanf(k.attrs.c_str() + at + std::strlen(name) + 9, "%ld, %ld", &h, &w);
          return std::pair{h, w};
        };
        const auto [sh, sw] = pair("strides");
        const auto [ph, pw] = pair("pads");
        const auto dil = k.op == "conv2d" ? pair("dilations") : std::pair<int64_t, int64_t>{1, 1};
        const auto kernel =
            k.op == "conv2d" ? std::pair{k.operands[1].shape[2], k.operands[1].shape[3]} : pair("kernel");
        const int64_t stride[2] = {sh, sw}, pad[2] = {ph, pw}, dilation[2] = {dil.first, dil.second},
                      kern[2] = {kernel.first, kernel.second};
        for (size_t d = 0; d < 2; ++d) {
          const int64_t first = window.start[2 + d] * stride[d] - pad[d];
          const int64_t length = (window.size[2 + d] - 1) * stride[d] + dilation[d] * (kern[d] - 1) + 1;
          // The rule's window must lie inside this one (else it read what the output does not);
          // it is empty when the output window reads padding only.
          if (size[2 + d] > 0) {
            EXPECT_GE(start[2 + d], first);
            EXPECT_LE(start[2 + d] + size[2 + d], first + length);
          }
          start[2 + d] = first;
          size[2 + d] = length;
        }
        attrs.replace(attrs.find("pads = "), std::strlen("pads = ") + dense_pair(ph, pw).size(),
                      "pads = " + dense_pair(0, 0));
        // Only what the rule's window holds may be read: outside it, the fill.
        const bool reads_data = std::all_of(operand_windows[i].size.begin(), operand_windows[i].size.end(),
                                            [](int64_t s) { return s > 0; });
        HostTensor held = reads_data ? slice(inputs[i], operand_windows[i].start, operand_windows[i].size)
                                     : HostTensor::zeros(DType::F32, {1, 1, 1, 1});
        Shape held_start(4, 0);
        for (size_t d = 0; d < 4; ++d) {
          held_start[d] = reads_data ? start[d] - operand_windows[i].start[d] : -size[d] - 1;  // all fill
        }
        slices.push_back(slice(held, held_start, size, *k.pad_fill));
      } else {
        slices.push_back(slice(inputs[i], start, size));
      }
      if (k.op == "concat" && size[size_t(std::stoi(k.attrs.substr(6)))] == 0) {
        slices.pop_back();  // an input outside the window
        continue;
      }
      types.push_back(type_name(slices.back().type(), slices.back().shape()));
    }
    if (k.op == "view") {
      // The view starts at the window's first element, counted from the operand window's.
      const int64_t cols = k.operands[0].shape[1];
      const int64_t first = operand_windows[0].start[0] * cols + operand_windows[0].start[1];
      const int64_t offset = std::stoll(k.attrs.substr(9)) + window.start[0] * cols + window.start[1] - first;
      attrs = "offset = " + std::to_string(offset) + " : i64" + k.attrs.substr(k.attrs.find(','));
    }
    auto part = build(k, types, attrs, type_name(k.result_type, window.size));
    if (!part) continue;
    const HostTensor got = interpret(*part->module, slices)[0];
    const HostTensor expected = slice(want, window.start, window.size);
    if (got.nbytes() != expected.nbytes()) {
      ADD_FAILURE() << "the window has " << got.describe() << ", expected " << expected.describe();
      continue;
    }
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.nbytes()), 0) << "the window differs from the full result";
  }
  return served;
}

TEST(CompilerSharding, EveryOpComputesAnOutputWindowFromItsOperandWindows) {
  for (const auto& [name, make] : op_kinds()) {
    SCOPED_TRACE(name);
    Rng rng(std::hash<std::string>{}(name)&0xffff);
    int served = 0, asked = 0;
    for (int c = 0; c < 6; ++c) {
      const OpCase k = make(rng);
      served += check_windows(k, rng, 8);
      asked += 8;
    }
    // Refusals are for windows the op cannot compute from slices (a repeated operand that would
    // need rotating); most random windows are served.
    EXPECT_GT(served, asked / 2) << name << ": the rule refused " << asked - served << " of " << asked << " windows";
  }
}

// The split and per-step queries against the windows, on every part and step (the queries
// themselves walk one output dimension at a time): a per-step operand buffer holds every step's
// operand window, and an operand split into p parts along a dimension reads p distinct windows
// there.
TEST(CompilerSharding, SplitsAndStepsCoverEveryWindow) {
  for (const auto& [name, make] : op_kinds()) {
    SCOPED_TRACE(name);
    Rng rng(std::hash<std::string>{}(name)&0xfff);
    for (int c = 0; c < 4; ++c) {
      const OpCase k = make(rng);
      auto built = build(k, operand_type_names(k), k.attrs, type_name(k.result_type, k.result));
      ASSERT_TRUE(built);
      auto sharding = cast<ShardingInterface>(built->op);
      // Random parts on the dimensions the op lets be cut.
      std::vector<int32_t> parts;
      for (size_t d = 0; d < k.result.size(); ++d) {
        const bool cut = cuttable(built->op, k.result, d) && uniform(rng, 0, 1);
        parts.push_back(cut ? int32_t(uniform(rng, 2, std::min<int64_t>(k.result[d], 5))) : 1);
      }
      std::vector<int64_t> chunk;
      for (size_t d = 0; d < parts.size(); ++d) chunk.push_back((k.result[d] + parts[d] - 1) / parts[d]);
      SliceParam step{chunk};
      ShardingSplitParam split{parts, {}};
      const std::vector<SliceParam> buffers = sharding.temporalSliceShape(step);
      const std::vector<ShardingSplitParam> operand_parts = sharding.tileShardingSplit(split);
      // Every combination of chunks.
      std::vector<std::vector<std::set<std::pair<int64_t, int64_t>>>> distinct(k.operands.size());
      for (size_t i = 0; i < k.operands.size(); ++i) distinct[i].resize(k.operands[i].shape.size());
      bool refused = false;
      std::vector<int64_t> index(parts.size(), 0);
      while (true) {
        WindowParam window;
        bool empty = false;
        for (size_t d = 0; d < parts.size(); ++d) {
          window.start.push_back(index[d] * chunk[d]);
          window.size.push_back(std::min(chunk[d], k.result[d] - index[d] * chunk[d]));
          empty = empty || window.size.back() <= 0;
        }
        if (!empty) {
          const std::vector<WindowParam> windows = sharding.backWindow(window);
          refused = refused || windows.empty();
          for (size_t i = 0; i < windows.size(); ++i) {
            for (size_t j = 0; j < windows[i].size.size(); ++j) {
              if (!buffers.empty()) {
                EXPECT_LE(windows[i].size[j], buffers[i].shape[j]) << "operand " << i << " dim " << j;
              }
              distinct[i][j].insert({windows[i].start[j], windows[i].size[j]});
            }
          }
        }
        size_t d = 0;
        while (d < parts.size() && ++index[d] == parts[d]) index[d++] = 0;
        if (d == parts.size()) break;
      }
      // A refused window refuses the split and the step; otherwise both are answered.
      EXPECT_EQ(operand_parts.empty(), refused);
      EXPECT_EQ(buffers.empty(), refused);
      for (size_t i = 0; i < operand_parts.size(); ++i) {
        if (operand_parts[i].outSharding.empty()) continue;  // cannot follow: loaded whole
        for (size_t j = 0; j < distinct[i].size(); ++j) {
          EXPECT_EQ(size_t(operand_parts[i].outSharding[j]), distinct[i][j].size()) << "operand " << i << " dim " << j;
        }
      }
    }
  }
}

// Parses one op's module and returns its ShardingInterface.
struct OneOp {
  std::unique_ptr<Built> built;
  explicit OneOp(const OpCase& k)
      : built(build(k, operand_type_names(k), k.attrs, type_name(k.result_type, k.result))) {}
  ShardingInterface op() { return cast<ShardingInterface>(built->op); }
};

TEST(CompilerSharding, MatmulFollowsMAndNAndNeverCutsK) {
  OneOp mm(
      OpCase{"matmul", "", {{DType::F32, {1, 2, 64, 96}}, {DType::F32, {1, 4, 32, 96}}}, DType::F32, {1, 4, 32, 64}});
  ShardingSplitParam parts{{1, 2, 4, 2}, {}};
  const auto split = mm.op().tileShardingSplit(parts);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].outSharding, (std::vector<int32_t>{1, 2, 2, 1}));  // batch 4 over lhs's 2, M; K whole
  EXPECT_EQ(split[1].outSharding, (std::vector<int32_t>{1, 2, 4, 1}));  // batch, N; K whole
  SliceParam step{{1, 1, 8, 16}};
  const auto slices = mm.op().temporalSliceShape(step);
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0].shape, (std::vector<int64_t>{1, 1, 16, 96}));
  EXPECT_EQ(slices[1].shape, (std::vector<int64_t>{1, 1, 8, 96}));
}

TEST(CompilerSharding, ConvWindowsCarryTheHaloAndTheKernelFollowsOutputChannels) {
  // 3x3, stride 2, pad 1 over H = 9: OH = 5.
  OneOp conv(OpCase{"conv2d",
                    "strides = [:i64 2, 1], pads = [:i64 1, 0], dilations = [:i64 1, 1]",
                    {{DType::F32, {1, 8, 9, 6}}, {DType::F32, {16, 8, 3, 3}}},
                    DType::F32,
                    {1, 16, 5, 4}});
  auto window = conv.op().backWindow(WindowParam{{0, 4, 2, 1}, {1, 8, 2, 2}});
  ASSERT_EQ(window.size(), 2u);
  EXPECT_EQ(window[0].start, (std::vector<int64_t>{0, 0, 3, 1}));  // rows 2*2-1 .. 3*2-1+2
  EXPECT_EQ(window[0].size, (std::vector<int64_t>{1, 8, 5, 4}));
  EXPECT_EQ(window[1].start, (std::vector<int64_t>{4, 0, 0, 0}));
  EXPECT_EQ(window[1].size, (std::vector<int64_t>{8, 8, 3, 3}));
  window = conv.op().backWindow(WindowParam{{0, 0, 0, 0}, {1, 16, 1, 4}});
  EXPECT_EQ(window[0].start[2], 0);  // row -1 is padding: clipped
  EXPECT_EQ(window[0].size[2], 2);
  SliceParam step{{1, 16, 2, 4}};
  const auto slices = conv.op().temporalSliceShape(step);
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0].shape, (std::vector<int64_t>{1, 8, 5, 6}));  // an interior step: (2-1)*2+3 rows
}

TEST(CompilerSharding, RowOpsRefuseACutRowButReadWholeRows) {
  OneOp norm(OpCase{"rmsnorm", "epsilon = 1.0e-5 : f32", {{DType::F32, {4, 64}}}, DType::F32, {4, 64}});
  ShardingSplitParam rows{{2, 1}, {}};
  EXPECT_EQ(norm.op().tileShardingSplit(rows).size(), 1u);
  ShardingSplitParam columns{{1, 2}, {}};
  EXPECT_TRUE(norm.op().tileShardingSplit(columns).empty());
  SliceParam half_row{{1, 32}};
  EXPECT_TRUE(norm.op().temporalSliceShape(half_row).empty());
  const auto window = norm.op().backWindow(WindowParam{{1, 16}, {2, 16}});
  ASSERT_EQ(window.size(), 1u);
  EXPECT_EQ(window[0].start, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(window[0].size, (std::vector<int64_t>{2, 64}));
}

TEST(CompilerSharding, AttentionSharesCacheHeadsBetweenQueryHeads) {
  // 8 query heads over 2 cache heads: heads 0-3 read cache head 0.
  OneOp attention(OpCase{"attention",
                         "scale = 0.25 : f32",
                         {{DType::F32, {1, 8, 4, 16}}, {DType::F16, {1, 2, 32, 16}}, {DType::F16, {1, 2, 32, 16}}},
                         DType::F32,
                         {1, 4, 8, 16}});
  ShardingSplitParam heads{{1, 2, 4, 1}, {}};
  const auto split = attention.op().tileShardingSplit(heads);
  ASSERT_EQ(split.size(), 3u);
  EXPECT_EQ(split[0].outSharding, (std::vector<int32_t>{1, 4, 2, 1}));
  EXPECT_EQ(split[1].outSharding, (std::vector<int32_t>{1, 2, 1, 1}));  // 4 parts of 2 heads over 2 cache heads
  const auto window = attention.op().backWindow(WindowParam{{0, 0, 4, 0}, {1, 4, 4, 16}});
  ASSERT_EQ(window.size(), 3u);
  EXPECT_EQ(window[1].start, (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(window[1].size, (std::vector<int64_t>{1, 1, 32, 16}));
  // Heads 2..5 straddle the cache heads unevenly: no cache window computes them.
  EXPECT_TRUE(attention.op().backWindow(WindowParam{{0, 0, 2, 0}, {1, 4, 4, 16}}).empty());
}

TEST(CompilerSharding, ReshapeSplitsOnlyAlongContiguousOuterDimensions) {
  OneOp reshape(OpCase{"reshape", "", {{DType::F32, {6, 10}}}, DType::F32, {3, 2, 10}});
  ShardingSplitParam outer{{3, 1, 1}, {}};
  const auto split = reshape.op().tileShardingSplit(outer);
  ASSERT_EQ(split.size(), 1u);
  EXPECT_EQ(split[0].outSharding, (std::vector<int32_t>{3, 1}));
  ShardingSplitParam inner{{1, 1, 2}, {}};
  EXPECT_TRUE(reshape.op().tileShardingSplit(inner).empty());  // half rows: not one range
}

TEST(CompilerSharding, TransposePermutesTheSplit) {
  OneOp transpose(OpCase{"transpose", "perm = [:i64 2, 0, 1]", {{DType::F32, {4, 6, 8}}}, DType::F32, {8, 4, 6}});
  ShardingSplitParam parts{{2, 4, 3}, {}};
  const auto split = transpose.op().tileShardingSplit(parts);
  ASSERT_EQ(split.size(), 1u);
  EXPECT_EQ(split[0].outSharding, (std::vector<int32_t>{4, 3, 2}));
}

TEST(CompilerSharding, ARepeatedOperandThatWouldNeedRotatingIsRefused) {
  OneOp add(OpCase{"add", "", {{DType::F32, {6, 4}}, {DType::F32, {3, 4}}}, DType::F32, {6, 4}});
  EXPECT_EQ(add.op().backWindow(WindowParam{{3, 0}, {3, 4}}).size(), 2u);  // one whole repetition
  EXPECT_EQ(add.op().backWindow(WindowParam{{4, 0}, {2, 4}})[1].start, (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(add.op().backWindow(WindowParam{{2, 0}, {2, 4}}).empty());  // rows 2, 0 of rhs
  ShardingSplitParam parts{{2, 2}, {}};
  const auto split = add.op().tileShardingSplit(parts);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[1].outSharding, (std::vector<int32_t>{1, 2}));  // each half reads all of rhs's rows
}

TEST(CompilerSharding, BadQueriesAreRefused) {
  OneOp relu(OpCase{"relu", "", {{DType::F32, {4, 8}}}, DType::F32, {4, 8}});
  ShardingSplitParam too_many{{5, 1}, {}};
  EXPECT_TRUE(relu.op().tileShardingSplit(too_many).empty());
  ShardingSplitParam wrong_rank{{2}, {}};
  EXPECT_TRUE(relu.op().tileShardingSplit(wrong_rank).empty());
  EXPECT_TRUE(relu.op().backWindow(WindowParam{{3, 0}, {2, 8}}).empty());  // past the end
  SliceParam zero{{0, 8}};
  EXPECT_TRUE(relu.op().temporalSliceShape(zero).empty());
  // An empty tensor has no window to cut.
  OneOp empty(OpCase{"add", "", {{DType::F32, {0, 8}}, {DType::F32, {1, 8}}}, DType::F32, {0, 8}});
  EXPECT_TRUE(empty.op().backWindow(WindowParam{{0, 0}, {1, 8}}).empty());
  SliceParam empty_step{{0, 8}};
  EXPECT_TRUE(empty.op().temporalSliceShape(empty_step).empty());
  ShardingSplitParam whole{{1, 2}, {}};
  EXPECT_EQ(empty.op().tileShardingSplit(whole).size(), 2u);
}

}  // namespace
}  // namespace tg::compiler::tx8be
