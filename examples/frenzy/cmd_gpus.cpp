// `frenzy gpus`: the GPU catalog (datasheet figures the planner uses).
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/io/result_json.hpp"

namespace {

void run_gpus(bool json, const std::string& extra) {
    const auto catalog = frenzy::load_gpu_types(extra);
    if (json) {
        auto out = nlohmann::ordered_json::array();
        for (const auto& t : catalog.types()) out.push_back(t);
        fmt::print("{}\n", out.dump(2));
        return;
    }
    fmt::print("{:<16} {:<28} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:<16} {:>5}\n", "name", "product", "mem GiB",
               "bf16 TF", "fp16 TF", "fp8 TF", "fp32 TF", "mem GB/s", "link (GB/s)", "/node");
    auto tf = [](double v) { return v > 0 ? fmt::format("{:.0f}", v) : std::string("-"); };
    for (const auto& t : catalog.types())
        fmt::print("{:<16} {:<28.28} {:>8.1f} {:>8} {:>8} {:>8} {:>8.1f} {:>9.0f} {:<16} {:>5}\n", t.name, t.product,
                   t.memory().value / (1024.0 * 1024 * 1024), tf(t.bf16_tflops), tf(t.fp16_tflops), tf(t.fp8_tflops),
                   t.fp32_tflops, t.mem_bw_GBps, fmt::format("{} ({:.0f})", t.link, t.link_GBps), t.gpus_per_node);
    fmt::print("\n{} types; dense peak TFLOP/s from vendor datasheets ('-' = no tensor cores for that precision). "
               "Use the names with --gpu, --gpus and in cluster files.\n",
               catalog.types().size());
}

}  // namespace

void frenzy_cli::add_gpus(CLI::App& app) {
    auto json = std::make_shared<bool>(false);
    auto extra = std::make_shared<std::string>();
    auto* c = app.add_subcommand("gpus", "List the GPU catalog: memory, peak TFLOP/s per precision, bandwidths, node size");
    c->add_option("--gpu-types", *extra, "JSON file with extra or overriding GPU types")->check(CLI::ExistingFile);
    c->add_flag("--json", *json, fmt::format("Print a JSON array (keys in {})", frenzy_cli::formats_doc));
    c->callback([json, extra] { run_gpus(*json, *extra); });
}
