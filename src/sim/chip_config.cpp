#include "tilegraph/sim/chip_config.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "tilegraph/core/error.h"

namespace tg::sim {

namespace {

using nlohmann::json;

[[noreturn]] void bad_key(const std::string& key, const std::string& expected, const json& got) {
  throw Error(key + ": expected " + expected + ", got " + got.dump());
}

// Reads the keys of one JSON object into fields, refusing unknown keys and wrong types.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {
    if (!object_.is_object())
      bad_key(prefix_.empty() ? "configuration" : prefix_.substr(0, prefix_.size() - 1), "an object", object_);
  }
  // Refuses the keys no read asked for (misspellings would otherwise be ignored silently).
  void done() const {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      if (!known_.count(it.key())) throw Error(prefix_ + it.key() + ": unknown key");
    }
  }

  template <class Int>
  void integer(const char* key, Int& field, int64_t min_value) {
    known_.insert(key);
    if (!object_.contains(key)) return;
    const json& v = object_.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < min_value) {
      bad_key(prefix_ + key, min_value > 0 ? "a positive integer" : "an integer >= " + std::to_string(min_value), v);
    }
    field = Int(v.get<int64_t>());
  }
  void unsigned_integer(const char* key, uint64_t& field) {
    known_.insert(key);
    if (!object_.contains(key)) return;
    const json& v = object_.at(key);
    if (!v.is_number_unsigned() || v.get<uint64_t>() == 0) bad_key(prefix_ + key, "a positive integer", v);
    field = v.get<uint64_t>();
  }
  void positive(const char* key, double& field) {
    known_.insert(key);
    if (!object_.contains(key)) return;
    const json& v = object_.at(key);
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) {
      bad_key(prefix_ + key, "a positive number", v);
    }
    field = v.get<double>();
  }
  // A nested object, if present.
  const json* object(const char* key) {
    known_.insert(key);
    return object_.contains(key) ? &object_.at(key) : nullptr;
  }
  std::string prefix(const char* key) const { return prefix_ + key + "."; }

 private:
  const json& object_;
  std::string prefix_;
  std::set<std::string> known_;
};

void read_dma(ObjectReader& parent, const char* key, DmaConfig& dma) {
  if (const json* j = parent.object(key)) {
    ObjectReader r(*j, parent.prefix(key));
    r.positive("bytes_per_cycle", dma.bytes_per_cycle);
    r.integer("latency_cycles", dma.latency_cycles, 0);
    r.done();
  }
}

json dma_json(const DmaConfig& dma) {
  return {{"bytes_per_cycle", dma.bytes_per_cycle}, {"latency_cycles", dma.latency_cycles}};
}

}  // namespace

double ChipConfig::ne_cycles_per_step(Format format) const {
  switch (format) {
    case Format::INT8: return ne.cycles_per_step_int8;
    case Format::FP16: return ne.cycles_per_step_fp16;
    case Format::BF16: return ne.cycles_per_step_bf16;
    case Format::TF32: return ne.cycles_per_step_tf32;
    case Format::FP32: return ne.cycles_per_step_fp32;
    case Format::INT32: break;
  }
  throw Error("the NE does not take " + std::string(format_name(format)) + " inputs (fp32, tf32, fp16, bf16, int8)");
}

