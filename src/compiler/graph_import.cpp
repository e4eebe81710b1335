#include "tilegraph/compiler/graph_import.h"

#include <algorithm>
#include <map>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLExtras.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/Verifier.h>

#include "core_bridge.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/core/error.h"

using namespace mlir;

namespace tg::compiler {

namespace {

constexpr int kRank = kMaxDims;

bool is_view_op(Op op) { return op == Op::VIEW || op == Op::RESHAPE || op == Op::PERMUTE || op == Op::TRANSPOSE; }

std::string node_name(const Tensor& t) { return t.name[0] ? std::string(t.name) : std::string(op_name(t.op)); }

[[noreturn]] void fail(const Tensor& t, const std::string& why) {
  throw Error("import: " + std::string(op_name(t.op)) + " node '" + node_name(t) + "' (" + describe(t) + "): " + why);
}

class Importer {
 public:
  Importer(MLIRContext& context, const Graph& graph, const ImportOptions& options)
      : context_(context), builder_(&context), graph_(graph), options_(options) {}

  ImportedGraph run() {
    context_.loadDialect<tx8be::Tx8beDialect, func::FuncDialect>();
    ImportedGraph result;
    result.module = ModuleOp::create(builder_.getUnknownLoc());
    builder_.setInsertionPointToEnd(result.module->getBody());

    std::vector<const Tensor*> arguments;
    for (const Tensor* leaf : graph_.leafs()) {
      if (!(leaf->flags & kFlagParam)) arguments.push_back(leaf);
    }
    SmallVector<Type> argument_types;
    for (const Tensor* t : arguments) argument_types.push_back(type_of(*t));
    auto function = builder_.create<func::FuncOp>(builder_.getUnknownLoc(), options_.function_name,
                                                  builder_.getFunctionType(argument_types, {}));
    Block* body = function.addEntryBlock();
    for (size_t i = 0; i < arguments.size(); ++i) {
      values_[arguments[i]] = body->getArgument(unsigned(i));
      function.setArgAttr(unsigned(i), "tx8be.name", builder_.getStringAttr(node_name(*arguments[i])));
    }
    builder_.setInsertionPointToEnd(body);
    for (const Tensor* leaf : graph_.leafs()) {
      if (leaf->flags & kFlagParam) values_[leaf] = import_weight(*leaf, result.constants);
    }
    for (const Tensor* node : graph_.nodes()) values_[node] = import_node(*node);

    SmallVector<Value> returned;
    for (const Tensor* out : graph_.outputs()) {
      returned.push_back(value_of(*out));
      result.results.push_back(out);
    }
    for (const Tensor* t : arguments) {
      auto written = state_.find(t);
      if (written == state_.end()) continue;
      // An output that is the write itself (a SET_ROWS node, which aliases its destination)
      // already returns the new contents.
      if (llvm::is_contained(returned, written->second)) continue;
      returned.push_back(written->second);
      result.results.push_back(t);
    }
    builder_.create<func::ReturnOp>(builder_.getUnknownLoc(), returned);
    function.setType(builder_.getFunctionType(argument_types, ValueRange(returned).getTypes()));

    std::string diagnostic;
    ScopedDiagnosticHandler handler(&context_, [&](Diagnostic& d) {
      diagnostic += d.str() + "\n";
      return success();
    });
    if (failed(verify(*result.module))) throw Error("import: the module does not verify: " + diagnostic);
    result.arguments = std::move(arguments);
    return result;
  }

 private:
  RankedTensorType type_of(const Tensor& t) { return tensor_type(&context_, t, kRank); }

  Location location_of(const Tensor& t) {
    return t.name[0] ? Location(NameLoc::get(builder_.getStringAttr(t.name))) : builder_.getUnknownLoc();
  }

  Value value_of(const Tensor& t) {
    auto it = values_.find(&t);
    if (it == values_.end()) fail(t, "is used before it is defined");
    return it->second;
  }

  Value import_weight(const Tensor& t, ConstantData& constants) {
    if (!t.data) fail(t, "is a weight without data");
    RankedTensorType type = type_of(t);
    HostTensor data =
        t.is_contiguous()
            ? HostTensor::borrow(t.type, std::vector<int64_t>(type.getShape().begin(), type.getShape().end()), t.data)
            : HostTensor::from_tensor(t);
    Attribute value;
    if (!is_quantized(t.type) && data.nbytes() <= options_.inline_limit_bytes) {
      const auto* raw = static_cast<const char*>(data.data());
      value = DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(raw, data.nbytes()));
    } else {
      std::string key = node_name(t);
      for (int n = 1; constants.contains(key); ++n) key = node_name(t) + "#" + std::to_string(n);
      const uint64_t print = fingerprint(data.bytes());
      value = tx8be::ExternalDataAttr::get(&context_, key, data.nbytes(), print);
      constants.add(key, std::move(data));
    }
    OperationState state(location_of(t), "tx8be.constant");
    state.addAttribute("value", value);
    state.addTypes(type);
    return builder_.create(state)->getResult(0);
  }

