#include "compile_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "tilegraph/sim/engine.h"

namespace tg::cli {

namespace {

// A timeline of more instructions than this is cut (the page says so): a browser draws that many SVG
// rectangles smoothly, and a long program's later steps repeat its first ones.
constexpr size_t kMaxTimelineSpans = 20000;

template <typename Int>
std::string join(const std::vector<Int>& v, char sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s.push_back(sep);
    s.append(std::to_string(v[i]));
  }
  return s;
}

double ratio(uint64_t a, uint64_t b) { return b ? double(a) / double(b) : 0.0; }

std::optional<double> estimate_error(const compiler::GroupReport& g) {
  if (g.simulated_cycles == 0) return std::nullopt;
  return (double(g.estimated_cycles) - double(g.simulated_cycles)) / double(g.simulated_cycles);
}

// Engine busy cycles summed over tiles, and their share of the run's length times the tiles.
struct EngineUse {
  uint64_t busy = 0;
  double utilisation = 0;
};
std::vector<EngineUse> engine_use(const CompileRun& run) {
  std::vector<EngineUse> use(sim::kEngineCount);
  for (const sim::TileReport& tile : run.simulated.tiles) {
    for (int e = 0; e < sim::kEngineCount; ++e) use[size_t(e)].busy += tile.engines[size_t(e)].busy_cycles;
  }
  const double capacity = double(run.simulated.total_cycles) * double(std::max<size_t>(1, run.simulated.tiles.size()));
  for (EngineUse& u : use) u.utilisation = capacity > 0 ? double(u.busy) / capacity : 0.0;
  return use;
}

}  // namespace

double median_estimate_error(const compiler::CompileReport& report) {
  std::vector<double> errors;
  for (const compiler::GroupReport& g : report.groups) {
    if (auto e = estimate_error(g)) errors.push_back(std::fabs(*e));
  }
  if (errors.empty()) return 0.0;
  std::sort(errors.begin(), errors.end());
  const size_t n = errors.size();
  return n % 2 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
}

nlohmann::json report_json(const CompileRun& run) {
  using nlohmann::json;
  json groups = json::array();
  for (const compiler::GroupReport& g : run.compile.groups) {
    json buffers = json::array();
    for (const compiler::SpmBufferSpan& b : g.spm_buffers) {
      buffers.push_back({{"name", b.name},
                         {"offset", b.offset},
                         {"bytes", b.bytes},
                         {"first_cycle", b.first_cycle},
                         {"last_cycle", b.last_cycle}});
    }
    const std::optional<double> error = estimate_error(g);
    groups.push_back({{"id", g.group_id},
                      {"ops", g.ops},
                      {"template_of", g.template_of},
                      {"tiles", g.tiles},
                      {"sharding", g.sharding},
                      {"slice", g.slice},
                      {"steps", g.steps},
                      {"k_panel", g.k_panel},
                      {"noc_share", g.noc_share},
                      {"pipeline_cycles", g.pipeline_cycles},
                      {"spm_peak", g.spm_peak},
                      {"spm_lower_bound", g.spm_lower_bound},
                      {"spm_peak_over_bound", ratio(g.spm_peak, g.spm_lower_bound)},
                      {"spm_buffers", buffers},
                      {"estimated_cycles", g.estimated_cycles},
                      {"simulated_cycles", g.simulated_cycles},
                      {"estimate_error", error ? json(*error) : json(nullptr)}});
  }
  json engines = json::array();
  const std::vector<EngineUse> use = engine_use(run);
  for (int e = 0; e < sim::kEngineCount; ++e) {
    engines.push_back({{"engine", std::string(sim::engine_name(sim::Engine(e)))},
                       {"busy_cycles", use[size_t(e)].busy},
                       {"utilisation", use[size_t(e)].utilisation}});
  }
  // Instructions as [tile, engine, start, end, name index] with the names listed once: a decode
  // step issues tens of thousands of instructions of a few dozen kinds.
  std::map<std::string, size_t> name_index;
  json names = json::array();
  json spans = json::array();
  const size_t shown = std::min(run.timeline.size(), kMaxTimelineSpans);
  for (size_t i = 0; i < shown; ++i) {
    const sim::TimelineEntry& entry = run.timeline[i];
    auto [it, added] = name_index.emplace(entry.name, names.size());
    if (added) names.push_back(entry.name);
    spans.push_back({entry.tile, int(entry.engine), entry.start, entry.end, it->second});
  }
  json engine_names = json::array();
  for (int e = 0; e < sim::kEngineCount; ++e) engine_names.push_back(std::string(sim::engine_name(sim::Engine(e))));
  return {{"title", run.title},
          {"chip",
           {{"mesh_x", run.chip.mesh_x},
            {"mesh_y", run.chip.mesh_y},
            {"clock_mhz", run.chip.clock_mhz},
            {"spm_bytes", run.chip.spm_bytes}}},
          {"host_ops", run.host_ops},
          {"compile_seconds", run.compile.compile_seconds},
          {"jit_compiles", run.compile.jit_compiles},
          {"search",
           {{"groups_searched", run.compile.search.searched},
            {"groups_reusing_a_plan", run.compile.search.reused},
            {"from_an_earlier_run", run.compile.search.earlier},
            {"candidates", run.compile.search.candidates}}},
          {"simulated",
           {{"cycles", run.simulated.total_cycles},
            {"seconds", run.simulated.seconds},
            {"ddr_read_bytes", run.simulated.ddr_read_bytes},
            {"ddr_write_bytes", run.simulated.ddr_write_bytes},
            {"noc_bytes", run.simulated.noc_bytes},
            {"hazards", run.simulated.hazard_count}}},
          {"engines", engines},
          {"groups", groups},
          {"median_estimate_error", median_estimate_error(run.compile)},
          {"timeline",
           {{"engines", engine_names}, {"names", names}, {"spans", spans}, {"total_spans", run.timeline.size()}}}};
}