void ChipConfig::validate() const {
  auto positive = [](const char* key, double v) {
    if (!(v > 0) || !std::isfinite(v))
      throw Error(std::string(key) + ": expected a positive number, got " + std::to_string(v));
  };
  auto non_negative = [](const char* key, int64_t v) {
    if (v < 0) throw Error(std::string(key) + ": expected an integer >= 0, got " + std::to_string(v));
  };
  positive("mesh.x", mesh_x);
  positive("mesh.y", mesh_y);
  if (mesh_x * mesh_y > 1024) throw Error("mesh: at most 1024 tiles, got " + std::to_string(mesh_x * mesh_y));
  positive("clock_mhz", clock_mhz);
  positive("spm_bytes", double(spm_bytes));
  if (spm_bytes % 256 != 0) {
    throw Error("spm_bytes: expected a multiple of 256 bytes (2048 bits), got " + std::to_string(spm_bytes));
  }
  positive("ne.arrays_per_tile", ne.arrays_per_tile);
  positive("ne.cycles_per_step.int8", ne.cycles_per_step_int8);
  positive("ne.cycles_per_step.fp16", ne.cycles_per_step_fp16);
  positive("ne.cycles_per_step.bf16", ne.cycles_per_step_bf16);
  positive("ne.cycles_per_step.tf32", ne.cycles_per_step_tf32);
  positive("ne.cycles_per_step.fp32", ne.cycles_per_step_fp32);
  non_negative("ne.latency_cycles", ne.latency_cycles);
  positive("cgra.lanes", cgra.lanes);
  non_negative("cgra.latency_cycles", cgra.latency_cycles);
  positive("cgra.transcendental_cycles", cgra.transcendental_cycles);
  const std::pair<const char*, const DmaConfig*> dmas[] = {
      {"rdma", &rdma}, {"wdma", &wdma}, {"tdma", &tdma}, {"dte", &dte}};
  for (const auto& [name, dma] : dmas) {
    positive((std::string(name) + ".bytes_per_cycle").c_str(), dma->bytes_per_cycle);
    non_negative((std::string(name) + ".latency_cycles").c_str(), dma->latency_cycles);
  }
  positive("noc.link_bytes_per_cycle", noc.link_bytes_per_cycle);
  non_negative("noc.hop_latency_cycles", noc.hop_latency_cycles);
  positive("ddr.bytes", double(ddr.bytes));
  positive("ddr.bytes_per_cycle", ddr.bytes_per_cycle);
  positive("ddr.burst_bytes", double(ddr.burst_bytes));
}

ChipPeaks derive_peaks(const ChipConfig& c) {
  constexpr double kFlopPerStep = 2.0 * 8 * 16 * 8;
  const double steps_per_second = double(c.tile_count()) * c.ne.arrays_per_tile * c.clock_mhz * 1e6;
  auto tera = [&](double cycles_per_step) { return steps_per_second * kFlopPerStep / cycles_per_step / 1e12; };
  ChipPeaks p;
  p.int8_tops = tera(c.ne.cycles_per_step_int8);
  p.fp16_tflops = tera(c.ne.cycles_per_step_fp16);
  p.bf16_tflops = tera(c.ne.cycles_per_step_bf16);
  p.tf32_tflops = tera(c.ne.cycles_per_step_tf32);
  p.fp32_tflops = tera(c.ne.cycles_per_step_fp32);
  p.ddr_gb_per_s = c.ddr.bytes_per_cycle * c.clock_mhz * 1e6 / 1e9;
  p.ddr_gib = double(c.ddr.bytes) / double(1ull << 30);
  p.spm_mib_per_tile = double(c.spm_bytes) / double(1 << 20);
  p.spm_mib_total = p.spm_mib_per_tile * c.tile_count();
  return p;
}

