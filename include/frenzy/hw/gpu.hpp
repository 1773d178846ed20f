#pragma once
// GPU types (datasheet facts) and the built-in catalog, from ../shared/data/gpus.csv (vendor datasheets).
#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/core/suggest.hpp"
#include "frenzy/core/units.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// One GPU type. TFLOPS are dense peaks; 0 means "no native support" (e.g. bf16 on V100).
struct gpu_type {
    std::string name;          ///< catalog key, e.g. "a100-80g"
    std::string product;
    double memory_mib = 0;     ///< total memory as nvidia-smi reports it
    double bf16_tflops = 0;
    double fp16_tflops = 0;
    double fp32_tflops = 0;
    double fp8_tflops = 0;     ///< 0 = no fp8 tensor cores
    double mem_bw_gbps = 0;    ///< GB/s
    std::string link;          ///< intra-node path: nvlink2..5, pcie3..5, infinity-fabric
    double link_gbps = 0;      ///< total bidirectional GB/s per GPU over that path
    int gpus_per_node = 8;     ///< typical node size
    bool operator==(const gpu_type&) const = default;

    bytes memory() const { return bytes{memory_mib * MiB}; }
    bool nvlink() const { return link.rfind("nvlink", 0) == 0 || link == "infinity-fabric"; }
    /// Dense peak for the GEMMs of a precision, in FLOP/s; 0 when the GPU cannot run it.
    double peak_flops(precision p) const {
        switch (p) {
            case precision::fp32: return fp32_tflops * 1e12;
            case precision::fp16_mixed: return fp16_tflops * 1e12;
            case precision::bf16_mixed:
            case precision::bf16: return bf16_tflops * 1e12;
            case precision::fp8_mixed: return (fp8_tflops > 0 ? fp8_tflops : 0) * 1e12;
        }
        return 0;
    }
};

namespace detail {
// name, product, memory_mib, bf16, fp16, fp32, fp8, mem_bw, link, link_gbps, gpus_per_node.
// Values from ../shared/data/gpus.csv (vendor datasheets; "~" entries there are approximate).
inline const std::vector<gpu_type>& builtin_gpus() {
    static const std::vector<gpu_type> v{
        {"p100-16g", "Tesla P100-SXM2-16GB", 16280, 0, 21.2, 10.6, 0, 732, "nvlink1", 160, 8},
        {"v100-16g", "Tesla V100-SXM2-16GB", 16160, 0, 125, 15.7, 0, 900, "nvlink2", 300, 8},
        {"v100-32g", "Tesla V100-SXM2-32GB", 32510, 0, 125, 15.7, 0, 900, "nvlink2", 300, 8},
        {"t4", "Tesla T4", 15360, 0, 65, 8.1, 0, 320, "pcie3", 32, 4},
        {"rtx-2080ti", "GeForce RTX 2080 Ti", 11264, 0, 53.8, 13.4, 0, 616, "pcie3", 32, 8},
        {"quadro-rtx-6000", "Quadro RTX 6000", 24576, 0, 130.5, 16.3, 0, 672, "pcie3", 32, 8},
        {"titan-rtx", "TITAN RTX", 24576, 0, 130.5, 16.3, 0, 672, "pcie3", 32, 8},
        {"a10", "NVIDIA A10", 23028, 125, 125, 31.2, 0, 600, "pcie4", 64, 4},
        {"l4", "NVIDIA L4", 23034, 121, 121, 30.3, 0, 300, "pcie4", 64, 8},
        {"rtx-3090", "GeForce RTX 3090", 24576, 71, 71, 35.6, 0, 936, "pcie4", 64, 8},
        {"rtx-4090", "GeForce RTX 4090", 24564, 165.2, 165.2, 82.6, 0, 1008, "pcie4", 64, 8},
        {"l40s", "NVIDIA L40S", 46068, 362, 362, 91.6, 0, 864, "pcie4", 64, 8},
        {"a100-40g", "A100-SXM4-40GB", 40960, 312, 312, 19.5, 0, 1555, "nvlink3", 600, 8},
        {"a100-80g", "A100-SXM4-80GB", 81920, 312, 312, 19.5, 0, 2039, "nvlink3", 600, 8},
        {"a100-80g-pcie", "A100 80GB PCIe", 81920, 312, 312, 19.5, 0, 1935, "pcie4", 64, 8},
        {"h100-80g", "H100 80GB HBM3 (SXM5)", 81559, 989, 989, 67, 1979, 3350, "nvlink4", 900, 8},
        {"h100-pcie", "H100 PCIe", 81559, 756, 756, 51, 1513, 2000, "pcie5", 128, 8},
        {"h200", "H200 (SXM)", 143771, 989, 989, 67, 1979, 4800, "nvlink4", 900, 8},
        {"b200", "B200", 183359, 2250, 2250, 75, 4500, 8000, "nvlink5", 1800, 8},
        {"mi300x", "AMD Instinct MI300X", 196592, 1307, 1307, 163.4, 2615, 5300, "infinity-fabric", 896, 8},
    };
    return v;
}
}  // namespace detail

/// A set of GPU types: the built-in catalog, extended or overridden (by name) from a cluster spec.
class gpu_catalog {
public:
    gpu_catalog() : types_(detail::builtin_gpus()) {}
    explicit gpu_catalog(std::vector<gpu_type> types) : types_(std::move(types)) {}

    /// Adds a type, or replaces the one with the same name.
    void upsert(gpu_type t) {
        validate(t);
        for (auto& x : types_)
            if (x.name == t.name) { x = std::move(t); return; }
        types_.push_back(std::move(t));
    }
    const gpu_type* find(std::string_view name) const {
        for (const auto& x : types_)
            if (x.name == name) return &x;
        return nullptr;
    }
    /// The type called `name`; the error names `field` and lists the known types.
    const gpu_type& at(std::string_view name, std::string_view field = "gpu") const {
        if (auto* p = find(name)) return *p;
        std::vector<std::string> names;
        for (const auto& x : types_) names.push_back(x.name);
        throw config_error(std::string(field) + "=\"" + std::string(name) + "\" is not a known GPU type" +
                           detail::did_you_mean(name, names) + "; `frenzy gpus` lists them");
    }
    std::span<const gpu_type> types() const { return types_; }

    static void validate(const gpu_type& t) {
        if (t.name.empty()) throw config_error("gpu_types[].name must not be empty");
        const std::string f = "gpu_types[" + t.name + "].";
        if (!(t.memory_mib > 0)) throw config_error(f + "memory_mib must be positive");
        if (!(t.fp16_tflops > 0 || t.bf16_tflops > 0 || t.fp32_tflops > 0))
            throw config_error(f + "needs at least one of bf16_tflops, fp16_tflops, fp32_tflops > 0");
        if (t.bf16_tflops < 0 || t.fp16_tflops < 0 || t.fp32_tflops < 0 || t.fp8_tflops < 0)
            throw config_error(f + "TFLOPS must not be negative");
        if (!(t.mem_bw_gbps > 0)) throw config_error(f + "mem_bw_gbps must be positive");
        if (!(t.link_gbps > 0)) throw config_error(f + "link_gbps must be positive");
        if (t.gpus_per_node < 1) throw config_error(f + "gpus_per_node must be at least 1");
    }

private:
    std::vector<gpu_type> types_;
};

}  // namespace frenzy
