// The timing of everything issued: a discrete-event simulation over the dependency graph.
// Engines run their instructions in issue order; an instruction starts when its dependencies
// have finished, spends its latency on its engine, then moves its bytes. Bytes in flight at the
// same time share DDR and each NoC link by max-min fairness (progressive filling): every transfer
// gets the same rate unless its own engine limits it, and a link's spare capacity goes to the
// others. Fluid sharing has no tie-breaking, so the schedule depends only on the graph, never on
// the order in which tiles issued their programs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "chip_state.h"
#include "tilegraph/core/error.h"

namespace tg::sim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kHazardsDescribed = 8;

// `report` (of the instructions since the last settle) grown by what settled before them.
void add_settled(ChipReport& report, const ChipReport& settled) {
  report.instructions += settled.instructions;
  report.ddr_read_bytes += settled.ddr_read_bytes;
  report.ddr_write_bytes += settled.ddr_write_bytes;
  report.noc_bytes += settled.noc_bytes;
  report.noc_link_bytes += settled.noc_link_bytes;
  for (size_t t = 0; t < settled.tiles.size(); ++t) {
    for (size_t e = 0; e < kEngineCount; ++e) {
      EngineReport& to = report.tiles[t].engines[e];
      const EngineReport& from = settled.tiles[t].engines[e];
      to.busy_cycles += from.busy_cycles;
      to.instructions += from.instructions;
      to.cost_cycles += from.cost_cycles;
    }
  }
  report.hazard_count += settled.hazard_count;
  std::vector<std::string> hazards = settled.hazards;
  for (std::string& h : report.hazards) {
    if (hazards.size() < kHazardsDescribed) hazards.push_back(std::move(h));
  }
  report.hazards = std::move(hazards);
}

struct Transfer {
  int64_t node;
  double remaining;
  double rate = 0;
};

// Max-min fair rates for `transfers` over resources with the given capacities (resource 0 is DDR,
// the others NoC links); each transfer is also capped by its own engine.
void share_bandwidth(std::vector<Transfer>& transfers, const std::vector<Instruction>& nodes,
                     const std::vector<double>& capacity) {
  std::vector<double> spare = capacity;
  std::vector<int> users(capacity.size());
  std::vector<char> frozen(transfers.size(), 0);
  for (Transfer& t : transfers) t.rate = 0;
  auto resources_of = [&](const Transfer& t, auto&& fn) {
    const Work& w = nodes[size_t(t.node)].work;
    if (w.uses_ddr) fn(0);
    for (int link : w.links) fn(link);
  };
  for (size_t active = transfers.size(); active > 0;) {
    std::fill(users.begin(), users.end(), 0);
    for (size_t i = 0; i < transfers.size(); ++i) {
      if (!frozen[i]) resources_of(transfers[i], [&](int r) { ++users[size_t(r)]; });
    }
    double step = kInf;
    for (size_t r = 0; r < capacity.size(); ++r) {
      if (users[r]) step = std::min(step, spare[r] / users[r]);
    }
    for (size_t i = 0; i < transfers.size(); ++i) {
      if (!frozen[i]) step = std::min(step, nodes[size_t(transfers[i].node)].work.rate_cap - transfers[i].rate);
    }
    step = std::max(step, 0.0);
    for (size_t i = 0; i < transfers.size(); ++i) {
      if (frozen[i]) continue;
      transfers[i].rate += step;
      resources_of(transfers[i], [&](int r) { spare[size_t(r)] -= step; });
    }
    for (size_t i = 0; i < transfers.size(); ++i) {
      if (frozen[i]) continue;
      bool saturated = transfers[i].rate >= nodes[size_t(transfers[i].node)].work.rate_cap * (1 - 1e-12);
      resources_of(transfers[i], [&](int r) { saturated |= spare[size_t(r)] <= capacity[size_t(r)] * 1e-12; });
      if (saturated) {
        frozen[i] = 1;
        --active;
      }
    }
  }
}

}  // namespace

