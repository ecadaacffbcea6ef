// fatcl bench's reports: a table per size, one JSON document, an SVG chart.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "fatcl/bench.hpp"
#include "fatcl/detail/format.hpp"

namespace fatcl {
std::optional<ChoiceSummary> summarize_choice(const std::vector<double>& auto_vs_best) {
  if (auto_vs_best.empty()) return std::nullopt;
  ChoiceSummary c;
  double log_sum = 0;
  bool failed = false;
  for (const double ratio : auto_vs_best) {
    if (ratio == 0) failed = true;
    if (ratio > 0) log_sum += std::log(ratio);
    c.lowest = c.sizes ? std::min(c.lowest, ratio) : ratio;
    ++c.sizes;
  }
  c.geomean = failed ? 0 : std::exp(log_sum / double(c.sizes));
  return c;
}

namespace {

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A tier as the reports write it: "" for an external kernel.
const char* tier_text(const std::optional<Tier>& tier) { return tier ? to_string(*tier) : ""; }

// A precompiled tier (spirv, ptx) against source, variant by variant, where
// a run measured both tiers of a variant (bench --tier all, timed in turn).
struct TierComparison {
  std::size_t variants = 0;
  double geomean = 0, lowest = 0, highest = 0;
  double fastest = 0;  // fastest result of the tier / fastest source result
};

std::optional<TierComparison> compare_tiers(const BenchSize& s, Tier tier) {
  TierComparison t;
  double log_sum = 0, best_tier = 0, best_source = 0;
  for (const BenchResult& a : s.results) {
    if (a.tier != tier || !a.ok || !a.failure.empty()) continue;
    best_tier = std::max(best_tier, a.gflops);
    for (const BenchResult& b : s.results) {
      if (b.tier != Tier::Source || b.variant != a.variant || !b.ok || !b.failure.empty()) continue;
      const double ratio = a.gflops / b.gflops;
      log_sum += std::log(ratio);
      t.lowest = t.variants ? std::min(t.lowest, ratio) : ratio;
      t.highest = t.variants ? std::max(t.highest, ratio) : ratio;
      ++t.variants;
    }
  }
  for (const BenchResult& b : s.results) {
    if (b.tier == Tier::Source && b.ok && b.failure.empty())
      best_source = std::max(best_source, b.gflops);
  }
  if (t.variants == 0 || best_source == 0) return std::nullopt;
  t.geomean = std::exp(log_sum / double(t.variants));
  t.fastest = best_tier / best_source;
  return t;
}

// The precompiled tiers compared with source, as bench names them.
const std::vector<std::pair<Tier, std::string>>& compared_tiers() {
  static const std::vector<std::pair<Tier, std::string>> tiers{{Tier::SpirV, "SPIR-V"},
                                                               {Tier::Ptx, "PTX"}};
  return tiers;
}

// The automatic choice against the fastest fatcl result, over the sizes a
// tuning entry of their own size class decided (tuned) or the others.
std::optional<ChoiceSummary> summarize_choice(const std::vector<BenchSize>& sizes, bool tuned) {
  std::vector<double> ratios;
  for (const BenchSize& s : sizes) {
    const BenchResult* best = s.best_fatcl();
    if (s.tuned != tuned || !best || best->gflops <= 0) continue;
    // An automatic choice that did not run counts as 0.
    ratios.push_back(std::max(0.0, s.auto_gflops / best->gflops));
  }
  return fatcl::summarize_choice(ratios);
}

// "automatic / fastest over the tuned sizes (3): geometric mean 0.98, ..."
std::string choice_summary_text(const std::vector<BenchSize>& sizes) {
  std::string out;
  for (const bool tuned : {true, false}) {
    if (const std::optional<ChoiceSummary> c = summarize_choice(sizes, tuned)) {
      out += detail::format(
          "\nautomatic / fastest over the %s sizes (%zu): geometric mean %.2f, lowest %.2f",
          tuned ? "tuned" : "untuned", c->sizes, c->geomean, c->lowest);
    }
  }
  return out + "\n";
}

}  // namespace

std::string BenchReport::to_text() const {
  std::string out = "device: " + device + "\ndate: " + date + "\nvendor BLAS: " + vendor +
                    "\ntiming: median of the timed runs, host clock around a finished queue; "
                    "every result checked against a double-precision reference\n";
  for (const BenchSize& s : sizes) {
    out += "\nM x N x K = " + std::to_string(s.shape.m) + " x " + std::to_string(s.shape.n) +
           " x " + std::to_string(s.shape.k) + "\n";
    const BenchResult* naive = s.find("naive");
    const BenchResult* clblast = s.clblast();
    const BenchResult* vendor = s.vendor();
    std::vector<const BenchResult*> sorted;
    for (const BenchResult& r : s.results) sorted.push_back(&r);
    std::stable_sort(sorted.begin(), sorted.end(), [](const BenchResult* a, const BenchResult* b) {
      return a->gflops > b->gflops;
    });
    out += detail::format("  %-8s %-72s %-6s %10s %10s %8s %8s %8s  %s\n", "kernel", "variant",
                          "tier", "ms", "GFLOP/s", "/naive", "/CLBlast", "/vendor", "check");
    for (const BenchResult* r : sorted) {
      if (!r->failure.empty()) {
        out += "  " + r->kernel + " " + r->variant + ": did not run: " + r->failure + "\n";
        continue;
      }
      // The vendor's row names the library where a variant's name goes.
      out += detail::format(
          "  %-8s %-72s %-6s %10.3f %10.1f %8s %8s %8s  %s %.1e%s\n",
          r->vendor ? "vendor" : r->kernel.c_str(), (r->vendor ? r->kernel : r->variant).c_str(),
          tier_text(r->tier), r->ms, r->gflops,
          naive ? detail::format("%.2fx", r->gflops / naive->gflops).c_str() : "",
          clblast ? detail::format("%.2fx", r->gflops / clblast->gflops).c_str() : "",
          vendor ? detail::format("%.2fx", r->gflops / vendor->gflops).c_str() : "",
          r->ok ? "ok" : "WRONG", r->relative_error,
          r->variant == s.auto_variant && r->tier == s.auto_tier
              ? "  <- automatic choice"
              : (r->variant == s.heuristic_variant && r->tier == s.heuristic_tier
                     ? "  <- choice without tuning"
                     : ""));
      if (!r->note.empty()) out += "           (" + r->note + ")\n";
    }
    const BenchResult* best = s.best_fatcl();
    if (best) {
      out += "  best fatcl: " + best->variant + " " + detail::format("%.1f", best->gflops) +
             " GFLOP/s";
      if (clblast)
        out += ", " + detail::format("%.2f", best->gflops / clblast->gflops) + "x CLBlast";
      if (vendor) {
        out += ", " + detail::format("%.2f", best->gflops / vendor->gflops) + "x " +
               vendor->kernel.substr(0, vendor->kernel.find(' '));
      }
      out += std::string("; ") + (s.tuned ? "tuned" : "untuned") + " size: automatic choice " +
             s.auto_variant + " at " + detail::format("%.2f", s.auto_gflops / best->gflops) +
             "x the best, without tuning " + s.heuristic_variant + " at " +
             detail::format("%.2f", s.heuristic_gflops / best->gflops) + "x\n  " + s.auto_tuning +
             "\n";
    }
    if (s.online) out += s.online->to_text(best ? best->gflops : 0);
    for (const auto& [tier, name] : compared_tiers()) {
      if (const std::optional<TierComparison> t = compare_tiers(s, tier)) {
        out += "  " + name + " / source over " + std::to_string(t->variants) +
               " variants (each pair timed in turn): geometric mean " +
               detail::format("%.2f", t->geomean) + "x (" + detail::format("%.2f", t->lowest) +
               "x to " + detail::format("%.2f", t->highest) + "x); fastest " + name +
               " / fastest source " + detail::format("%.2f", t->fastest) + "x\n";
      }
    }
  }
  return out + choice_summary_text(sizes);
}

std::string BenchOnline::to_text(double best_gflops) const {
  std::string out = "  online, first use " + detail::format("%.0f", first_use_ms) + " ms, " +
                    std::to_string(call_ms.size()) + " calls" +
                    (all_ok ? " (every result right)" : " (A RESULT WAS WRONG)") + ": ";
  if (!learned) {
    out += "nothing learned (an entry measured on this device decided)";
  } else if (settled_at) {
    out += "chose after call " + std::to_string(settled_at);
  } else {
    out += detail::format("no choice made within %.0f s of calls", kOnlineSettleSeconds);
  }
  out += ", runs " + choice + " [" + tier_text(choice_tier) + "] " +
         detail::format("%.1f", choice_gflops) + " GFLOP/s";
  if (best_gflops > 0) out += " = " + detail::format("%.2f", choice_gflops / best_gflops) + "x the best";
  if (choice_call_ms() > 0) {
    out += "; slowest call " + detail::format("%.2f", slowest_vs_choice(true)) +
           "x the choice's, after the first " + detail::format("%.2f", slowest_vs_choice(false)) +
           "x";
  } else {
    out += "; no call of the " + std::to_string(call_ms.size()) + " ran the choice";
  }
  out += "\n";
  if (learned) out += "  " + report + "\n";
  return out;
}

std::string BenchOnline::to_json(double best_gflops) const {
  using nlohmann::json;
  return json{{"first_use_ms", first_use_ms},
              {"calls_ms", call_ms},
              {"all_ok", all_ok},
              {"learned", learned},
              {"settled_at", settled_at},
              {"choice", choice},
              {"choice_tier", tier_text(choice_tier)},
              {"choice_gflops", choice_gflops},
              {"choice_vs_best", best_gflops > 0 ? json(choice_gflops / best_gflops) : json()},
              {"slowest_vs_choice", slowest_vs_choice(true)},
              {"slowest_after_first_vs_choice", slowest_vs_choice(false)},
              {"report", report}}
      .dump();
}

double BenchOnline::choice_call_ms() const {
  std::vector<double> after;
  if (settled_at || !learned) {
    after.assign(call_ms.begin() + std::min(call_ms.size(), settled_at), call_ms.end());
  }
  if (after.empty()) return 0;  // no call ran the choice
  std::sort(after.begin(), after.end());
  return after[after.size() / 2];
}

double BenchOnline::slowest_vs_choice(bool with_first) const {
  const double choice = choice_call_ms();
  double slowest = 0;
  for (std::size_t i = with_first ? 0 : 1; i < call_ms.size(); ++i) {
    slowest = std::max(slowest, call_ms[i]);
  }
  return choice > 0 ? slowest / choice : 0;
}

std::string BenchReport::to_json() const {
  using nlohmann::json;
  json j = {{"device", device}, {"date", date}, {"vendor", vendor}, {"sizes", json::array()}};
  for (const BenchSize& s : sizes) {
    json size = {{"m", s.shape.m},
                 {"n", s.shape.n},
                 {"k", s.shape.k},
                 {"label", s.shape.label()},
                 {"results", json::array()},
                 {"auto_variant", s.auto_variant},
                 {"auto_tier", tier_text(s.auto_tier)},
                 {"auto_gflops", s.auto_gflops}};
    for (const BenchResult& r : s.results) {
      size["results"].push_back(
          {{"kernel", r.kernel},
           {"variant", r.variant},
           {"tier", tier_text(r.tier)},
           {"ms", r.ms},
           {"gflops", r.gflops},
           {"relative_error",
            std::isfinite(r.relative_error) ? json(r.relative_error) : json(nullptr)},
           {"ok", r.ok},
           {"rounds", r.rounds},
           {"note", r.note},
           {"failure", r.failure},
           {"vendor", r.vendor}});
    }
    const BenchResult* clblast = s.clblast();
    const BenchResult* vendor = s.vendor();
    const BenchResult* best = s.best_fatcl();
    size["best_fatcl_variant"] = best ? best->variant : "";
    size["best_fatcl_gflops"] = best ? best->gflops : 0.0;
    size["best_fatcl_vs_clblast"] =
        best && clblast ? json(best->gflops / clblast->gflops) : json(nullptr);
    size["best_fatcl_vs_vendor"] =
        best && vendor ? json(best->gflops / vendor->gflops) : json(nullptr);
    size["auto_vs_best"] = best ? json(s.auto_gflops / best->gflops) : json(nullptr);
    size["auto_tuning"] = s.auto_tuning;
    size["tuned"] = s.tuned;
    size["heuristic_variant"] = s.heuristic_variant;
    size["heuristic_tier"] = tier_text(s.heuristic_tier);
    size["heuristic_gflops"] = s.heuristic_gflops;
    size["heuristic_vs_best"] = best ? json(s.heuristic_gflops / best->gflops) : json(nullptr);
    if (s.online) size["online"] = json::parse(s.online->to_json(best ? best->gflops : 0));
    if (const BenchResult* naive = s.find("naive"); naive && best) {
      size["best_fatcl_vs_naive"] = best->gflops / naive->gflops;
    }
    for (const auto& [tier, name] : compared_tiers()) {
      if (const std::optional<TierComparison> t = compare_tiers(s, tier)) {
        size[std::string(to_string(tier)) + "_vs_source"] = {{"variants", t->variants},
                                                             {"geomean", t->geomean},
                                                             {"lowest", t->lowest},
                                                             {"highest", t->highest},
                                                             {"fastest_vs_fastest", t->fastest}};
      }
    }
    j["sizes"].push_back(size);
  }
  for (const bool tuned : {true, false}) {
    const std::optional<ChoiceSummary> c = summarize_choice(sizes, tuned);
    j[tuned ? "auto_vs_best_tuned" : "auto_vs_best_untuned"] =
        c ? json{{"sizes", c->sizes}, {"geomean", c->geomean}, {"lowest", c->lowest}}
          : json(nullptr);
  }
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

namespace {

// The chart's lines: name -> GFLOP/s per size (NaN where it did not run).
using Series = std::vector<std::pair<std::string, std::vector<double>>>;

Series chart_series(const std::vector<BenchSize>& sizes) {
  Series series;
  auto add = [&](const std::string& name, const std::function<double(const BenchSize&)>& value) {
    std::vector<double> v;
    for (const BenchSize& s : sizes) v.push_back(value(s));
    series.emplace_back(name, v);
  };
  const double none = std::numeric_limits<double>::quiet_NaN();
  auto gflops = [none](const BenchResult* r) { return r && r->ok ? r->gflops : none; };
  add("naive", [&](const BenchSize& s) { return gflops(s.find("naive")); });
  add("tiled (best TILE)", [&](const BenchSize& s) { return gflops(s.find("tiled")); });
  add("blocked (best variant)", [&](const BenchSize& s) { return gflops(s.find("blocked")); });
  add("fatcl automatic choice",
      [&](const BenchSize& s) { return s.auto_gflops > 0 ? s.auto_gflops : none; });
  add("automatic, without tuning",
      [&](const BenchSize& s) { return s.heuristic_gflops > 0 ? s.heuristic_gflops : none; });
  std::vector<std::string> externals;
  for (const BenchSize& s : sizes) {
    for (const BenchResult& r : s.results) {
      if (r.variant.empty() &&
          std::find(externals.begin(), externals.end(), r.kernel) == externals.end()) {
        externals.push_back(r.kernel);
      }
    }
  }
  for (const std::string& x : externals) {
    add(x, [&](const BenchSize& s) { return gflops(s.find(x)); });
  }
  return series;
}

// Where the chart draws: the plot area, and a value's and a size's place.
struct ChartFrame {
  double width = 960, height = 540, left = 80, right = 240, top = 60, bottom = 80;
  double highest = 1;     // the largest value drawn
  std::size_t sizes = 0;  // points along x
  double plot_width() const { return width - left - right; }
  double plot_height() const { return height - top - bottom; }
  double x(std::size_t i) const {
    return left + (sizes <= 1 ? plot_width() / 2 : plot_width() * double(i) / double(sizes - 1));
  }
  double y(double v) const { return top + plot_height() * (1 - v / (highest * 1.05)); }
};

// Title, horizontal grid lines at round values, the sizes along x.
std::string svg_axes(const ChartFrame& f, const std::vector<BenchSize>& sizes,
                     const std::string& device, const std::string& date) {
  using detail::format;
  std::string svg = format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
      f.width, f.height);
  svg +=
      format("<text x=\"%.0f\" y=\"24\" font-size=\"15\">SGEMM GFLOP/s by size</text>\n", f.left) +
      format("<text x=\"%.0f\" y=\"42\" fill=\"#555\">", f.left) +
      xml_escape(device.size() > 110 ? device.substr(0, 107) + "..." : device) + ", " + date +
      "</text>\n";
  // Round ticks: a step of 1, 2 or 5 times a power of ten, at most 6 of them.
  double step = std::pow(10.0, std::floor(std::log10(f.highest)));
  for (double m : {0.1, 0.2, 0.5, 1.0}) {
    if (f.highest * 1.05 / (step * m) <= 6) {
      step *= m;
      break;
    }
  }
  for (double v = 0; v <= f.highest * 1.05; v += step) {
    svg += format(
        "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n",
        f.left, f.left + f.plot_width(), f.y(v), f.y(v), f.left - 8, f.y(v) + 4, v);
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    svg += format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", f.x(i),
                  f.top + f.plot_height() + 20) +
           sizes[i].shape.label() + "</text>\n";
  }
  svg += format(
      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">size (N, or M x N x K)</text>\n"
      "<text transform=\"translate(20,%.1f) rotate(-90)\" text-anchor=\"middle\">GFLOP/s</text>\n",
      f.left + f.plot_width() / 2, f.height - 20, f.top + f.plot_height() / 2);
  return svg;
}

// One series: its points, the line through them, its legend entry.
std::string svg_line(const ChartFrame& f, std::size_t index, const std::string& name,
                     const std::vector<double>& values) {
  using detail::format;
  static const char* colors[] = {"#888888", "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e"};
  const char* color = colors[index % (sizeof colors / sizeof colors[0])];
  std::string svg, points;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) continue;
    points += format("%.1f,%.1f ", f.x(i), f.y(values[i]));
    svg += format("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", f.x(i), f.y(values[i]),
                  color);
  }
  // The automatic choice is dashed: it often lies on the best variant's line.
  const char* dash = name == "fatcl automatic choice" ? "\" stroke-dasharray=\"6,4" : "";
  svg +=
      format("<polyline fill=\"none\" stroke=\"%s%s\" stroke-width=\"2\" points=\"", color, dash) +
      points + "\"/>\n";
  const double ly = f.top + 20 + 22 * double(index);
  const double lx = f.left + f.plot_width();
  svg += format(
             "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
             "stroke-width=\"3\"/>\n<text x=\"%.1f\" y=\"%.1f\">",
             lx + 20, lx + 44, ly, ly, color, lx + 50, ly + 4) +
         xml_escape(name) + "</text>\n";
  return svg;
}

}  // namespace

std::string BenchReport::to_svg() const {
  const Series series = chart_series(sizes);
  ChartFrame frame;
  frame.sizes = sizes.size();
  for (const auto& [name, values] : series) {
    for (double v : values) {
      if (std::isfinite(v)) frame.highest = std::max(frame.highest, v);
    }
  }
  std::string svg = svg_axes(frame, sizes, device, date);
  for (std::size_t i = 0; i < series.size(); ++i) {
    svg += svg_line(frame, i, series[i].first, series[i].second);
  }
  return svg + "</svg>\n";
}

}  // namespace fatcl