ChipConfig chip_config_from_json(const json& j) {
  ChipConfig c;
  {
    ObjectReader r(j, "");
    if (const json* mesh = r.object("mesh")) {
      ObjectReader m(*mesh, "mesh.");
      m.integer("x", c.mesh_x, 1);
      m.integer("y", c.mesh_y, 1);
      m.done();
    }
    r.positive("clock_mhz", c.clock_mhz);
    r.unsigned_integer("spm_bytes", c.spm_bytes);
    if (const json* ne = r.object("ne")) {
      ObjectReader n(*ne, "ne.");
      n.integer("arrays_per_tile", c.ne.arrays_per_tile, 1);
      n.integer("latency_cycles", c.ne.latency_cycles, 0);
      if (const json* steps = n.object("cycles_per_step")) {
        ObjectReader s(*steps, "ne.cycles_per_step.");
        s.positive("int8", c.ne.cycles_per_step_int8);
        s.positive("fp16", c.ne.cycles_per_step_fp16);
        s.positive("bf16", c.ne.cycles_per_step_bf16);
        s.positive("tf32", c.ne.cycles_per_step_tf32);
        s.positive("fp32", c.ne.cycles_per_step_fp32);
        s.done();
      }
      n.done();
    }
    if (const json* cgra = r.object("cgra")) {
      ObjectReader g(*cgra, "cgra.");
      g.integer("lanes", c.cgra.lanes, 1);
      g.integer("latency_cycles", c.cgra.latency_cycles, 0);
      g.integer("transcendental_cycles", c.cgra.transcendental_cycles, 1);
      g.done();
    }
    read_dma(r, "rdma", c.rdma);
    read_dma(r, "wdma", c.wdma);
    read_dma(r, "tdma", c.tdma);
    read_dma(r, "dte", c.dte);
    if (const json* noc = r.object("noc")) {
      ObjectReader n(*noc, "noc.");
      n.positive("link_bytes_per_cycle", c.noc.link_bytes_per_cycle);
      n.integer("hop_latency_cycles", c.noc.hop_latency_cycles, 0);
      n.done();
    }
    if (const json* ddr = r.object("ddr")) {
      ObjectReader d(*ddr, "ddr.");
      d.unsigned_integer("bytes", c.ddr.bytes);
      d.positive("bytes_per_cycle", c.ddr.bytes_per_cycle);
      d.unsigned_integer("burst_bytes", c.ddr.burst_bytes);
      d.done();
    }
    r.done();
  }
  c.validate();
  return c;
}

ChipConfig load_chip_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("chip config: cannot open '" + path + "'");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error("chip config '" + path + "': not valid JSON: " + e.what());
  }
  try {
    return chip_config_from_json(j);
  } catch (const Error& e) {
    throw Error("chip config '" + path + "': " + e.what());
  }
}

json to_json(const ChipConfig& c) {
  return {
      {"mesh", {{"x", c.mesh_x}, {"y", c.mesh_y}}},
      {"clock_mhz", c.clock_mhz},
      {"spm_bytes", c.spm_bytes},
      {"ne",
       {{"arrays_per_tile", c.ne.arrays_per_tile},
        {"latency_cycles", c.ne.latency_cycles},
        {"cycles_per_step",
         {{"int8", c.ne.cycles_per_step_int8},
          {"fp16", c.ne.cycles_per_step_fp16},
          {"bf16", c.ne.cycles_per_step_bf16},
          {"tf32", c.ne.cycles_per_step_tf32},
          {"fp32", c.ne.cycles_per_step_fp32}}}}},
      {"cgra",
       {{"lanes", c.cgra.lanes},
        {"latency_cycles", c.cgra.latency_cycles},
        {"transcendental_cycles", c.cgra.transcendental_cycles}}},
      {"rdma", dma_json(c.rdma)},
      {"wdma", dma_json(c.wdma)},
      {"tdma", dma_json(c.tdma)},
      {"dte", dma_json(c.dte)},
      {"noc", {{"link_bytes_per_cycle", c.noc.link_bytes_per_cycle}, {"hop_latency_cycles", c.noc.hop_latency_cycles}}},
      {"ddr", {{"bytes", c.ddr.bytes}, {"bytes_per_cycle", c.ddr.bytes_per_cycle}, {"burst_bytes", c.ddr.burst_bytes}}},
  };
}

json to_json(const ChipPeaks& p) {
  return {
      {"int8_tops", p.int8_tops},     {"fp16_tflops", p.fp16_tflops},           {"bf16_tflops", p.bf16_tflops},
      {"tf32_tflops", p.tf32_tflops}, {"fp32_tflops", p.fp32_tflops},           {"ddr_gb_per_s", p.ddr_gb_per_s},
      {"ddr_gib", p.ddr_gib},         {"spm_mib_per_tile", p.spm_mib_per_tile}, {"spm_mib_total", p.spm_mib_total},
  };
}

}  // namespace tg::sim
