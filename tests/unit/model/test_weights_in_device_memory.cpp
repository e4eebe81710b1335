// A llama session on a backend whose memory is not host memory: the weights, the KV cache, the
// step's inputs and its logits all cross through the Buffer interface (LlamaModel::place_weights,
// the session's cache buffer, tensor_set / tensor_get), and the tokens are the host run's.
#include <gtest/gtest.h>

#include <vector>

#include "common/device_test_backend.h"
#include "common/tensor_utils.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/runtime/reference_backend.h"
#include "tilegraph/runtime/tensor_data.h"

namespace tg::model {
namespace {

constexpr uint64_t kSeed = 99;

std::vector<int32_t> greedy_decode(const LlamaModel& model, Backend& backend, int steps,
                                   std::vector<std::vector<float>>* logits = nullptr) {
  LlamaSession session(model, backend, 64);
  std::vector<int32_t> tokens = {1, 17, 42, 7};
  const GenerationResult r = session.generate(tokens, steps);
  if (logits) {
    // One more step, whose logits the caller compares.
    const std::span<const float> l = session.eval(std::span<const int32_t>(&r.tokens.back(), 1));
    logits->emplace_back(l.begin(), l.end());
  }
  return r.tokens;
}

TEST(WeightsInDeviceMemory, ASessionGivesTheHostTokensAndLogits) {
  LlamaModel host_model = LlamaModel::generate(llama_preset("tiny"), DType::F16, kSeed);
  LlamaModel device_model = LlamaModel::generate(llama_preset("tiny"), DType::F16, kSeed);
  test::DeviceTestBackend device;
  EXPECT_TRUE(device_model.place_weights(device).empty());
  EXPECT_FALSE(tensor_on_host(*device_model.token_embd()));
  EXPECT_FALSE(tensor_on_host(*device_model.layers()[1].w_down));
  EXPECT_EQ(device.buffers_allocated, 1u);  // every weight in one buffer

  auto reference = make_reference_backend();
  std::vector<std::vector<float>> host_logits, device_logits;
  const std::vector<int32_t> host_tokens = greedy_decode(host_model, *reference, 5, &host_logits);
  const std::vector<int32_t> device_tokens = greedy_decode(device_model, device, 5, &device_logits);
  EXPECT_EQ(device_tokens, host_tokens);
  EXPECT_EQ(device_logits, host_logits);  // the same reference code on the same bytes
  // The weights, the KV cache and the step's graph each in a buffer of their own.
  EXPECT_EQ(device.buffers_allocated, 3u);
}

TEST(WeightsInDeviceMemory, AHostBackendKeepsTheWeightsWhereTheyAre) {
  LlamaModel model = LlamaModel::generate(llama_preset("tiny"), DType::Q8_0, kSeed);
  const void* before = model.layers()[0].wq->data;
  auto reference = make_reference_backend();
  EXPECT_TRUE(model.place_weights(*reference).empty());
  EXPECT_EQ(model.layers()[0].wq->data, before);
}

// A backend without q4_0 kernels gets q8_0 weights: each row requantized from its f32 values.
TEST(WeightsInDeviceMemory, TypesTheBackendDoesNotRunAreConvertedAtPlacement) {
  const LlamaModel original = LlamaModel::generate(llama_preset("tiny"), DType::Q4_0, kSeed);
  LlamaModel model = LlamaModel::generate(llama_preset("tiny"), DType::Q4_0, kSeed);
  test::DeviceTestBackend device([](DType t) { return t == DType::Q4_0 ? DType::Q8_0 : t; });
  const std::vector<LlamaModel::Conversion> conversions = model.place_weights(device);
  ASSERT_EQ(conversions.size(), 1u);
  EXPECT_EQ(conversions[0].from, DType::Q4_0);
  EXPECT_EQ(conversions[0].to, DType::Q8_0);
  EXPECT_EQ(conversions[0].tensors, 2u + 7u * size_t(model.config().n_layer));  // embedding, head, 7 per block

  const Tensor& wq = *model.layers()[0].wq;
  const Tensor& wq0 = *original.layers()[0].wq;
  ASSERT_EQ(wq.type, DType::Q8_0);
  EXPECT_EQ(wq.nb[1], row_size(DType::Q8_0, wq.ne[0]));
  std::vector<uint8_t> placed(wq.nbytes());
  tensor_get(wq, placed.data(), 0, placed.size());
  std::vector<float> row(size_t(wq.ne[0]));
  std::vector<uint8_t> expected(wq.nb[1]);
  for (int64_t r = 0; r < wq.nrows(); r += 17) {
    row_to_f32(DType::Q4_0, static_cast<const char*>(wq0.data) + size_t(r) * wq0.nb[1], row.data(), wq.ne[0]);
    row_from_f32(DType::Q8_0, row.data(), expected.data(), wq.ne[0]);
    EXPECT_EQ(std::vector<uint8_t>(placed.begin() + long(size_t(r) * wq.nb[1]),
                                   placed.begin() + long(size_t(r + 1) * wq.nb[1])),
              expected)
        << "row " << r;
  }
  // The converted model runs.
  EXPECT_EQ(greedy_decode(model, device, 2).size(), 2u);
}

}  // namespace
}  // namespace tg::model
