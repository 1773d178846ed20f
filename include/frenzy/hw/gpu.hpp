#pragma once
// GPU types (datasheet facts) and the built-in catalog, from data/gpus.csv (vendor datasheets).
#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/core/suggest.hpp"
#include "frenzy/core/units.hpp"
#include "frenzy/core/precision.hpp"

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
    double mem_bw_GBps = 0;    ///< GB/s
    std::string link;          ///< intra-node path: nvlink2..5, pcie3..5, infinity-fabric
    double link_GBps = 0;      ///< total bidirectional GB/s per GPU over that path
    int gpus_per_node = 8;     ///< typical node size (GB200/GB300: the 72-GPU NVLink domain of an NVL72 rack)
    double fp4_tflops = 0;     ///< 0 = no fp4 tensor cores (Blackwell has them)
    std::string chip;          ///< silicon family (e.g. "gh100"): types of one chip share calibrated efficiencies
    double tdp_w = 0;          ///< board power at the datasheet peaks, W (0 = not known)
    double power_limit_w = 0;  ///< a fleet's power cap, W (nvidia-smi -pl, amd-smi); 0 = none (runs at tdp_w)
    bool operator==(const gpu_type&) const = default;

    /// Clock (and so tensor and vector peak) under the power cap, relative to the datasheet's: dynamic CMOS power
    /// P = a C V^2 f with the supply voltage scaled with the clock along the DVFS curve, so P ~ f^3 and
    /// f / f0 = (cap / tdp)^(1/3) (Weste & Harris, CMOS VLSI Design, 4th ed., ch. 5 "Power"). An assumption: it
    /// ignores static power (so it is the mildest slowdown a cap can cause) and leaves memory bandwidth alone (HBM
    /// runs on its own clock). 1 without a cap or a TDP.
    double clock_scale() const {
        if (!(power_limit_w > 0 && tdp_w > 0 && power_limit_w < tdp_w)) return 1.0;
        return std::cbrt(power_limit_w / tdp_w);
    }

    bytes memory() const { return bytes{memory_mib * MiB}; }
    bool nvlink() const { return link.rfind("nvlink", 0) == 0 || link == "infinity-fabric"; }
    /// Dense peak for the GEMMs of a precision, in FLOP/s; 0 when the GPU cannot run it.
    double peak_flops(precision p) const { return datasheet_peak_flops(p) * clock_scale(); }
    /// The datasheet's dense peak of a precision, FLOP/s, without a power cap.
    double datasheet_peak_flops(precision p) const {
        switch (p) {
            case precision::fp32: return fp32_tflops * 1e12;
            case precision::fp16_mixed: return fp16_tflops * 1e12;
            case precision::bf16_mixed:
            case precision::bf16: return bf16_tflops * 1e12;
            case precision::fp8_mixed: return (fp8_tflops > 0 ? fp8_tflops : 0) * 1e12;
            case precision::fp4_mixed: return (fp4_tflops > 0 ? fp4_tflops : 0) * 1e12;
        }
        return 0;
    }
    /// Dense peak of what a precision runs outside its GEMMs (attention core, element-wise work): bf16 for the
    /// fp8/fp4 recipes (Transformer Engine keeps DotProductAttention in bf16 unless fp8_dpa is set,
    /// transformer_engine/common/recipe/__init__.py), else the GEMM peak; fp16 where the type has no bf16.
    double non_gemm_peak_flops(precision p) const {
        if (p != precision::fp8_mixed && p != precision::fp4_mixed) return peak_flops(p);
        return (bf16_tflops > 0 ? bf16_tflops : fp16_tflops) * 1e12 * clock_scale();
    }
    /// Whether a precision runs its GEMMs in a low-precision format with per-tensor scaling (fp8, fp4).
    static bool scaled_gemms(precision p) { return scaled_gemm_precision(p); }
    /// CUDA compute capability x 10 of the type's chip (hw::compute_capability), 0 when not a known CUDA chip.
    int compute_capability() const;
    /// Whether flash-style attention kernels run on the type (FlashAttention 2/3, cuDNN fused attention; on AMD
    /// Instinct the CK flash attention of ROCm): CUDA compute capability 8.0 and later. Transformer Engine disables
    /// both below it (transformer_engine/pytorch/attention/dot_product_attention/utils.py get_attention_backend,
    /// "Filter: Compute capability"), as PyTorch SDPA does its flash kernel (aten/src/ATen/native/transformers/
    /// cuda/sdp_utils.cpp check_flash_attention_hardware_support). A type of no known chip: one with bf16 tensor
    /// cores (every such NVIDIA part is sm80+).
    bool flash_attention() const;
    /// Whether the type is a Grace-coupled superchip module (GH200, GB200, GB300): its host is a Grace CPU over
    /// NVLink-C2C.
    bool grace_host() const { return name.rfind("gb2", 0) == 0 || name.rfind("gb3", 0) == 0 || name.rfind("gh2", 0) == 0; }
    /// Host <-> device bandwidth per direction, GB/s (datasheets): NVLink-C2C to the Grace CPU (900 GB/s both ways);
    /// else PCIe x16: a PCIe card's own link (pcie3/4/5), an SXM/OAM module its chip's generation (sm70 and older
    /// gen3, sm80 gen4, sm90 and later, CDNA3: gen5; a type of no known chip: gen4 with bf16, else gen3). x16 per
    /// direction: 15.75, 31.5, 63 GB/s (8, 16, 32 GT/s x 16 lanes x 128/130 / 8).
    double host_link_GBps() const;
};

