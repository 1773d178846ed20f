#pragma once
// What the acceptance and round-trip matrix tests share to launch a job on one node of 8 H100s, as each launcher's
// frameworks train it, and to read the files back (tests/launch/published_test.cpp, roundtrip_matrix_test.cpp).
#include <string>

#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/train/job_spec.hpp"

namespace launch_one_node {

/// The layout launcher `l`'s frameworks train with on 8 GPUs of one node: Megatron-LM's distributed optimizer and
/// DeepSpeed's ZeRO-1 shard the optimizer, the others shard fully; torchtune's recipes train in pure bf16.
inline void use_launcher_layout(frenzy::job_spec& j, frenzy::launcher l) {
    using namespace frenzy;
    j.runtime.framework = framework{*l->runs[0]};
    const bool zero1 = l == frameworks::megatron::launcher_handle || l == frameworks::deepspeed::launcher_handle;
    j.parallel = {.dp = 8, .sharding = zero1 ? sharding::optimizer : sharding::full};
    if (l == frameworks::torchtune::launcher_handle) j.training.precision = precision::bf16;
}

/// Job `j`'s plan on one node of 8 H100s, predicted at 2 s a step and `est_s` seconds in all.
inline frenzy::plan one_node_plan(const frenzy::job_spec& j, double est_s) {
    frenzy::plan p;
    p.gpu = "h100-80g";
    p.gpus = 8;
    p.nodes = 1;
    p.gpus_per_node = 8;
    p.framework = j.runtime.framework;
    p.precision = j.training.precision;
    p.parallel = j.parallel;
    p.micro_batch = j.training.micro_batch;
    p.step_time = frenzy::seconds{2.0};
    p.est_time = frenzy::seconds{est_s};
    p.has_budget = true;
    return p;
}

/// The file of a launcher's that its importer reads (--from KIND:FILE).
inline std::string imported_file_of(frenzy::launcher l) {
    using namespace frenzy;
    if (l == frameworks::megatron::launcher_handle) return "launch.sbatch";
    if (l == frameworks::torchtitan::launcher_handle) return "frenzy_torchtitan.py";
    if (l == frameworks::llm_foundry::launcher_handle) return "train.yaml";
    if (l == frameworks::torchtune::launcher_handle) return "torchtune.yaml";
    if (l == frameworks::litgpt::launcher_handle) return "litgpt.yaml";
    if (l == frameworks::hf::launcher_handle) return "frenzy_hf_train.py";
    if (l == frameworks::deepspeed::launcher_handle) return "ds_config.json";
    return "fsdp_settings.json";
}

}  // namespace launch_one_node