  Value create(const Tensor& t, StringRef name, ArrayRef<Value> operands, ArrayRef<NamedAttribute> attributes = {},
               Type result = {}) {
    OperationState state(location_of(t), ("tx8be." + name).str());
    state.addOperands(operands);
    state.addAttributes(attributes);
    state.addTypes(result ? result : Type(type_of(t)));
    return builder_.create(state)->getResult(0);
  }

  NamedAttribute f32(StringRef name, float v) { return builder_.getNamedAttr(name, builder_.getF32FloatAttr(v)); }
  NamedAttribute i32(StringRef name, int32_t v) { return builder_.getNamedAttr(name, builder_.getI32IntegerAttr(v)); }
  NamedAttribute i64(StringRef name, int64_t v) { return builder_.getNamedAttr(name, builder_.getI64IntegerAttr(v)); }
  NamedAttribute pair(StringRef name, int32_t w, int32_t h) {
    return builder_.getNamedAttr(name, DenseI64ArrayAttr::get(&context_, {h, w}));
  }

  // Records a write into state (a KV cache argument) through a view of it.
  void note_state_write(const Tensor& t, Value written) {
    const Tensor* storage = t.view_src;
    if (storage && values_.count(storage) && storage->op == Op::NONE && !(storage->flags & kFlagParam)) {
      state_[storage] = written;
    }
  }

  Value import_view(const Tensor& t) {
    // The value the view reads: the nearest source that is not itself a view op holds the
    // memory the view's offset and strides describe.
    const Tensor* base = t.src[0];
    while (base->op != Op::NONE && is_view_op(base->op)) base = base->src[0];
    if (!base->is_contiguous()) fail(t, "views a tensor that is not contiguous");
    const size_t element = dtype_traits(t.type).type_size;
    if (is_quantized(t.type)) fail(t, "views block-quantized data");
    const size_t base_offset = base->view_src ? base->view_offs : 0;
    if (t.view_src != (base->view_src ? base->view_src : base) || t.view_offs < base_offset ||
        (t.view_offs - base_offset) % element != 0) {
      fail(t, "does not start on an element of " + node_name(*base));
    }
    SmallVector<int64_t, kRank> strides;
    for (int i = kRank - 1; i >= 0; --i) {
      if (t.nb[i] % element != 0) fail(t, "has strides that are not whole elements");
      strides.push_back(int64_t(t.nb[i] / element));
    }
    return create(t, "view", {value_of(*base)},
                  {i64("offset", int64_t((t.view_offs - base_offset) / element)),
                   builder_.getNamedAttr("strides", DenseI64ArrayAttr::get(&context_, strides))});
  }

  Value import_permute(const Tensor& t) {
    // The core keeps no axes: find the permutation that maps the source's (ne, nb) onto the
    // node's (any that does gives the same elements).
    const Tensor& a = *t.src[0];
    int axes[kRank] = {0, 1, 2, 3};
    bool found = false;
    do {
      bool match = true;
      for (int i = 0; i < kRank && match; ++i) match = t.ne[axes[i]] == a.ne[i] && t.nb[axes[i]] == a.nb[i];
      found = match;
    } while (!found && std::next_permutation(axes, axes + kRank));
    if (!found) fail(t, "is not a permutation of its source");
    // Output dim j (outermost first) is input dim perm[j]: core axis i goes to core axis axes[i].
    SmallVector<int64_t, kRank> perm(kRank);
    for (int i = 0; i < kRank; ++i) perm[size_t(kRank - 1 - axes[i])] = kRank - 1 - i;
    return create(t, "transpose", {value_of(a)},
                  {builder_.getNamedAttr("perm", DenseI64ArrayAttr::get(&context_, perm))});
  }

  Value constant_vector(const Tensor& t, int64_t n, float v) {
    auto type = RankedTensorType::get({1, 1, 1, n}, builder_.getF32Type());
    OperationState state(location_of(t), "tx8be.constant");
    state.addAttribute("value", DenseElementsAttr::get(type, v));
    state.addTypes(type);
    return builder_.create(state)->getResult(0);
  }

