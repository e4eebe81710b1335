#include "tilegraph/sim/chip.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "chip_state.h"
#include "tilegraph/core/error.h"

namespace tg::sim {

std::string_view engine_name(Engine engine) {
  static constexpr std::string_view kNames[kEngineCount] = {"NE", "CT", "RDMA", "WDMA", "TDMA", "DTE"};
  const int i = int(engine);
  if (i < 0 || i >= kEngineCount) throw Error("unknown engine " + std::to_string(i));
  return kNames[i];
}

// ---- State ----

Chip::State::State(const ChipConfig& c) : config(c), ddr(c.ddr.bytes) {
  config.validate();
  const int tiles = config.tile_count();
  spms.reserve(static_cast<size_t>(tiles));
  for (int t = 0; t < tiles; ++t) spms.emplace_back(t, config.spm_bytes);
  last.assign(static_cast<size_t>(tiles), {});
  for (auto& engines : last) engines.fill(-1);
  pending.resize(static_cast<size_t>(tiles));
  open_op.assign(static_cast<size_t>(tiles), -1);
  spm_users.resize(static_cast<size_t>(tiles));
  for (Spm& spm : spms) spm.set_access_log(&accesses);
}

namespace {

// Makes `at` a segment boundary (splitting the segment that covers it).
void split_at(std::map<uint64_t, SpmSegment>& segments, uint64_t at) {
  auto it = segments.upper_bound(at);
  if (it == segments.begin()) return;
  --it;
  if (it->first < at && it->second.end > at) {
    SpmSegment tail = it->second;
    it->second.end = at;
    segments.emplace(at, std::move(tail));
  }
}

}  // namespace

void Chip::State::track_accesses(int64_t id) {
  const Instruction& node = nodes[size_t(id)];
  auto ordered_anyway = [&](int64_t other) {
    const Instruction& o = nodes[size_t(other)];
    return !o.sync && o.tile == node.tile && o.engine == node.engine;  // an engine runs in issue order
  };
  auto require = [&](int64_t earlier, Ordering::Kind kind, const SpmAccess& a, uint64_t begin, uint64_t end) {
    if (earlier >= 0 && earlier != id && !ordered_anyway(earlier))
      orderings.push_back({earlier, id, a.tile, begin, end, kind});
  };
  for (const SpmAccess& a : accesses) {
    std::map<uint64_t, SpmSegment>& segments = spm_users[size_t(a.tile)];
    const uint64_t end = a.addr + a.bytes;
    split_at(segments, a.addr);
    split_at(segments, end);
    // Fill the gaps nothing tracked yet, so every byte of the range has a segment.
    for (uint64_t at = a.addr; at < end;) {
      auto it = segments.lower_bound(at);
      if (it != segments.end() && it->first == at) {
        at = it->second.end;
        continue;
      }
      const uint64_t gap_end = it == segments.end() ? end : std::min(end, it->first);
      segments.emplace(at, SpmSegment{gap_end, -1, {}});
      at = gap_end;
    }
    auto first = segments.lower_bound(a.addr), last = segments.lower_bound(end);
    for (auto it = first; it != last; ++it) {
      SpmSegment& seg = it->second;
      if (!a.write) {
        require(seg.writer, Ordering::kReadAfterWrite, a, it->first, seg.end);
        if (seg.readers.empty() || seg.readers.back() != id) seg.readers.push_back(id);
      } else {
        require(seg.writer, Ordering::kWriteAfterWrite, a, it->first, seg.end);
        for (int64_t reader : seg.readers) require(reader, Ordering::kWriteAfterRead, a, it->first, seg.end);
      }
    }
    if (a.write) {
      segments.erase(first, last);
      segments.emplace(a.addr, SpmSegment{end, id, {}});
    }
  }
  accesses.clear();
}

uint64_t Chip::State::cost_alone(const Work& work) const {
  if (work.bytes <= 0) return work.latency;
  double rate = work.rate_cap;
  if (work.uses_ddr) rate = std::min(rate, config.ddr.bytes_per_cycle);
  if (!work.links.empty()) rate = std::min(rate, config.noc.link_bytes_per_cycle);
  return work.latency + uint64_t(std::ceil(work.bytes / rate));
}

uint64_t Chip::State::issue(int tile, Engine engine, std::string name, Work work) {
  Instruction node;
  node.tile = tile;
  node.engine = engine;
  node.name = std::move(name);
  node.cost = cost_alone(work);
  node.work = std::move(work);
  node.op = open_op[size_t(tile)];
  std::vector<int64_t>& waits = pending[size_t(tile)][size_t(engine)];
  node.deps = std::move(waits);
  waits.clear();
  int64_t& previous = last[size_t(tile)][size_t(engine)];
  if (previous >= 0) node.deps.push_back(previous);
  previous = int64_t(nodes.size());
  const uint64_t cost = node.cost;
  nodes.push_back(std::move(node));
  track_accesses(int64_t(nodes.size()) - 1);
  dirty = true;
  return cost;
}

void Chip::State::sync_node(std::vector<int64_t> deps, const std::vector<int>& tiles, std::string name) {
  const int64_t id = int64_t(nodes.size());
  Instruction node;
  node.sync = true;
  node.tile = tiles.size() == 1 ? tiles[0] : -1;
  node.name = std::move(name);
  node.deps = std::move(deps);
  nodes.push_back(std::move(node));
  for (int t : tiles) {
    for (auto& waits : pending[size_t(t)]) waits.push_back(id);
  }
  dirty = true;
}

std::vector<int> Chip::State::route(int from, int to) const {
  enum { kEast, kWest, kSouth, kNorth };
  std::vector<int> links;
  int x = from % config.mesh_x, y = from / config.mesh_x;
  const int tx = to % config.mesh_x, ty = to / config.mesh_x;
  while (x != tx) {
    const int here = y * config.mesh_x + x;
    links.push_back(link_id(here, x < tx ? kEast : kWest));
    x += x < tx ? 1 : -1;
  }
  while (y != ty) {
    const int here = y * config.mesh_x + x;
    links.push_back(link_id(here, y < ty ? kSouth : kNorth));
    y += y < ty ? 1 : -1;
  }
  return links;
}

// ---- Tile ----

Tile::Tile(Chip& chip, int index) : chip_(&chip), index_(index) {}

int Tile::x() const { return index_ % chip_->config().mesh_x; }
int Tile::y() const { return index_ / chip_->config().mesh_x; }
const ChipConfig& Tile::config() const { return chip_->config(); }
Spm& Tile::spm() { return chip_->state().spms[size_t(index_)]; }
const Spm& Tile::spm() const { return chip_->state().spms[size_t(index_)]; }

Event Tile::record(Engine engine) const {
  engine_name(engine);
  const Chip::State& s = chip_->state();
  const int64_t id = s.last[size_t(index_)][size_t(engine)];
  return Event{id < 0 ? -1 : s.settled + id};
}

void Tile::wait(Engine engine, Event event) {
  engine_name(engine);
  Chip::State& s = chip_->state();
  if (event.id >= s.settled + int64_t(s.nodes.size()))
    throw Error("wait: event " + std::to_string(event.id) + " was never recorded");
  if (event.id >= s.settled) s.pending[size_t(index_)][size_t(engine)].push_back(event.id - s.settled);
}

void Tile::fence() {
  Chip::State& s = chip_->state();
  std::vector<int64_t> deps;
  for (int64_t id : s.last[size_t(index_)]) {
    if (id >= 0) deps.push_back(id);
  }
  for (const auto& waits : s.pending[size_t(index_)]) deps.insert(deps.end(), waits.begin(), waits.end());
  for (auto& waits : s.pending[size_t(index_)]) waits.clear();
  s.sync_node(std::move(deps), {index_}, "fence");
}

void Tile::begin_op(std::string name) {
  Chip::State& s = chip_->state();
  if (s.open_op[size_t(index_)] >= 0) {
    throw Error("begin_op '" + name + "' on tile " + std::to_string(index_) + ": op '" +
                s.op_names[size_t(s.open_op[size_t(index_)])].second + "' is still open (ops do not nest)");
  }
  s.open_op[size_t(index_)] = int(s.op_names.size());
  s.op_names.emplace_back(index_, std::move(name));
}

void Tile::end_op() {
  Chip::State& s = chip_->state();
  if (s.open_op[size_t(index_)] < 0) throw Error("end_op on tile " + std::to_string(index_) + ": no op is open");
  s.open_op[size_t(index_)] = -1;
  s.dirty = true;
}

// ---- Chip ----

Chip::Chip(ChipConfig config) : config_(config), state_(std::make_unique<State>(config)) {
  tiles_.reserve(static_cast<size_t>(config_.tile_count()));
  for (int t = 0; t < config_.tile_count(); ++t) tiles_.emplace_back(*this, t);
}

Chip::~Chip() = default;

Tile& Chip::tile(int index) {
  if (index < 0 || index >= tile_count()) {
    throw Error("tile " + std::to_string(index) + " does not exist (the chip has " + std::to_string(tile_count()) +
                " tiles)");
  }
  return tiles_[size_t(index)];
}

Tile& Chip::tile(int x, int y) {
  if (x < 0 || y < 0 || x >= config_.mesh_x || y >= config_.mesh_y) {
    throw Error("tile (" + std::to_string(x) + ", " + std::to_string(y) + ") is outside the " +
                std::to_string(config_.mesh_x) + "x" + std::to_string(config_.mesh_y) + " mesh");
  }
  return tiles_[size_t(y * config_.mesh_x + x)];
}

Ddr& Chip::ddr() { return state_->ddr; }
const Ddr& Chip::ddr() const { return state_->ddr; }

int Chip::hops(int from_tile, int to_tile) const {
  for (int t : {from_tile, to_tile}) {
    if (t < 0 || t >= tile_count()) {
      throw Error("hops: tile " + std::to_string(t) + " does not exist (the chip has " + std::to_string(tile_count()) +
                  " tiles)");
    }
  }
  return std::abs(from_tile % config_.mesh_x - to_tile % config_.mesh_x) +
         std::abs(from_tile / config_.mesh_x - to_tile / config_.mesh_x);
}

void Chip::barrier() {
  std::vector<int64_t> deps;
  std::vector<int> all;
  for (int t = 0; t < tile_count(); ++t) {
    all.push_back(t);
    for (int64_t id : state_->last[size_t(t)]) {
      if (id >= 0) deps.push_back(id);
    }
    for (auto& waits : state_->pending[size_t(t)]) {
      deps.insert(deps.end(), waits.begin(), waits.end());
      waits.clear();
    }
  }
  state_->sync_node(std::move(deps), all, "barrier");
}

ChipReport Chip::report() {
  state_->schedule();
  return state_->report;
}

void Chip::settle() { state_->settle(); }

uint64_t Chip::mark() const { return uint64_t(state_->settled) + state_->nodes.size(); }

ChipReport Chip::report_window(uint64_t from, uint64_t to) {
  state_->schedule();
  const uint64_t settled = uint64_t(state_->settled), now = settled + state_->nodes.size();
  to = std::min(to, now);
  if (from > to) throw Error("report_window: mark " + std::to_string(from) + " is after " + std::to_string(to));
  if (from < settled) {
    throw Error("report_window: mark " + std::to_string(from) + " is before the last settle() (mark " +
                std::to_string(settled) + "), whose instructions are forgotten");
  }
  return state_->window_report(int64_t(from - settled), int64_t(to - settled), from == 0);
}

const std::vector<TimelineEntry>& Chip::timeline() {
  state_->schedule();
  return state_->timeline;
}

const std::vector<OpSpan>& Chip::ops() {
  state_->schedule();
  return state_->op_spans;
}

const std::vector<Chip::CounterSample>& Chip::counters() {
  state_->schedule();
  return state_->counters;
}

nlohmann::json to_json(const ChipReport& r) {
  nlohmann::json tiles = nlohmann::json::array();
  for (size_t t = 0; t < r.tiles.size(); ++t) {
    nlohmann::json engines;
    for (int e = 0; e < kEngineCount; ++e) {
      const EngineReport& er = r.tiles[t].engines[size_t(e)];
      engines[std::string(engine_name(Engine(e)))] = {
          {"busy_cycles", er.busy_cycles}, {"instructions", er.instructions}, {"cost_cycles", er.cost_cycles}};
    }
    tiles.push_back({{"tile", t}, {"spm_high_water", r.tiles[t].spm_high_water}, {"engines", engines}});
  }
  return {{"total_cycles", r.total_cycles},
          {"seconds", r.seconds},
          {"instructions", r.instructions},
          {"ddr_read_bytes", r.ddr_read_bytes},
          {"ddr_write_bytes", r.ddr_write_bytes},
          {"noc_bytes", r.noc_bytes},
          {"noc_link_bytes", r.noc_link_bytes},
          {"hazard_count", r.hazard_count},
          {"hazards", r.hazards},
          {"tiles", tiles}};
}

}  // namespace tg::sim