void Chip::State::schedule() {
  if (!dirty) return;
  const size_t n = nodes.size();
  start.assign(n, 0);
  end.assign(n, 0);
  std::vector<std::vector<int64_t>> successors(n);
  std::vector<int> waiting(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (int64_t d : nodes[i].deps) {
      successors[size_t(d)].push_back(int64_t(i));
      ++waiting[i];
    }
  }
  std::vector<double> capacity(static_cast<size_t>(1 + config.tile_count() * 4), config.noc.link_bytes_per_cycle);
  capacity[0] = config.ddr.bytes_per_cycle;

  std::vector<std::pair<double, int64_t>> latency_ends;  // (time, node) of instructions in their latency
  std::vector<Transfer> transfers;
  std::vector<int64_t> ready;
  for (size_t i = 0; i < n; ++i) {
    if (!waiting[i]) ready.push_back(int64_t(i));
  }
  double now = origin, ddr_moved = 0, noc_moved = 0;
  size_t finished = 0;
  counters.clear();
  auto finish = [&](int64_t node) {
    end[size_t(node)] = now;
    ++finished;
    for (int64_t s : successors[size_t(node)]) {
      if (--waiting[size_t(s)] == 0) ready.push_back(s);
    }
  };
  while (finished < n) {
    // Start everything that became ready now; syncs and zero-latency instructions cascade.
    bool transfers_changed = false;
    while (!ready.empty()) {
      const int64_t node = ready.back();
      ready.pop_back();
      start[size_t(node)] = now;
      const Instruction& in = nodes[size_t(node)];
      if (in.sync) {
        finish(node);
      } else if (in.work.latency > 0) {
        latency_ends.emplace_back(now + double(in.work.latency), node);
      } else if (in.work.bytes > 0) {
        transfers.push_back({node, in.work.bytes});
        transfers_changed = true;
      } else {
        finish(node);
      }
    }
    if (finished == n) break;
    if (transfers_changed) {
      share_bandwidth(transfers, nodes, capacity);
      counters.push_back({now, ddr_moved, noc_moved});
    }
    double next = kInf;
    for (const auto& [t, node] : latency_ends) next = std::min(next, t);
    for (const Transfer& t : transfers) {
      if (t.rate > 0) next = std::min(next, now + t.remaining / t.rate);
    }
    if (next == kInf) throw Error("schedule: no instruction can make progress (a wait on an event that never happens)");
    const double dt = next - now;
    now = next;
    bool changed = false;
    for (size_t i = 0; i < transfers.size();) {
      Transfer& t = transfers[i];
      const double moved = std::min(t.remaining, t.rate * dt);
      const Work& w = nodes[size_t(t.node)].work;
      if (w.uses_ddr) ddr_moved += moved;
      if (!w.links.empty()) noc_moved += moved;
      t.remaining -= moved;
      if (t.remaining <= w.bytes * 1e-12 || (t.rate > 0 && t.remaining / t.rate <= 1e-9)) {
        const int64_t node = t.node;
        transfers[i] = transfers.back();
        transfers.pop_back();
        finish(node);
        changed = true;
      } else {
        ++i;
      }
    }
    for (size_t i = 0; i < latency_ends.size();) {
      if (latency_ends[i].first <= now) {
        const int64_t node = latency_ends[i].second;
        latency_ends[i] = latency_ends.back();
        latency_ends.pop_back();
        const Instruction& in = nodes[size_t(node)];
        if (in.work.bytes > 0) {
          transfers.push_back({node, in.work.bytes});
          changed = true;
        } else {
          finish(node);
        }
      } else {
        ++i;
      }
    }
    if (changed) {
      share_bandwidth(transfers, nodes, capacity);
      counters.push_back({now, ddr_moved, noc_moved});
    }
  }
  counters.push_back({now, ddr_moved, noc_moved});

  // The report, timeline and op spans.
  timeline.clear();
  op_spans.clear();
  for (const auto& [tile, name] : op_names) op_spans.push_back({tile, name, kInf, 0, 0});
  for (size_t i = 0; i < n; ++i) {
    const Instruction& in = nodes[i];
    if (in.sync) continue;
    timeline.push_back({in.tile, in.engine, in.name, start[i], end[i], in.cost,
                        in.work.ddr_read_bytes + in.work.ddr_write_bytes, in.work.noc_bytes});
    if (in.op >= 0) {
      OpSpan& op = op_spans[size_t(in.op)];
      op.start = std::min(op.start, start[i]);
      op.end = std::max(op.end, end[i]);
      op.cost_cycles += in.cost;
    }
  }
  std::erase_if(op_spans, [](const OpSpan& op) { return op.start == kInf; });
  report = window_report(0, int64_t(n), true);
  add_settled(report, settled_report);
  dirty = false;
}

