// The ShardingInterface's rules (Tx8beInterfaces.td): which window of each operand an output
// window reads, per op. One rule per op, `operand_boxes`; the three interface methods derive
// from it, so the split, the per-step shape and the windows cannot disagree:
//   backWindow          the rule itself, on one window;
//   tileShardingSplit   the output's parts cut each output dimension into equal chunks (the last
//                       one shorter); an operand dimension gets as many parts as it has distinct
//                       windows over the chunks of the one output dimension it follows;
//   temporalSliceShape  the largest operand window over the steps along each output dimension.
// A rule refuses (nullopt) a window it cannot compute from operand windows with the op itself;
// the methods then return an empty vector.
#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <llvm/ADT/TypeSwitch.h>

#include "core_bridge.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/core/dtype.h"

using namespace mlir;

namespace tg::compiler::tx8be::detail {

namespace {

using Ne = std::array<int64_t, kMaxDims>;

// A window in the core's dimension order (0 innermost), padded to four dimensions.
struct Box {
  Ne start{0, 0, 0, 0};
  Ne size{1, 1, 1, 1};
};

// One [start, size) range along a dimension; nullopt refuses.
using Range = std::optional<std::pair<int64_t, int64_t>>;

Ne ne_of(Value value) {
  auto type = value.getType().dyn_cast<RankedTensorType>();
  if (!type) return {1, 1, 1, 1};
  return core_ne(type.getShape()).value_or(Ne{1, 1, 1, 1});
}

int rank_of(Value value) {
  auto type = value.getType().dyn_cast<RankedTensorType>();
  return type ? int(type.getRank()) : 0;
}

Box whole(const Ne& shape) { return Box{{0, 0, 0, 0}, shape}; }

bool is_quantized_value(Value value) {
  auto type = value.getType().dyn_cast<RankedTensorType>();
  const std::optional<DType> dtype = type ? core_dtype(type.getElementType()) : std::nullopt;
  return dtype && is_quantized(*dtype);
}

// An operand dimension that repeats to the output's (ggml's broadcast: index % extent). A window
// inside one repetition reads that part; one spanning whole repetitions reads the whole
// dimension; any other window would need the operand rotated, which the op cannot express.
Range repeated(int64_t start, int64_t size, int64_t extent, int64_t out_extent) {
  if (extent == out_extent) return std::pair{start, size};
  if (start % extent + size <= extent) return std::pair{start % extent, size};
  if (start % extent == 0 && size % extent == 0) return std::pair{int64_t(0), extent};
  return std::nullopt;
}

// An operand dimension shared by `ratio` consecutive output indices (a matmul's broadcast lhs
// batch, grouped-query K/V heads: index / ratio). A window inside one group reads one index; one
// of whole groups reads their indices.
Range divided(int64_t start, int64_t size, int64_t ratio) {
  if (start / ratio == (start + size - 1) / ratio) return std::pair{start / ratio, int64_t(1)};
  if (start % ratio == 0 && size % ratio == 0) return std::pair{start / ratio, size / ratio};
  return std::nullopt;
}

// A sliding window (convolution, pooling): output rows [start, start + size) read input rows
// start * stride - pad up to (start + size - 1) * stride - pad + dilation * (kernel - 1), clipped
// to the input. A clipped edge is the op's own padding: the tile computing the window fills the
// clipped rows as the op pads (zeros; minus infinity for max pooling, which ignores padding)
// and runs with no padding, so an interior window pads nothing.
std::pair<int64_t, int64_t> halo(int64_t start, int64_t size, int64_t stride, int64_t pad, int64_t dilation,
                                 int64_t kernel, int64_t in_extent) {
  const int64_t first = start * stride - pad;
  const int64_t end = (start + size - 1) * stride - pad + dilation * (kernel - 1) + 1;
  const int64_t clipped_first = std::clamp<int64_t>(first, 0, in_extent);
  return {clipped_first, std::clamp<int64_t>(end, 0, in_extent) - clipped_first};
}

bool set(Box& box, int dim, Range range) {
  if (!range) return false;
  box.start[size_t(dim)] = range->first;
  box.size[size_t(dim)] = range->second;
  return true;
}

Range follow(const Box& out, int dim) { return std::pair{out.start[size_t(dim)], out.size[size_t(dim)]}; }

// Strides of a shape's row-major order, in elements, per core dimension.
Ne strides_of(const Ne& shape) {
  Ne strides{1, 1, 1, 1};
  for (int i = 1; i < kMaxDims; ++i) strides[size_t(i)] = strides[size_t(i - 1)] * shape[size_t(i - 1)];
  return strides;
}

// The flat row-major range [first, first + count) of a box, when it is one (every dimension
// inside the outermost cut one whole, every one outside it of size 1).
std::optional<std::pair<int64_t, int64_t>> flat_range(const Box& box, const Ne& shape) {
  int outer = -1;
  for (int i = kMaxDims - 1; i >= 0; --i) {
    if (box.size[size_t(i)] != 1) {
      outer = i;
      break;
    }
  }
  for (int i = 0; i < outer; ++i) {
    if (box.size[size_t(i)] != shape[size_t(i)]) return std::nullopt;
  }
  const Ne strides = strides_of(shape);
  int64_t first = 0;
  int64_t count = 1;
  for (int i = 0; i < kMaxDims; ++i) {
    first += box.start[size_t(i)] * strides[size_t(i)];
    count *= box.size[size_t(i)];
  }
  return std::pair{first, count};
}

// The smallest box of `shape` that is a flat range and holds [first, first + count): whole
// dimensions below some dimension m, a range of m, one index above.
Box enclosing_box(int64_t first, int64_t count, const Ne& shape) {
  const Ne strides = strides_of(shape);
  const int64_t last = first + std::max<int64_t>(count, 1) - 1;
  for (int m = 0; m < kMaxDims; ++m) {
    const int64_t block = strides[size_t(m)] * shape[size_t(m)];
    if (m + 1 < kMaxDims && first / block != last / block) continue;
    Box box;
    for (int i = 0; i < m; ++i) box.size[size_t(i)] = shape[size_t(i)];
    box.start[size_t(m)] = (first / strides[size_t(m)]) % shape[size_t(m)];
    box.size[size_t(m)] = last / strides[size_t(m)] - first / strides[size_t(m)] + 1;
    for (int i = m + 1; i < kMaxDims; ++i) box.start[size_t(i)] = (first / strides[size_t(i)]) % shape[size_t(i)];
    return box;
  }
  return whole(shape);
}

// A reshape (or a shape-changing convert) computes a window only when the window is a flat range
// of the output and that range is a box of the input.
std::optional<std::vector<Box>> reshape_rule(Value input, const Ne& out_shape, const Box& out) {
  const auto range = flat_range(out, out_shape);
  if (!range) return std::nullopt;
  const Ne in_shape = ne_of(input);
  const Box box = enclosing_box(range->first, range->second, in_shape);
  int64_t count = 1;
  for (int64_t s : box.size) count *= s;
  if (count != range->second) return std::nullopt;
  return std::vector<Box>{box};
}

// Dimensions of the output (core order) the op cannot be cut along: a window there reads more
// than the operands' matching window (a row op's row), or rows chosen by data (set_rows).
std::array<bool, kMaxDims> uncut_dims(Operation* op) {
  std::array<bool, kMaxDims> fixed{};
  TypeSwitch<Operation*>(op)
      .Case<RmsNormOp, LayerNormOp, SoftmaxOp, SumRowsOp, RopeOp>([&](auto) { fixed[0] = true; })
      .Case([&](GluOp glu) { fixed[0] = !glu.getGate(); })
      .Case([&](GatherOp gather) { fixed[0] = is_quantized_value(gather.getTable()); })
      // A cut value row would compute every score and softmax again on each tile, and
      // op_attention_decode takes whole rows.
      .Case([&](AttentionOp) { fixed[0] = true; })
      .Case([&](SetRowsOp set_rows) {
        fixed[0] = is_quantized_value(set_rows.getDest());
        fixed[1] = true;
      });
  return fixed;
}

// The rule: the box of each operand that output box `out` reads; nullopt when the op cannot
// compute that window from operand windows.
std::optional<std::vector<Box>> operand_boxes(Operation* op, const Box& out) {
  const Ne out_shape = op->getNumResults() == 1 ? ne_of(op->getResult(0)) : Ne{1, 1, 1, 1};
  std::vector<Box> boxes;
  for (Value operand : op->getOperands()) boxes.push_back(whole(ne_of(operand)));
  bool ok = true;
  auto same = [&]() {
    for (Box& box : boxes) box = out;
  };
  // The output's window, with whole rows (a row op reads every column of its rows).
  auto rows_of = [&](Box box, int64_t row_extent) {
    box.start[0] = 0;
    box.size[0] = row_extent;
    return box;
  };
  TypeSwitch<Operation*>(op)
      .Case<ReluOp, GeluOp, GeluErfOp, SiluOp, SigmoidOp, TanhOp, ExpOp, NegOp, AbsOp, SqrtOp, RsqrtOp, ScaleOp,
            ChannelNormOp, LoadVarOp, StoreVarOp>([&](auto) { same(); })
      .Case<AddOp, SubOp, MulOp, DivOp, BroadcastOp>([&](Operation* binary) {
        boxes[0] = out;
        // The last operand repeats: a binary op's rhs, a broadcast's only input.
        Box& rhs = boxes.back();
        const Ne rhs_shape = ne_of(binary->getOperands().back());
        for (int d = 0; d < kMaxDims; ++d) {
          ok = ok &&
               set(rhs, d,
                   repeated(out.start[size_t(d)], out.size[size_t(d)], rhs_shape[size_t(d)], out_shape[size_t(d)]));
        }
      })
      .Case([&](ConvertOp convert) {
        if (ne_of(convert.getInput()) == out_shape) return same();
        auto rule = reshape_rule(convert.getInput(), out_shape, out);
        ok = rule.has_value();
        if (ok) boxes = *rule;
      })
      .Case([&](ReshapeOp reshape) {
        auto rule = reshape_rule(reshape.getInput(), out_shape, out);
        ok = rule.has_value();
        if (ok) boxes = *rule;
      })
      .Case([&](ViewOp view) {
        // The elements of the window lie between its first and last element's flat index; the
        // tile reads the smallest box of the input holding them (the view's offset moves by
        // the box's first flat index).
        const ArrayRef<int64_t> strides = view.getStrides();
        const int rank = int(strides.size());
        int64_t first = view.getOffsetAttr().getInt();
        int64_t last = first;
        for (int d = 0; d < rank; ++d) {
          const size_t ne = size_t(rank - 1 - d);
          first += out.start[ne] * strides[size_t(d)];
          last += (out.start[ne] + out.size[ne] - 1) * strides[size_t(d)];
        }
        boxes[0] = enclosing_box(first, last - first + 1, ne_of(view.getInput()));
      })
      .Case([&](TransposeOp transpose) {
        // Output dimension i is input dimension perm[i] (outermost first).
        const ArrayRef<int64_t> perm = transpose.getPerm();
        const int rank = int(perm.size());
        for (int i = 0; i < rank; ++i) {
          set(boxes[0], rank - 1 - int(perm[size_t(i)]), follow(out, rank - 1 - i));
        }
      })
      .Case([&](ConcatOp concat) {
        // Each input covers its own range of the axis; an input outside the window reads
        // nothing (size 0).
        const int axis = rank_of(concat.getOutput()) - 1 - int(concat.getDimAttr().getInt());
        int64_t offset = 0;
        for (size_t i = 0; i < boxes.size(); ++i) {
          const int64_t extent = ne_of(concat.getInputs()[i])[size_t(axis)];
          boxes[i] = out;
          const int64_t first = std::clamp(out.start[size_t(axis)] - offset, int64_t(0), extent);
          const int64_t end = std::clamp(out.start[size_t(axis)] + out.size[size_t(axis)] - offset, int64_t(0), extent);
          boxes[i].start[size_t(axis)] = first;
          boxes[i].size[size_t(axis)] = std::max<int64_t>(end - first, 0);
          offset += extent;
        }
      })
      .Case([&](MatMulOp) {
        // out [M, N, B2, B3] (core order) from lhs [K, M, A2, A3] and rhs [K, N, B2, B3]. K is
        // never cut: each part would hold partial sums that need a reduction step across
        // tiles, which the op itself does not do.
        const Ne lhs_shape = ne_of(op->getOperand(0));
        ok = set(boxes[0], 1, follow(out, 0)) &&
             set(boxes[0], 2, divided(out.start[2], out.size[2], out_shape[2] / lhs_shape[2])) &&
             set(boxes[0], 3, divided(out.start[3], out.size[3], out_shape[3] / lhs_shape[3]));
        for (int d = 1; d < kMaxDims; ++d) set(boxes[1], d, follow(out, d));
      })
      .Case([&](Conv2dOp conv) {
        // out [OW, OH, O, N] from input [W, H, C, N] and kernel [KW, KH, C, O]: C is the
        // reduction (never cut, as matmul's K); the kernel follows O.
        const Ne in_shape = ne_of(conv.getInput());
        const Ne k_shape = ne_of(conv.getKernel());
        for (int d = 0; d < 2; ++d) {
          const size_t hw = size_t(1 - d);  // the attributes are [H, W]
          set(boxes[0], d,
              halo(out.start[size_t(d)], out.size[size_t(d)], conv.getStrides()[hw], conv.getPads()[hw],
                   conv.getDilations()[hw], k_shape[size_t(d)], in_shape[size_t(d)]));
        }
        set(boxes[0], 3, follow(out, 3));
        set(boxes[1], 3, follow(out, 2));
      })
      .Case([&](Pool2dOp pool) {
        const Ne in_shape = ne_of(pool.getInput());
        for (int d = 0; d < 2; ++d) {
          const size_t hw = size_t(1 - d);
          set(boxes[0], d,
              halo(out.start[size_t(d)], out.size[size_t(d)], pool.getStrides()[hw], pool.getPads()[hw], 1,
                   pool.getKernel()[hw], in_shape[size_t(d)]));
        }
        set(boxes[0], 2, follow(out, 2));
        set(boxes[0], 3, follow(out, 3));
      })
      .Case([&](BatchNormInferenceOp bn) {
        // Any cut; the per-channel vectors follow the channel axis.
        const int channel = rank_of(bn.getInput()) - 1 - int(bn.getChannelAxis());
        boxes[0] = out;
        for (size_t i = 1; i < boxes.size(); ++i) set(boxes[i], 0, follow(out, channel));
      })
      .Case<RmsNormOp, LayerNormOp, SumRowsOp>(
          [&](Operation* row_op) { boxes[0] = rows_of(out, ne_of(row_op->getOperand(0))[0]); })
      .Case([&](SoftmaxOp softmax) {
        const Ne in_shape = ne_of(softmax.getInput());
        boxes[0] = rows_of(out, in_shape[0]);
        if (softmax.getMask()) {
          // Row i of the input uses row i of the mask, which repeats over dimensions 2 and 3.
          const Ne mask_shape = ne_of(softmax.getMask());
          set(boxes[1], 1, follow(out, 1));
          for (int d = 2; d < kMaxDims; ++d) {
            ok = ok &&
                 set(boxes[1], d,
                     repeated(out.start[size_t(d)], out.size[size_t(d)], mask_shape[size_t(d)], out_shape[size_t(d)]));
          }
        }
      })
      .Case([&](ArgMaxOp argmax) {
        // [C, R] -> [R]: whole rows.
        set(boxes[0], 1, follow(out, 0));
        boxes[0].size[0] = ne_of(argmax.getInput())[0];
      })
      .Case([&](RopeOp rope) {
        // [head_dim, heads, tokens, 1]: a rotation pairs columns of a row; token t uses
        // positions[t]; the frequency factors are read whole.
        boxes[0] = rows_of(out, ne_of(rope.getInput())[0]);
        set(boxes[1], 0, follow(out, 2));
      })
      .Case([&](AttentionOp attention) {
        // out [Dv, H, n_q, B] from q [D, n_q, H, B], k [D, n_kv, Hkv, B], v [Dv, n_kv, Hkv, B]:
        // heads and query rows are independent; query head h reads cache head h / (H / Hkv);
        // every query reads the whole sequence (the softmax spans it).
        const int64_t group = out_shape[1] / ne_of(attention.getKey())[2];
        boxes[0].start = {0, out.start[2], out.start[1], out.start[3]};
        boxes[0].size = {ne_of(attention.getQuery())[0], out.size[2], out.size[1], out.size[3]};
        for (size_t kv = 1; kv <= 2; ++kv) {
          ok = ok && set(boxes[kv], 2, divided(out.start[1], out.size[1], group));
          set(boxes[kv], 3, follow(out, 3));
        }
        set(boxes[2], 0, follow(out, 0));
        if (attention.getMask()) {
          // [n_kv, >= n_q, 1|H, 1|B]: row i for query i, repeated over heads and batches.
          const Ne mask_shape = ne_of(attention.getMask());
          set(boxes[3], 1, follow(out, 2));
          ok = ok && set(boxes[3], 2, repeated(out.start[1], out.size[1], mask_shape[2], out_shape[1])) &&
               set(boxes[3], 3, repeated(out.start[3], out.size[3], mask_shape[3], out_shape[3]));
        }
      })
      .Case([&](GluOp glu) {
        if (glu.getGate()) return same();
        // One operand holding x and g side by side: whole rows.
        boxes[0] = rows_of(out, ne_of(glu.getInput())[0]);
      })
      .Case([&](GatherOp gather) {
        // out [E, n, A2, A3] from table [E, R, A2, A3] and indices [n, A2, A3]: any row may be
        // read, so the table's rows are whole; its columns follow (whole blocks when quantized).
        if (!is_quantized_value(gather.getTable())) set(boxes[0], 0, follow(out, 0));
        set(boxes[0], 2, follow(out, 2));
        set(boxes[0], 3, follow(out, 3));
        for (int d = 0; d < 3; ++d) set(boxes[1], d, follow(out, d + 1));
      })
      .Case([&](SetRowsOp set_rows) {
        // out = dest [E, R, D2, D3] with rows replaced by source [E, n, D2, D3] at indices
        // [n, I1, I2] (repeated over D2, D3): the written rows depend on the data, so the rows
        // are never cut; columns and batches are.
        boxes[0] = out;
        set(boxes[1], 0, follow(out, 0));
        set(boxes[1], 2, follow(out, 2));
        set(boxes[1], 3, follow(out, 3));
        const Ne index_shape = ne_of(set_rows.getIndices());
        ok = set(boxes[2], 1, repeated(out.start[2], out.size[2], index_shape[1], out_shape[2])) &&
             set(boxes[2], 2, repeated(out.start[3], out.size[3], index_shape[2], out_shape[3]));
      });
  if (!ok) return std::nullopt;
  return boxes;
}

Box to_box(const std::vector<int64_t>& start, const std::vector<int64_t>& size) {
  Box box;
  const size_t rank = start.size();
  for (size_t d = 0; d < rank; ++d) {
    box.start[rank - 1 - d] = start[d];
    box.size[rank - 1 - d] = size[d];
  }
  return box;
}

WindowParam to_window(const Box& box, int rank) {
  WindowParam window;
  for (int d = 0; d < rank; ++d) {
    window.start.push_back(box.start[size_t(rank - 1 - d)]);
    window.size.push_back(box.size[size_t(rank - 1 - d)]);
  }
  return window;
}

// The output's shape in core order, when the op has one ranked result of at most four
// dimensions and `rank` is its rank.
std::optional<Ne> output_shape(Operation* op, size_t rank) {
  if (op->getNumResults() != 1) return std::nullopt;
  auto type = op->getResult(0).getType().dyn_cast<RankedTensorType>();
  if (!type || size_t(type.getRank()) != rank) return std::nullopt;
  return core_ne(type.getShape());
}

// Windows of one output dimension cut into chunks of `chunk`, the others at their first chunk:
// for each chunk along `dim`, the operand boxes (nullopt when the rule refuses one).
std::optional<std::vector<std::vector<Box>>> boxes_along(Operation* op, const Ne& shape, const Ne& chunk, int dim) {
  std::vector<std::vector<Box>> all;
  Box out;
  for (int d = 0; d < kMaxDims; ++d) out.size[size_t(d)] = std::min(chunk[size_t(d)], shape[size_t(d)]);
  for (int64_t start = 0; start < shape[size_t(dim)]; start += chunk[size_t(dim)]) {
    out.start[size_t(dim)] = start;
    out.size[size_t(dim)] = std::min(chunk[size_t(dim)], shape[size_t(dim)] - start);
    auto boxes = operand_boxes(op, out);
    if (!boxes) return std::nullopt;
    all.push_back(std::move(*boxes));
  }
  return all;
}

// Each operand's parts for the output's `parts` (outermost first): empty outer vector when
// the output cannot be cut so, an empty operand entry when that operand cannot follow.
std::optional<std::vector<std::vector<int32_t>>> operand_parts(Operation* op, const std::vector<int32_t>& parts) {
  const std::optional<Ne> shape = output_shape(op, parts.size());
  if (!shape) return std::nullopt;
  const std::array<bool, kMaxDims> fixed = uncut_dims(op);
  Ne chunk = *shape;
  for (size_t d = 0; d < parts.size(); ++d) {
    const size_t ne = parts.size() - 1 - d;
    const int64_t p = parts[d];
    if (p < 1 || p > std::max<int64_t>((*shape)[ne], 1)) return std::nullopt;
    if (p > 1 && fixed[ne]) return std::nullopt;
    chunk[ne] = ((*shape)[ne] + p - 1) / p;
  }
  const size_t n = op->getNumOperands();
  // Per operand and operand dimension: the parts, and the output dimension they follow.
  std::vector<Ne> operand_parts(n, Ne{1, 1, 1, 1});
  std::vector<std::array<int, kMaxDims>> source(n, {-1, -1, -1, -1});
  std::vector<bool> follows(n, true);
  for (int d = 0; d < kMaxDims; ++d) {
    if (chunk[size_t(d)] >= (*shape)[size_t(d)]) continue;
    auto boxes = boxes_along(op, *shape, chunk, d);
    if (!boxes) return std::nullopt;
    for (size_t i = 0; i < n; ++i) {
      const Ne whole_shape = ne_of(op->getOperand(i));
      for (int j = 0; j < kMaxDims; ++j) {
        std::set<std::pair<int64_t, int64_t>> windows;
        bool some_whole = false;
        for (const std::vector<Box>& per_chunk : *boxes) {
          const Box& b = per_chunk[i];
          windows.insert({b.start[size_t(j)], b.size[size_t(j)]});
          some_whole = some_whole || b.size[size_t(j)] == whole_shape[size_t(j)];
        }
        if (windows.size() <= 1) continue;
        // Cut by two output dimensions at once, or partly whole: no one split describes it.
        if (source[i][size_t(j)] != -1 || some_whole) follows[i] = false;
        source[i][size_t(j)] = d;
        operand_parts[i][size_t(j)] = int64_t(windows.size());
      }
    }
  }
  std::vector<std::vector<int32_t>> result(n);
  for (size_t i = 0; i < n; ++i) {
    if (!follows[i]) continue;
    const int rank = rank_of(op->getOperand(i));
    for (int d = 0; d < rank; ++d) result[i].push_back(int32_t(operand_parts[i][size_t(rank - 1 - d)]));
  }
  return result;
}

}  // namespace

std::vector<ShardingSplitParam> defaultTileShardingSplit(Operation* op, ShardingSplitParam& param) {
  std::vector<ShardingSplitParam> result(op->getNumOperands());
  for (auto [out_parts, member] : {std::pair{&param.outSharding, &ShardingSplitParam::outSharding},
                                   std::pair{&param.outSplit, &ShardingSplitParam::outSplit}}) {
    if (out_parts->empty()) continue;  // not split
    auto parts = operand_parts(op, *out_parts);
    if (!parts) return {};
    for (size_t i = 0; i < result.size(); ++i) result[i].*member = std::move((*parts)[i]);
  }
  return result;
}

std::vector<SliceParam> defaultTemporalSliceShape(Operation* op, SliceParam& param) {
  const std::optional<Ne> shape = output_shape(op, param.shape.size());
  if (!shape) return {};
  const std::array<bool, kMaxDims> fixed = uncut_dims(op);
  Ne chunk = *shape;
  const size_t rank = param.shape.size();
  for (size_t d = 0; d < rank; ++d) {
    const size_t ne = rank - 1 - d;
    if (param.shape[d] < 1 || param.shape[d] > (*shape)[ne]) return {};
    if (param.shape[d] < (*shape)[ne] && fixed[ne]) return {};
    chunk[ne] = param.shape[d];
  }
  std::vector<Ne> largest(op->getNumOperands(), Ne{0, 0, 0, 0});
  for (int d = 0; d < kMaxDims; ++d) {
    auto boxes = boxes_along(op, *shape, chunk, d);
    if (!boxes) return {};
    for (const std::vector<Box>& per_step : *boxes) {
      for (size_t i = 0; i < largest.size(); ++i) {
        for (int j = 0; j < kMaxDims; ++j) {
          largest[i][size_t(j)] = std::max(largest[i][size_t(j)], per_step[i].size[size_t(j)]);
        }
      }
    }
  }
  std::vector<SliceParam> result;
  for (size_t i = 0; i < largest.size(); ++i) {
    const int operand_rank = rank_of(op->getOperand(i));
    SliceParam slice;
    for (int d = 0; d < operand_rank; ++d) slice.shape.push_back(largest[i][size_t(operand_rank - 1 - d)]);
    result.push_back(std::move(slice));
  }
  return result;
}

std::vector<WindowParam> defaultBackWindow(Operation* op, const WindowParam& param) {
  const std::optional<Ne> shape = output_shape(op, param.start.size());
  if (!shape || param.size.size() != param.start.size()) return {};
  const Box out = to_box(param.start, param.size);
  for (int d = 0; d < kMaxDims; ++d) {
    const int64_t first = out.start[size_t(d)];
    const int64_t size = out.size[size_t(d)];
    if (first < 0 || size < 1 || first + size > (*shape)[size_t(d)]) return {};
  }
  auto boxes = operand_boxes(op, out);
  if (!boxes) return {};
  std::vector<WindowParam> result;
  for (size_t i = 0; i < boxes->size(); ++i) result.push_back(to_window((*boxes)[i], rank_of(op->getOperand(i))));
  return result;
}

}  // namespace tg::compiler::tx8be::detail