  Value import_node(const Tensor& t) {
    auto src = [&](int i) { return value_of(*t.src[i]); };
    switch (t.op) {
      case Op::MUL_MAT: return create(t, "matmul", {src(0), src(1)});
      case Op::ADD: return create(t, "add", {src(0), src(1)});
      case Op::SUB: return create(t, "sub", {src(0), src(1)});
      case Op::MUL: return create(t, "mul", {src(0), src(1)});
      case Op::DIV: return create(t, "div", {src(0), src(1)});
      case Op::SCALE: return create(t, "scale", {src(0)}, {f32("scale", t.param_f32(0)), f32("bias", t.param_f32(1))});
      case Op::UNARY: {
        static const char* const names[] = {"relu", "gelu", "gelu_erf", "silu", "sigmoid", "tanh",
                                            "exp",  "neg",  "abs",      "sqrt", "rsqrt"};
        static_assert(std::size(names) == size_t(kUnaryOpCount));
        const int32_t op = t.op_params[0];
        if (op < 0 || op >= kUnaryOpCount) fail(t, "has an unknown unary op " + std::to_string(op));
        return create(t, names[op], {src(0)});
      }
      case Op::GLU: {
        SmallVector<Value> operands{src(0)};
        if (t.src[1]) operands.push_back(src(1));
        const char* kind = GluOp(t.op_params[0]) == GluOp::SWIGLU ? "swiglu" : "geglu";
        SmallVector<NamedAttribute> attributes{builder_.getNamedAttr("kind", builder_.getStringAttr(kind))};
        if (t.op_params[1]) attributes.push_back(builder_.getNamedAttr("swapped", builder_.getBoolAttr(true)));
        return create(t, "glu", operands, attributes);
      }
      case Op::NORM: return create(t, "layernorm", {src(0)}, {f32("epsilon", t.param_f32(0))});
      case Op::RMS_NORM: return create(t, "rmsnorm", {src(0)}, {f32("epsilon", t.param_f32(0))});
      case Op::SOFT_MAX: {
        SmallVector<Value> operands{src(0)};
        if (t.src[1]) operands.push_back(src(1));
        return create(t, "softmax", operands, {f32("scale", t.param_f32(0)), f32("max_bias", t.param_f32(1))});
      }
      case Op::ROPE: {
        SmallVector<Value> operands{src(0), src(1)};
        if (t.src[2]) operands.push_back(src(2));
        return create(
            t, "rope", operands,
            {i32("n_dims", t.op_params[1]), i32("mode", t.op_params[2]), i32("n_ctx_orig", t.op_params[4]),
             f32("freq_base", t.param_f32(5)), f32("freq_scale", t.param_f32(6)), f32("ext_factor", t.param_f32(7)),
             f32("attn_factor", t.param_f32(8)), f32("beta_fast", t.param_f32(9)), f32("beta_slow", t.param_f32(10))});
      }
      case Op::GET_ROWS: return create(t, "gather", {src(0), src(1)});
      case Op::SET_ROWS: {
        Value written = create(t, "set_rows", {src(0), src(1), src(2)});
        note_state_write(t, written);
        return written;
      }
      case Op::CPY: {
        Value written = create(t, "convert", {src(0)}, {}, type_of(*t.src[1]));
        note_state_write(t, written);
        return written;
      }
      case Op::CONT: return src(0);
      case Op::VIEW: return import_view(t);
      case Op::RESHAPE: return create(t, "reshape", {src(0)});
      case Op::PERMUTE:
      case Op::TRANSPOSE: return import_permute(t);
      case Op::FLASH_ATTN_EXT: {
        SmallVector<Value> operands{src(0), src(1), src(2)};
        if (t.src[3]) operands.push_back(src(3));
        return create(t, "attention", operands,
                      {f32("scale", t.param_f32(0)), f32("max_bias", t.param_f32(1)), f32("softcap", t.param_f32(2))});
      }
      case Op::SUM_ROWS: return create(t, "sum_rows", {src(0)});
      case Op::ARGMAX: return create(t, "argmax", {src(0)});
      case Op::BATCH_NORM: {
        const int axis = t.op_params[1];
        const int64_t channels = t.src[0]->ne[axis];
        // The back end's batchnorm takes scale and offset always: absent ones are 1 and 0.
        Value scale = t.src[3] ? src(3) : constant_vector(t, channels, 1.0f);
        Value offset = t.src[4] ? src(4) : constant_vector(t, channels, 0.0f);
        return create(t, "batchnorm_inference", {src(0), scale, offset, src(1), src(2)},
                      {f32("epsilon", t.param_f32(0)), i64("channel_axis", kRank - 1 - axis)});
      }
      case Op::CONV_2D: {
        const int32_t* p = t.op_params;
        return create(t, "conv2d", {src(1), src(0)},
                      {pair("strides", p[0], p[1]), pair("pads", p[2], p[3]), pair("dilations", p[4], p[5])});
      }
      case Op::POOL_2D: {
        const int32_t* p = t.op_params;
        const char* mode = PoolOp(p[0]) == PoolOp::MAX ? "max" : "avg";
        return create(t, "pool2d", {src(0)},
                      {builder_.getNamedAttr("mode", builder_.getStringAttr(mode)), pair("kernel", p[1], p[2]),
                       pair("strides", p[3], p[4]), pair("pads", p[5], p[6])});
      }
      case Op::CONCAT: return create(t, "concat", {src(0), src(1)}, {i64("dim", kRank - 1 - t.op_params[0])});
      case Op::NONE: break;
    }
    fail(t, "has no tx8be counterpart");
  }

  MLIRContext& context_;
  OpBuilder builder_;
  const Graph& graph_;
  const ImportOptions& options_;
  llvm::DenseMap<const Tensor*, Value> values_;
  std::map<const Tensor*, Value> state_;
};

}  // namespace

ImportedGraph import_graph(MLIRContext& context, const Graph& graph, const ImportOptions& options) {
  return Importer(context, graph, options).run();
}

}  // namespace tg::compiler
