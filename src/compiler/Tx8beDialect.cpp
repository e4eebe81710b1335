// The tx8be dialect: registration, attribute and type verifiers, and the element types of the
// core dtypes.
#include <llvm/ADT/TypeSwitch.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/DialectImplementation.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"

using namespace mlir;

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beDialect.cpp.inc"
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beTypes.cpp.inc"

namespace tg::compiler::tx8be {

void Tx8beDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beOps.cpp.inc"
      >();
}

namespace {

LogicalResult verify_dims(function_ref<InFlightDiagnostic()> emitError, const char* what,
                          std::initializer_list<int32_t> dims) {
  for (int32_t d : dims) {
    if (d < 1) return emitError() << what << " parts must be at least 1, got " << d;
  }
  return success();
}

}  // namespace

LogicalResult ParallelAttr::verify(function_ref<InFlightDiagnostic()> emitError, ParallelMode, bool, int32_t dp_x,
                                   int32_t dp_y, int32_t dp_z, int32_t tp_x, int32_t tp_y, int32_t tp_z, bool,
                                   DenseI32ArrayAttr shape_spatial_sharding) {
  if (failed(verify_dims(emitError, "data-parallel", {dp_x, dp_y, dp_z})) ||
      failed(verify_dims(emitError, "tensor-parallel", {tp_x, tp_y, tp_z}))) {
    return failure();
  }
  if (shape_spatial_sharding) {
    for (int32_t parts : shape_spatial_sharding.asArrayRef()) {
      if (parts < 1) return emitError() << "shape_spatial_sharding parts must be at least 1, got " << parts;
    }
  }
  return success();
}

LogicalResult DevAttr::verify(function_ref<InFlightDiagnostic()> emitError, uint64_t, LayoutMode, bool multi_buf_en,
                              int32_t multi_buf_num, DenseI64ArrayAttr, DenseI64ArrayAttr temporal_mem_slice, int32_t,
                              int64_t imm_addr, DenseI64ArrayAttr mem_addr) {
  if (multi_buf_num < 1) return emitError() << "multi_buf_num must be at least 1, got " << multi_buf_num;
  if (!multi_buf_en && multi_buf_num != 1) {
    return emitError() << "multi_buf_num is " << multi_buf_num << " but multi_buf_en is false";
  }
  if (temporal_mem_slice) {
    for (int64_t size : temporal_mem_slice.asArrayRef()) {
      if (size < 0) return emitError() << "temporal_mem_slice sizes cannot be negative, got " << size;
    }
  }
  // -1 is "not placed yet".
  if (imm_addr < -1) return emitError() << "imm_addr must be an address or -1, got " << imm_addr;
  // Once placed, a multi-buffered tensor has one address per buffer.
  if (mem_addr && multi_buf_en && !mem_addr.empty() && int64_t(mem_addr.size()) != multi_buf_num) {
    return emitError() << "mem_addr holds " << mem_addr.size() << " addresses for " << multi_buf_num << " buffers";
  }
  return success();
}

DevAttr DevAttr::getWithLayout(MLIRContext* context, LayoutMode layout) {
  auto empty = DenseI64ArrayAttr::get(context, {});
  return DevAttr::get(context, 0, layout, false, 1, empty, empty, 0, -1, empty);
}

DevAttr DevAttr::withLayout(LayoutMode layout) const {
  return DevAttr::get(getContext(), getImmSize(), layout, getMultiBufEn(), getMultiBufNum(), getOutShapeBufIdx(),
                      getTemporalMemSlice(), getSourceType(), getImmAddr(), getMemAddr());
}

LogicalResult RegionAttr::verify(function_ref<InFlightDiagnostic()> emitError, int32_t x, int32_t y, int32_t width,
                                 int32_t height) {
  if (x < 0 || y < 0) return emitError() << "the region's corner (" << x << ", " << y << ") is off the mesh";
  if (width < 1 || height < 1) {
    return emitError() << "the region must be at least one tile wide and high, got " << width << "x" << height;
  }
  return success();
}

LogicalResult BlockQuantType::verify(function_ref<InFlightDiagnostic()> emitError, StringRef name) {
  for (int i = 0; i < kDTypeCount; ++i) {
    const DType type = DType(i);
    if (is_quantized(type) && dtype_name(type) == std::string_view(name.data(), name.size())) return success();
  }
  return emitError() << "'" << name
                     << "' is not a block-quantized type (q8_0, q4_0, q4_1, q5_0, q5_1, q4_K, q5_K, q6_K)";
}

Type element_type(MLIRContext* context, DType type) {
  switch (type) {
    case DType::F32: return Float32Type::get(context);
    case DType::F16: return Float16Type::get(context);
    case DType::BF16: return BFloat16Type::get(context);
    case DType::I32: return IntegerType::get(context, 32);
    default: {
      const std::string_view name = dtype_name(type);
      return BlockQuantType::get(context, StringRef(name.data(), name.size()));
    }
  }
}

std::optional<DType> core_dtype(Type type) {
  if (type.isF32()) return DType::F32;
  if (type.isF16()) return DType::F16;
  if (type.isBF16()) return DType::BF16;
  if (type.isSignlessInteger(32)) return DType::I32;
  if (auto quant = type.dyn_cast<BlockQuantType>()) {
    const StringRef name = quant.getName();
    for (int i = 0; i < kDTypeCount; ++i) {
      if (dtype_name(DType(i)) == std::string_view(name.data(), name.size())) return DType(i);
    }
  }
  return std::nullopt;
}

std::string layout_component(StringRef layout, unsigned index, unsigned operands) {
  SmallVector<StringRef, 6> parts;
  layout.split(parts, '-');
  if (parts.size() == 1) return parts[0].str();
  return parts.size() == operands + 1 && index <= operands ? parts[index].str() : "";
}

}  // namespace tg::compiler::tx8be
