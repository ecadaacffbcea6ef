// usage: predict DEVICE.json BENCH.json  -> per shape: predicted variant, its measured rate / best
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include "fatcl/matmul.hpp"
#include "fatcl/offline.hpp"
#include "fatcl/store.hpp"
using namespace fatcl;
int main(int argc, char** argv) {
  auto devs = read_device_descriptions(argv[1]);
  const DeviceCaps& caps = devs.at(0).caps;
  std::ifstream f(argv[2]); nlohmann::json d = nlohmann::json::parse(f);
  auto store = std::make_shared<Store>();
  double lg = 0, lga = 0; int n = 0, ok = 0, oka = 0;
  bool verbose = argc > 3;
  for (auto& s : d["sizes"]) {
    size_t m = s["m"], nn = s["n"], k = s["k"];
    std::map<std::string, double> rate;
    double best = 0;
    for (auto& r : s["results"]) {
      if (!(r["ok"].is_boolean() && r["ok"].get<bool>()) || (r["vendor"].is_boolean() && r["vendor"].get<bool>())) continue;
      std::string v = r["variant"]; double g = r["gflops"];
      if (v.rfind("clblast", 0) == 0 || v == "auto") continue;
      rate[v] = std::max(rate[v], g); best = std::max(best, g);
    }
    MatmulFamilyChoice c = choose_matmul_family(caps, *store, m, nn, k, MatmulKernel::Blocked);
    LoadOptions o; o.store = store; o.problem = {m, nn, k};
    OfflineChoice oc = predict_load(matmul_family(c.family), caps, o);
    double got = rate.count(oc.variant) ? rate[oc.variant] : 0;
    double r = got / best, ra = s["auto_vs_best"].is_number() ? s["auto_vs_best"].get<double>() : 0; if (ra <= 0) ra = 1e-3;
    std::string av = s["auto_variant"].is_string() ? s["auto_variant"].get<std::string>() : "";
    printf("%16s %s pred %.2f  recorded-auto %.2f %s %s\n", s["label"].get<std::string>().c_str(),
           (s["tuned"].is_boolean() && s["tuned"].get<bool>()) ? "T" : "u", r, ra, oc.variant == av ? "same" : "DIFF",
           verbose ? oc.variant.c_str() : "");
    if (verbose && oc.variant != av) printf("      recorded %s\n", av.c_str());
    if (verbose && r < 0.9) { std::string bv; for (auto& [v, g] : rate) if (g == best) bv = v; printf("      MISS best %s %.1f, pred %.1f (%s)\n", bv.c_str(), best, got, to_string(c.family)); }
    if (getenv("EXPLAIN") && s["label"].get<std::string>() == getenv("EXPLAIN")) printf("%s\n%s\n", c.to_string().c_str(), oc.explanation.tuning.c_str());
    if (got > 0) { lg += std::log(r); ++n; ok += r >= 0.9; }
    lga += std::log(ra); oka += ra >= 0.9;
  }
  printf("missing %d geomean pred %.3f (>=0.9: %d of %d)  recorded %.3f (%d)\n", int(d["sizes"].size()) - n, std::exp(lg / n), ok, n,
         std::exp(lga / d["sizes"].size()), oka);
}