std::string report_text(const CompileRun& run) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%s\nchip: %dx%d tiles at %.1f MHz, %llu KiB SPM per tile\n", run.title.c_str(),
                run.chip.mesh_x, run.chip.mesh_y, run.chip.clock_mhz, (unsigned long long)(run.chip.spm_bytes >> 10));
  out += line;
  if (!run.host_ops.empty()) {
    out += "on the CPU (no chip program):";
    for (const std::string& op : run.host_ops) out += " " + op;
    out += "\n";
  }
  std::snprintf(line, sizeof line, "%5s %-28s %5s %-12s %-16s %6s %10s %10s %6s %12s %12s %7s\n", "group", "ops",
                "tiles", "sharding", "slice", "steps", "spm peak", "live bound", "ratio", "estimated", "simulated",
                "error");
  out += line;
  for (const compiler::GroupReport& g : run.compile.groups) {
    std::string ops = g.ops.size() > 28 ? g.ops.substr(0, 25) + "..." : g.ops;
    const std::optional<double> error = estimate_error(g);
    char error_text[32] = "-";
    if (error) std::snprintf(error_text, sizeof error_text, "%+.1f%%", 100 * *error);
    std::snprintf(line, sizeof line, "%5d %-28s %5d %-12s %-16s %6lld %10llu %10llu %6.3f %12llu %12llu %7s%s\n",
                  g.group_id, ops.c_str(), g.tiles, join(g.sharding, 'x').c_str(), join(g.slice, 'x').c_str(),
                  (long long)g.steps, (unsigned long long)g.spm_peak, (unsigned long long)g.spm_lower_bound,
                  ratio(g.spm_peak, g.spm_lower_bound), (unsigned long long)g.estimated_cycles,
                  (unsigned long long)g.simulated_cycles, error_text,
                  g.template_of >= 0 ? (" (plan of group " + std::to_string(g.template_of) + ")").c_str() : "");
    out += line;
    if (g.k_panel > 0) {
      std::snprintf(line, sizeof line, "%5s K in panels of %lld%s\n", "", (long long)g.k_panel,
                    g.noc_share ? ", shared over the NoC" : "");
      out += line;
    }
  }
  std::snprintf(line, sizeof line,
                "simulated: %llu cycles (%.6f s), DDR read %llu B, write %llu B, NoC %llu B; median |estimate "
                "error| %.1f%%\n",
                (unsigned long long)run.simulated.total_cycles, run.simulated.seconds,
                (unsigned long long)run.simulated.ddr_read_bytes, (unsigned long long)run.simulated.ddr_write_bytes,
                (unsigned long long)run.simulated.noc_bytes, 100 * median_estimate_error(run.compile));
  out += line;
  out += "engine utilisation:";
  const std::vector<EngineUse> use = engine_use(run);
  for (int e = 0; e < sim::kEngineCount; ++e) {
    std::snprintf(line, sizeof line, " %s %.1f%%", std::string(sim::engine_name(sim::Engine(e))).c_str(),
                  100 * use[size_t(e)].utilisation);
    out += line;
  }
  const compiler::GroupCostCounts& search = run.compile.search;
  std::snprintf(line, sizeof line,
                "\ncompile: %.2f s, %llu kernels built by the JIT; sharding search: %lld groups searched, %lld "
                "reusing a plan (%lld of an earlier chip run)\n",
                run.compile.compile_seconds, (unsigned long long)run.compile.jit_compiles, (long long)search.searched,
                (long long)search.reused, (long long)search.earlier);
  out += line;
  return out;
}