/// CUDA compute capability x 10 of a chip family (NVIDIA's CUDA GPUs table, developer.nvidia.com/cuda-gpus):
/// 0 for chips that are not CUDA GPUs (AMD CDNA) or not listed.
inline int compute_capability(std::string_view chip) {
    struct row { std::string_view chip; int cc; };
    static constexpr row table[] = {{"gp100", 60}, {"gv100", 70}, {"tu102", 75}, {"tu104", 75}, {"ga100", 80},
                                    {"ga102", 86}, {"ad102", 89}, {"ad104", 89}, {"gh100", 90}, {"gb100", 100},
                                    {"gb110", 103}};
    for (const auto& r : table)
        if (r.chip == chip) return r.cc;
    return 0;
}

inline int gpu_type::compute_capability() const { return frenzy::compute_capability(chip); }
inline double gpu_type::host_link_GBps() const {
    if (grace_host()) return 450;
    int gen = link == "pcie3" ? 3 : link == "pcie4" ? 4 : link == "pcie5" ? 5 : 0;
    if (gen == 0) {
        const int cc = compute_capability();
        if (cc >= 90 || chip.rfind("cdna", 0) == 0) gen = 5;
        else if (cc >= 80 || (cc == 0 && bf16_tflops > 0)) gen = 4;
        else gen = 3;
    }
    return gen == 3 ? 15.75 : gen == 4 ? 31.5 : 63.0;
}
inline bool gpu_type::flash_attention() const {
    if (const int cc = compute_capability(); cc > 0) return cc >= 80;
    if (chip.rfind("cdna", 0) == 0) return true;
    return bf16_tflops > 0;
}

