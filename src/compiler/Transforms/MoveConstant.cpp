// move-constant (Passes.td): constants leave the IR for the ConstContainer; each use reads the
// constant through a load_const of its id, and the ids are renumbered in the order the TX8 back
// end lays constants out in DDR (large ones first, aligned to the DDR banks of the tiles).
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

#include "TileMesh.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/compiler/host_tensor.h"
#include "tilegraph/core/error.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

// A DDR bank: constants larger than a bank on every tile are placed first.
constexpr uint64_t kDdrBankBytes = 4 * 1024;

// Whether some user reads the constant through a load into SPM (an op outside the dialect, the
// function's return, counts as one).
bool needs_load(ConstantOp constant) {
  for (mlir::OpOperand& use : constant.getOutput().getUses()) {
    auto lib = mlir::dyn_cast<OpLibInterface>(use.getOwner());
    const unsigned index = use.getOperandNumber();
    if (!lib || index >= 64 || (lib.queryOpAttr().needLoad >> index & 1)) return true;
  }
  return false;
}

struct MoveConstantPass : public MoveConstantBase<MoveConstantPass> {
  explicit MoveConstantPass(ConstContainer* out = nullptr) : out_(out) {}

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    const mlir::FailureOr<TileMesh> mesh = tile_mesh(module);
    if (mlir::failed(mesh)) return signalPassFailure();
    ConstContainer container;
    std::vector<LoadConstOp> loads;
    llvm::SmallVector<ConstantOp> constants;
    module.walk([&](ConstantOp op) { constants.push_back(op); });
    for (ConstantOp constant : constants) {
      if (constant->use_empty()) {
        constant->erase();
        continue;
      }
      auto type = constant.getOutput().getType().cast<mlir::RankedTensorType>();
      uint64_t bytes = 0;
      try {
        bytes = dense_bytes(*core_dtype(type.getElementType()), type.getShape());
      } catch (const Error& e) {
        constant.emitOpError() << e.what();
        return signalPassFailure();
      }
      // Before sharding every chip holds the whole constant.
      const uint32_t id = container.add({ParamInfo{constant.getValue(), {ConstContainer::kAllChips}, 0}}, bytes);
      const bool load = needs_load(constant);
      mlir::OpBuilder builder(constant);
      for (mlir::OpOperand& use : llvm::make_early_inc_range(constant.getOutput().getUses())) {
        auto read = builder.create<LoadConstOp>(constant.getLoc(), mlir::TypeRange{type}, mlir::ValueRange{},
                                                llvm::ArrayRef<mlir::NamedAttribute>{});
        read->setAttrs(constant->getAttrDictionary());  // value, layout_str, dev_info...
        read.setConstMapIdAttr(builder.getI64IntegerAttr(id));
        if (!load) read.setBypassCodegenAttr(builder.getBoolAttr(true));
        use.set(read.getOutput());
        loads.push_back(read);
      }
      constant->erase();
    }
    const std::map<uint32_t, uint32_t> renumbered = container.renumber(kDdrBankBytes * uint64_t(mesh->tiles()));
    for (LoadConstOp read : loads) {
      read.setConstMapIdAttr(mlir::IntegerAttr::get(read.getConstMapIdAttr().getType(),
                                                    renumbered.at(uint32_t(read.getConstMapIdAttr().getInt()))));
    }
    if (out_) *out_ = std::move(container);
  }

  ConstContainer* out_;
};

}  // namespace

std::unique_ptr<mlir::Pass> createMoveConstantPass() { return std::make_unique<MoveConstantPass>(); }
std::unique_ptr<mlir::Pass> createMoveConstantPass(ConstContainer* container) {
  return std::make_unique<MoveConstantPass>(container);
}

}  // namespace tg::compiler::tx8be