namespace {

// The page's style and script. The script reads the report from the JSON block, draws the
// tables and SVG charts, and marks <body data-rendered="1"> when done; an error anywhere is shown
// on the page (and marks data-error) instead of leaving it blank.
constexpr const char* kStyle = R"css(
body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; } td, th { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: right; }
th { background: #f4f4f4; } td.ops, th.ops { text-align: left; font-family: monospace; }
tr.selected { background: #fff6d5; } tr.group-row { cursor: pointer; }
.bad { color: #b00; font-weight: bold; } .good { color: #070; }
.note { color: #666; } svg text { font: 11px system-ui, sans-serif; }
#error { color: #b00; white-space: pre-wrap; }
)css";

constexpr const char* kScript = R"js(
'use strict';
window.addEventListener('error', (e) => {
  document.getElementById('error').textContent = 'Script error: ' + e.message;
  document.body.dataset.error = '1';
});
const R = JSON.parse(document.getElementById('report').textContent);
const NS = 'http://www.w3.org/2000/svg';
function el(tag, attrs, text) {
  const e = tag.startsWith('svg:') ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function bytes(n) {
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(2) + ' MiB';
  if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + ' KiB';
  return n + ' B';
}
function colour(i) { return 'hsl(' + ((i * 137) % 360) + ',55%,62%)'; }

function summary() {
  const s = R.simulated, c = R.chip;
  document.getElementById('title').textContent = R.title;
  document.getElementById('summary').textContent =
    c.mesh_x + 'x' + c.mesh_y + ' tiles at ' + c.clock_mhz + ' MHz, ' + bytes(c.spm_bytes) + ' SPM per tile. ' +
    'Simulated ' + s.cycles.toLocaleString() + ' cycles (' + (s.seconds * 1e3).toFixed(3) + ' ms); DDR read ' +
    bytes(s.ddr_read_bytes) + ', written ' + bytes(s.ddr_write_bytes) + '; compiled in ' +
    R.compile_seconds.toFixed(2) + ' s; median |estimate error| ' + (100 * R.median_estimate_error).toFixed(1) + '%.' +
    (R.host_ops.length ? ' On the CPU (no chip program): ' + R.host_ops.join(', ') + '.' : '');
}

function groupTable() {
  const t = document.getElementById('groups');
  const head = el('tr');
  for (const h of ['group', 'ops', 'tiles', 'sharding', 'slice', 'steps', 'SPM peak', 'live bound', 'peak/bound',
                   'estimated', 'simulated', 'error'])
    head.appendChild(el('th', h === 'ops' ? {class: 'ops'} : {}, h));
  t.appendChild(head);
  R.groups.forEach((g, i) => {
    const tr = el('tr', {class: 'group-row', 'data-index': i});
    const ratio = g.spm_peak_over_bound;
    const cells = [g.id, g.ops + (g.template_of >= 0 ? '  (plan of ' + g.template_of + ')' : ''), g.tiles,
                   g.sharding.join('x'), g.slice.join('x'), g.steps, bytes(g.spm_peak), bytes(g.spm_lower_bound),
                   ratio ? ratio.toFixed(3) : '-', g.estimated_cycles.toLocaleString(),
                   g.simulated_cycles.toLocaleString(),
                   g.estimate_error === null ? '-' : (100 * g.estimate_error).toFixed(1) + '%'];
    cells.forEach((v, k) => {
      const td = el('td', k === 1 ? {class: 'ops'} : {}, String(v));
      if (k === 8 && ratio) td.className = ratio > 1.05 ? 'bad' : 'good';
      if (k === 11 && g.estimate_error !== null) td.className = Math.abs(g.estimate_error) > 0.1 ? 'bad' : 'good';
      tr.appendChild(td);
    });
    tr.addEventListener('click', () => showSpm(i));
    t.appendChild(tr);
  });
}

// The SPM of one group: a rectangle per buffer over the pipeline cycles it is live in, at its
// offset; the black curve is the bytes live in each cycle, the dashed line its maximum (the lower
// bound of any allocation), the red one the allocation's peak.
function showSpm(index) {
  document.querySelectorAll('tr.group-row').forEach((r) => r.classList.toggle('selected', +r.dataset.index === index));
  const box = document.getElementById('spm');
  box.replaceChildren();
  const g = R.groups[index];
  if (!g) return;
  document.getElementById('spm-title').textContent = 'SPM occupancy of group ' + g.id + ' (' + g.ops + ')';
  if (!g.spm_buffers.length) { box.appendChild(el('p', {class: 'note'}, 'No SPM buffers recorded for this group.')); return; }
  const W = 900, H = 320, L = 70, B = 30;
  const cycles = Math.max(1, g.pipeline_cycles, ...g.spm_buffers.map((b) => b.last_cycle + 1));
  const top = Math.max(g.spm_peak, ...g.spm_buffers.map((b) => b.offset + b.bytes), 1);
  const x = (c) => L + (W - L - 10) * c / cycles, y = (o) => H - B - (H - B - 10) * o / top;
  const svg = el('svg:svg', {width: W, height: H, role: 'img'});
  g.spm_buffers.forEach((b, i) => {
    const r = el('svg:rect', {x: x(b.first_cycle), y: y(b.offset + b.bytes), width: Math.max(1, x(b.last_cycle + 1) - x(b.first_cycle)),
                              height: Math.max(1, y(b.offset) - y(b.offset + b.bytes)), fill: colour(i), stroke: '#333', 'stroke-width': 0.3});
    r.appendChild(el('svg:title', {}, b.name + ': ' + bytes(b.bytes) + ' at ' + b.offset + ', cycles ' + b.first_cycle + '-' + b.last_cycle));
    svg.appendChild(r);
  });
  // Live bytes per cycle: the allocation can do no better than this curve's highest point.
  const live = new Array(cycles).fill(0);
  for (const b of g.spm_buffers) for (let c = b.first_cycle; c <= b.last_cycle && c < cycles; ++c) live[c] += b.bytes;
  let path = '';
  live.forEach((v, c) => { path += (c ? ' L' : 'M') + x(c) + ' ' + y(v) + ' L' + x(c + 1) + ' ' + y(v); });
  svg.appendChild(el('svg:path', {d: path, fill: 'none', stroke: '#000', 'stroke-width': 1.5}));
  const labels = [[g.spm_peak, '', 'peak'], [g.spm_lower_bound, '4 3', 'live bound']];
  labels.forEach(([v, dash, label], i) => {
    svg.appendChild(el('svg:line', {x1: L, x2: W - 10, y1: y(v), y2: y(v), stroke: '#b00', 'stroke-dasharray': dash}));
    svg.appendChild(el('svg:text', {x: 2, y: y(v) + 4 + 11 * i}, label));
  });
  svg.appendChild(el('svg:text', {x: L, y: H - 8}, 'pipeline cycle 0'));
  svg.appendChild(el('svg:text', {x: W - 120, y: H - 8}, 'cycle ' + cycles));
  box.appendChild(svg);
}

function engines() {
  const t = document.getElementById('engines');
  for (const e of R.engines) {
    const tr = el('tr');
    tr.appendChild(el('td', {class: 'ops'}, e.engine));
    const bar = el('td');
    const svg = el('svg:svg', {width: 300, height: 14});
    svg.appendChild(el('svg:rect', {x: 0, y: 2, width: 300 * Math.min(1, e.utilisation), height: 10, fill: '#4a7'}));
    svg.appendChild(el('svg:rect', {x: 0, y: 2, width: 300, height: 10, fill: 'none', stroke: '#999'}));
    bar.appendChild(svg);
    tr.appendChild(bar);
    tr.appendChild(el('td', {}, (100 * e.utilisation).toFixed(1) + '%'));
    t.appendChild(tr);
  }
}

// One lane per engine of each tile that issued anything; a rectangle per instruction, coloured by
// engine (the tooltip names the instruction).
function timeline() {
  const box = document.getElementById('timeline');
  const spans = R.timeline.spans, names = R.timeline.names, engineNames = R.timeline.engines;
  if (!spans.length) { box.appendChild(el('p', {class: 'note'}, 'The run issued no instructions.')); return; }
  const lanes = [...new Set(spans.map((s) => s[0] * 16 + s[1]))].sort((a, b) => a - b);
  const laneOf = new Map(lanes.map((l, i) => [l, i]));
  const end = Math.max(...spans.map((s) => s[3]), 1);
  const W = 1100, lane = 12, L = 90;
  const svg = el('svg:svg', {width: W, height: lanes.length * lane + 30});
  lanes.forEach((l, i) => svg.appendChild(el('svg:text', {x: 2, y: i * lane + 10}, 'tile ' + (l >> 4) + ' ' + engineNames[l & 15])));
  for (const [tile, engine, start, stop, n] of spans) {
    const r = el('svg:rect', {x: L + (W - L - 10) * start / end, y: laneOf.get(tile * 16 + engine) * lane + 1,
                              width: Math.max(0.5, (W - L - 10) * (stop - start) / end), height: lane - 2, fill: colour(engine)});
    r.appendChild(el('svg:title', {}, names[n] + ': cycles ' + Math.round(start) + '-' + Math.round(stop)));
    svg.appendChild(r);
  }
  svg.appendChild(el('svg:text', {x: W - 140, y: lanes.length * lane + 20}, Math.round(end).toLocaleString() + ' cycles'));
  box.appendChild(svg);
  if (R.timeline.total_spans > spans.length)
    box.appendChild(el('p', {class: 'note'}, 'The first ' + spans.length + ' of ' + R.timeline.total_spans + ' instructions.'));
  const legend = el('p', {class: 'note'});
  engineNames.forEach((n, i) => { legend.appendChild(el('span', {style: 'color:' + colour(i)}, '\u25a0 ')); legend.appendChild(document.createTextNode(n + '  ')); });
  box.appendChild(legend);
}

summary();
groupTable();
engines();
timeline();
showSpm(0);
document.body.dataset.rendered = '1';
)js";

}  // namespace

std::string report_html(const CompileRun& run) {
  // "</" inside the JSON would end the <script> block early.
  std::string data = report_json(run).dump();
  for (size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 3)) data.replace(at, 2, "<\\/");
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tilegraph compile: ";
  std::string title;
  for (char c : run.title) {
    if (c == '<')
      title += "&lt;";
    else if (c == '&')
      title += "&amp;";
    else
      title += c;
  }
  html += title + "</title><style>" + kStyle + "</style></head>\n<body>\n";
  html += "<h1 id=\"title\"></h1><p id=\"summary\"></p><p id=\"error\"></p>\n";
  html += "<h2>Groups</h2><p class=\"note\">Click a group to see its SPM map.</p><table id=\"groups\"></table>\n";
  html += "<h2 id=\"spm-title\">SPM occupancy</h2><div id=\"spm\"></div>\n";
  html += "<h2>Engine utilisation</h2><table id=\"engines\"></table>\n";
  html += "<h2>Engine timeline</h2><div id=\"timeline\"></div>\n";
  html += "<script type=\"application/json\" id=\"report\">" + data + "</script>\n";
  html += std::string("<script>") + kScript + "</script>\n</body></html>\n";
  return html;
}

}  // namespace tg::cli