namespace detail {
// name, product, memory_mib, bf16, fp16, fp32, fp8, mem_bw (GB/s), link, link_GBps (bidirectional per GPU),
// gpus_per_node, fp4, chip, TDP (W: the datasheets' maximum board power, SXM/OAM modules' configurable maximum;
// 0 = not in the sources read), power limit (0: none). Dense peaks (no 2:4 sparsity). Rows up to b200 and mi300x follow data/gpus.csv
// (vendor datasheets; "~" entries there are approximate); the source of every other figure is given per row.
inline const std::vector<gpu_type>& builtin_gpus() {
    static const std::vector<gpu_type> v{
        {"p100-16g", "Tesla P100-SXM2-16GB", 16280, 0, 21.2, 10.6, 0, 732, "nvlink1", 160, 8, 0, "gp100", 300, 0},
        {"v100-16g", "Tesla V100-SXM2-16GB", 16160, 0, 125, 15.7, 0, 900, "nvlink2", 300, 8, 0, "gv100", 300, 0},
        {"v100-32g", "Tesla V100-SXM2-32GB", 32510, 0, 125, 15.7, 0, 900, "nvlink2", 300, 8, 0, "gv100", 300, 0},
        {"t4", "Tesla T4", 15360, 0, 65, 8.1, 0, 320, "pcie3", 32, 4, 0, "tu104", 70, 0},
        {"rtx-2080ti", "GeForce RTX 2080 Ti", 11264, 0, 53.8, 13.4, 0, 616, "pcie3", 32, 8, 0, "tu102", 250, 0},
        {"quadro-rtx-6000", "Quadro RTX 6000", 24576, 0, 130.5, 16.3, 0, 672, "pcie3", 32, 8, 0, "tu102", 0, 0},
        {"titan-rtx", "TITAN RTX", 24576, 0, 130.5, 16.3, 0, 672, "pcie3", 32, 8, 0, "tu102", 280, 0},
        {"a10", "NVIDIA A10", 23028, 125, 125, 31.2, 0, 600, "pcie4", 64, 4, 0, "ga102", 150, 0},
        // L4 datasheet: fp8 485.5 TFLOPS with sparsity -> 242.8 dense
        {"l4", "NVIDIA L4", 23034, 121, 121, 30.3, 242.8, 300, "pcie4", 64, 8, 0, "ad104", 72, 0},
        {"rtx-3090", "GeForce RTX 3090", 24576, 71, 71, 35.6, 0, 936, "pcie4", 64, 8, 0, "ga102", 350, 0},
        // RTX 4090 fp8 (NVIDIA Ada GPU Architecture whitepaper v2.1, Appendix A): 330.3 TFLOPS dense with FP32
        // accumulate (660.6 with FP16 accumulate), what FP8 training GEMMs accumulate in, as bf16's 165.2 is
        {"rtx-4090", "GeForce RTX 4090", 24564, 165.2, 165.2, 82.6, 330.3, 1008, "pcie4", 64, 8, 0, "ad102", 450, 0},
        // L40S datasheet (NVIDIA L40S product brief, 2023): 48 GB GDDR6, 864 GB/s, bf16 362.05 / fp8 733 dense
        // (724 / 1466 with sparsity), fp32 91.6, PCIe Gen4 x16 (64 GB/s bidirectional), no NVLink
        {"l40s", "NVIDIA L40S", 46068, 362, 362, 91.6, 733, 864, "pcie4", 64, 8, 0, "ad102", 350, 0},
        {"a100-40g", "A100-SXM4-40GB", 40960, 312, 312, 19.5, 0, 1555, "nvlink3", 600, 8, 0, "ga100", 400, 0},
        {"a100-80g", "A100-SXM4-80GB", 81920, 312, 312, 19.5, 0, 2039, "nvlink3", 600, 8, 0, "ga100", 400, 0},
        {"a100-80g-pcie", "A100 80GB PCIe", 81920, 312, 312, 19.5, 0, 1935, "pcie4", 64, 8, 0, "ga100", 300, 0},
        {"h100-80g", "H100 80GB HBM3 (SXM5)", 81559, 989, 989, 67, 1979, 3350, "nvlink4", 900, 8, 0, "gh100", 700, 0},
        {"h100-pcie", "H100 PCIe", 81559, 756, 756, 51, 1513, 2000, "pcie5", 128, 8, 0, "gh100", 350, 0},
        // H200 datasheet (NVIDIA H200 Tensor Core GPU, 2024): SXM 141 GB HBM3e, 4.8 TB/s, bf16 989 / fp8 1979
        // dense (1979 / 3958 sparse), fp32 67, NVLink 900 GB/s
        {"h200", "H200 (SXM)", 143771, 989, 989, 67, 1979, 4800, "nvlink4", 900, 8, 0, "gh100", 700, 0},
        // same datasheet, H200 NVL (PCIe card): bf16 835 / fp8 1671 dense (1671 / 3341 sparse), fp32 60, 4.8 TB/s;
        // its NVLink bridge joins only 2 or 4 cards, so the node-wide path is PCIe Gen5 (128 GB/s bidirectional)
        {"h200-nvl", "H200 NVL", 143771, 835, 835, 60, 1671, 4800, "pcie5", 128, 8, 0, "gh100", 600, 0},
        // H20 (export Hopper, NVIDIA HGX H20 spec as published by OEMs, 2024): 96 GB HBM3, 4.0 TB/s, bf16 148 /
        // fp8 296 dense, fp32 44, NVLink 900 GB/s
        {"h20", "H20", 97871, 148, 148, 44, 296, 4000, "nvlink4", 900, 8, 0, "gh100", 400, 0},
        // B200 (DGX B200 datasheet: 72 PF fp8 / 144 PF fp4 sparse per 8 GPUs -> 4.5 / 9 PF dense per GPU; bf16
        // 2.25 PF dense; 8 TB/s; NVLink 5 1.8 TB/s); memory as exposed in DGX B200 (gpus.csv)
        {"b200", "B200", 183359, 2250, 2250, 75, 4500, 8000, "nvlink5", 1800, 8, 9000, "gb100", 1000, 0},
        // GB200 NVL72 datasheet (per rack of 72 GPUs: fp4 1440 PF, fp8 720 PF, bf16 360 PF with sparsity; fp32
        // 5760 TF; 13.4 TB HBM3e at 576 TB/s; NVLink 5 1.8 TB/s per GPU in one 72-GPU domain) -> per GPU dense:
        // fp4 10 PF, fp8 5 PF, bf16 2.5 PF, fp32 80 TF, 186 GB (177,383 MiB), 8 TB/s
        {"gb200", "GB200 (NVL72)", 177383, 2500, 2500, 80, 5000, 8000, "nvlink5", 1800, 72, 10000, "gb100", 1200, 0},
        // GB300 NVL72 datasheet (Blackwell Ultra, per rack: fp4 1080 PF dense, fp8 720 PF and bf16 360 PF with
        // sparsity, fp32 6 PF; 20.7 TB HBM3e at 576 TB/s; NVLink 5 1.8 TB/s) -> per GPU dense: fp4 15 PF,
        // fp8 5 PF, bf16 2.5 PF, fp32 83 TF, 288 GB (274,658 MiB), 8 TB/s
        {"gb300", "GB300 (NVL72)", 274658, 2500, 2500, 83, 5000, 8000, "nvlink5", 1800, 72, 15000, "gb110", 1400, 0},
        // HGX B300 (Blackwell Ultra, NVIDIA DGX B300 datasheet: per 8 GPUs 144 PF fp4 sparse / 108 PF dense, 72 PF fp8
        // and 36 PF bf16 with sparsity, 2.3 TB HBM3e) -> per GPU dense: fp4 13.5 PF, fp8 4.5 PF, bf16 2.25 PF,
        // fp32 75 TF, 288 GB, 8 TB/s, NVLink 5 1.8 TB/s; its board power is not in the sources read (0)
        {"b300", "B300 (HGX)", 274658, 2250, 2250, 75, 4500, 8000, "nvlink5", 1800, 8, 13500, "gb110", 0, 0},
        {"mi300x", "AMD Instinct MI300X", 196592, 1307, 1307, 163.4, 2615, 5300, "infinity-fabric", 896, 8, 0, "cdna3", 750, 0},
        // AMD Instinct MI325X datasheet (2024): 256 GB HBM3E, 6 TB/s, bf16 1307.4 / fp8 2614.9 dense, fp32 163.4,
        // Infinity Fabric 896 GB/s (7 links x 128 GB/s)
        {"mi325x", "AMD Instinct MI325X", 262144, 1307.4, 1307.4, 163.4, 2614.9, 6000, "infinity-fabric", 896, 8, 0, "cdna3", 1000, 0},
        // AMD Instinct MI355X (CDNA 4; AMD datasheet 2025 and ISSCC 2026: 256 CUs at 2.4 GHz, 8,192 fp8 FLOP per CU
        // and clock): dense bf16 2,516.58 / fp8 5,033.16 / MXFP4 10,066.33 TFLOPS, fp32 157.3, 288 GB HBM3E at 8 TB/s,
        // 7 Infinity Fabric links of 153.6 GB/s (1,075.2), 1,400 W total board power (MI350X: 1,000 W, 2.2 GHz)
        {"mi355x", "AMD Instinct MI355X", 294912, 2516.58, 2516.58, 157.3, 5033.16, 8000, "infinity-fabric", 1075.2, 8,
         10066.33, "cdna4", 1400, 0},
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
                           frenzy::did_you_mean(name, names) + "; `frenzy gpus` lists them");
    }
    std::span<const gpu_type> types() const { return types_; }

    static void validate(const gpu_type& t) {
        if (t.name.empty()) throw config_error("gpu_types[].name must not be empty");
        const std::string f = "gpu_types[" + t.name + "].";
        if (!(t.memory_mib > 0)) throw config_error(f + "memory_mib must be positive");
        if (!(t.fp16_tflops > 0 || t.bf16_tflops > 0 || t.fp32_tflops > 0))
            throw config_error(f + "needs at least one of bf16_tflops, fp16_tflops, fp32_tflops > 0");
        if (t.bf16_tflops < 0 || t.fp16_tflops < 0 || t.fp32_tflops < 0 || t.fp8_tflops < 0 || t.fp4_tflops < 0)
            throw config_error(f + "TFLOPS must not be negative");
        if (!(t.mem_bw_GBps > 0)) throw config_error(f + "mem_bw_GBps must be positive");
        if (!(t.link_GBps > 0)) throw config_error(f + "link_GBps must be positive");
        if (t.gpus_per_node < 1) throw config_error(f + "gpus_per_node must be at least 1");
    }

private:
    std::vector<gpu_type> types_;
};

}  // namespace frenzy