ChipReport Chip::State::window_report(int64_t first, int64_t last, bool from_start) const {
  ChipReport out;
  out.tiles.resize(static_cast<size_t>(config.tile_count()));
  double begin = from_start ? 0 : kInf, makespan = from_start ? origin : 0;
  for (int64_t i = first; i < last; ++i) {
    const Instruction& in = nodes[size_t(i)];
    makespan = std::max(makespan, end[size_t(i)]);
    if (in.sync) continue;
    begin = std::min(begin, start[size_t(i)]);
    EngineReport& er = out.tiles[size_t(in.tile)].engines[size_t(in.engine)];
    er.busy_cycles += uint64_t(std::llround(end[size_t(i)] - start[size_t(i)]));
    er.instructions += 1;
    er.cost_cycles += in.cost;
    out.ddr_read_bytes += in.work.ddr_read_bytes;
    out.ddr_write_bytes += in.work.ddr_write_bytes;
    out.noc_bytes += in.work.noc_bytes;
    out.noc_link_bytes += in.work.noc_bytes * in.work.links.size();
    ++out.instructions;
  }
  check_hazards(out, first, last);
  if (begin < makespan) out.total_cycles = uint64_t(std::ceil(makespan - begin - 1e-9));
  out.seconds = double(out.total_cycles) / (config.clock_mhz * 1e6);
  for (size_t t = 0; t < out.tiles.size(); ++t) out.tiles[t].spm_high_water = spms[t].high_water();
  return out;
}

// Orderings of SPM accesses nothing in the program enforces. Vector clocks over the dependency
// graph: clock[i][slot] is the number of instructions of engine `slot` (tile x engine) known to
// have finished before node i starts, so `earlier` happens before `later` exactly when later's
// clock covers earlier. This finds a missing wait even where the schedule happens to run the two
// in the right order.
void Chip::State::check_hazards(ChipReport& out, int64_t first, int64_t last) const {
  const size_t n = nodes.size(), slots = size_t(config.tile_count()) * kEngineCount;
  std::vector<int32_t> clock(n * slots, 0), seq(n, 0), counts(slots, 0);
  auto slot = [&](const Instruction& in) { return size_t(in.tile) * kEngineCount + size_t(in.engine); };
  for (size_t i = 0; i < n; ++i) {
    int32_t* c = clock.data() + i * slots;
    for (int64_t d : nodes[i].deps) {
      const int32_t* cd = clock.data() + size_t(d) * slots;
      for (size_t s = 0; s < slots; ++s) c[s] = std::max(c[s], cd[s]);
    }
    if (!nodes[i].sync) c[slot(nodes[i])] = seq[i] = ++counts[slot(nodes[i])];
  }
  static constexpr const char* kKinds[] = {"read-after-write", "write-after-read", "write-after-write"};
  for (const Ordering& o : orderings) {
    if (o.later < first || o.later >= last) continue;
    const Instruction& e = nodes[size_t(o.earlier)];
    const Instruction& l = nodes[size_t(o.later)];
    if (clock[size_t(o.later) * slots + slot(e)] >= seq[size_t(o.earlier)]) continue;
    ++out.hazard_count;
    if (out.hazards.size() >= kHazardsDescribed) continue;
    char range[64];
    std::snprintf(range, sizeof range, "[0x%llx, 0x%llx)", static_cast<unsigned long long>(o.begin),
                  static_cast<unsigned long long>(o.end));
    std::string text = std::string(kKinds[o.kind]) + " hazard on SPM " + range + " of tile " + std::to_string(o.tile) +
                       ": " + l.name + " (tile " + std::to_string(l.tile) + ", " + std::string(engine_name(l.engine)) +
                       ") does not wait for " + e.name + " (tile " + std::to_string(e.tile) + ", " +
                       std::string(engine_name(e.engine)) + "), issued before it";
    if (start[size_t(o.later)] < end[size_t(o.earlier)] - 1e-6) {
      text += "; on this schedule it starts at cycle " + std::to_string(uint64_t(start[size_t(o.later)])) +
              ", before that ends at cycle " + std::to_string(uint64_t(end[size_t(o.earlier)]));
    }
    out.hazards.push_back(std::move(text));
  }
}

void Chip::State::settle() {
  for (size_t t = 0; t < open_op.size(); ++t) {
    if (open_op[t] >= 0) {
      throw Error("settle: op '" + op_names[size_t(open_op[t])].second + "' is still open on tile " +
                  std::to_string(t));
    }
  }
  schedule();
  settled_report = report;
  settled += int64_t(nodes.size());
  origin = std::max(origin, std::ceil(static_cast<double>(report.total_cycles)));
  nodes.clear();
  orderings.clear();
  op_names.clear();
  start.clear();
  end.clear();
  timeline.clear();
  op_spans.clear();
  counters.clear();
  for (auto& engines : last) engines.fill(-1);
  for (auto& engines : pending) {
    for (auto& waits : engines) waits.clear();
  }
  for (auto& segments : spm_users) segments.clear();
  dirty = true;
}

}  // namespace tg::sim
