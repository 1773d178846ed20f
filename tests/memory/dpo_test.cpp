// training.finetune.objective "dpo" (TRL's DPOTrainer, huggingface/trl@f2cd5771 trl/trainer/dpo_trainer.py) against
// hand derivations: the chosen + rejected pair in one forward, the reference model's weights and logits.
#include <catch2/catch.hpp>

#include "frenzy/io/job_json.hpp"
#include "frenzy/memory/estimator.hpp"

using namespace frenzy;

namespace {
// A 16-layer Llama-style model (h 2048, ffn 8192, vocab 128256, untied) under transformers' Trainer.
job_spec dpo_job(finetune_method method) {
    job_spec j;
    j.model = {.name = "d", .layers = 16, .hidden = 2048, .heads = 32, .kv_heads = 8, .ffn_hidden = 8192,
               .activation = activation::swiglu, .vocab = 128256, .position_embedding = position_embedding::rope,
               .norm = norm_kind::rmsnorm, .bias = false};
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 1};
    j.training.finetune = {.method = method, .objective = finetune_objective::dpo};
    j.runtime.framework = frameworks::hf::handle;
    return j;
}
model_state_bytes dpo_states(const job_spec& j) {
    const auto f = profile_of(j);
    const auto l = stage_layouts(j, f).front();
    return method_model_states(j, l, f, sharded_model_states{}.model_states(j, l, f));
}
}  // namespace

TEST_CASE("dpo: a full fine-tune holds a frozen reference copy of the weights at the compute precision") {
    // dpo_trainer.py: ref_model = create_model_from_path(...) unless PEFT or precompute_ref_log_probs. bf16-mixed under
    // hf keeps fp32 parameters (4 B) and the reference in bf16 (2 B): weights grow by 2 B x P.
    auto j = dpo_job(finetune_method::full);
    validate(j);
    const auto l = stage_layouts(j, profile_of(j)).front();
    auto sft = j;
    sft.training.finetune.objective = finetune_objective::sft;
    const double p = l.params();
    CHECK(dpo_states(j).weights.value - dpo_states(sft).weights.value == Approx(2 * p));
    CHECK(dpo_states(j).optimizer == dpo_states(sft).optimizer);  // the reference has no optimizer state
    // precompute_ref_log_probs: the reference is not kept while training.
    j.training.finetune.precompute_ref_log_probs = true;
    CHECK(dpo_states(j).weights == dpo_states(sft).weights);
    // Under full sharding the reference is sharded as the policy (prepare_fsdp): 2 B x P / 4 on each of 4 GPUs.
    j = dpo_job(finetune_method::full);
    j.parallel.dp = 4;
    j.parallel.sharding = sharding::full;
    j.training.global_batch = 4;
    sft = j;
    sft.training.finetune.objective = finetune_objective::sft;
    CHECK(dpo_states(j).weights.value - dpo_states(sft).weights.value == Approx(2 * p / 4));
    // LoRA: the reference is the base with the adapters disabled (use_adapter): no extra weights.
    j = dpo_job(finetune_method::lora);
    sft = j;
    sft.training.finetune.objective = finetune_objective::sft;
    CHECK(dpo_states(j).weights == dpo_states(sft).weights);
}

TEST_CASE("dpo: b pairs are one forward of 2b sequences, and the reference's logits are held in forward") {
    // DataCollatorForPreference concatenates chosen and rejected: a DPO micro-batch of 1 pair has the activations of
    // an SFT micro-batch of 2 sequences (precomputed reference: nothing else differs).
    auto j = dpo_job(finetune_method::lora);
    j.training.finetune.precompute_ref_log_probs = true;
    auto sft = dpo_job(finetune_method::lora);
    sft.training.finetune.objective = finetune_objective::sft;
    sft.training.micro_batch = 2;
    sft.training.global_batch = 2;
    const auto d = memory_estimator{}.estimate(j), s = memory_estimator{}.estimate(sft);
    CHECK(d.stages.front().breakdown.activations == s.stages.front().breakdown.activations);
    CHECK(d.peak_allocated == s.peak_allocated);
    // The reference forward's 16-bit logits, 2 B x 2 x 2048 tokens x V, held beside the stored activations.
    j.training.finetune.precompute_ref_log_probs = false;
    const auto pair = dpo_pair_job(j);
    const auto f = profile_of(pair);
    const auto l = stage_layouts(pair, f).front();
    const activation_bytes none{.stored = bytes{1e9}, .transient = bytes{0}, .in_flight = 1};
    CHECK(method_activations(pair, l, f, none).transient.value == Approx(2.0 * 4096 * 128256));
    // Unsloth under DPO: TRL passes no labels, so the model returns full logits (the logits path, not the fused loss).
    j.runtime.framework = find_framework("runtime.framework", "unsloth");
    CHECK(profile_of(j).loss == loss_style::upcast_log_softmax);
}

TEST_CASE("dpo: refused where TRL does not run it, naming the field, and written back only when set") {
    auto j = dpo_job(finetune_method::full);
    j.runtime.framework = frameworks::megatron::handle;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("training.finetune.objective=\"dpo\" needs runtime.framework=\"hf\""));
    j = dpo_job(finetune_method::none);
    CHECK_THROWS_WITH(validate(j), Catch::Contains("training.finetune.objective=\"dpo\" needs a pretrained model"));
    j = dpo_job(finetune_method::full);
    j.training.finetune.objective = finetune_objective::sft;
    j.training.finetune.precompute_ref_log_probs = true;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("training.finetune.precompute_ref_log_probs=true needs training.finetune.objective=\"dpo\""));
    CHECK_THROWS_WITH(finetune_from_json(nlohmann::json::parse(R"({"method": "full", "objective": "ppo"})")),
                      Catch::Contains("training.finetune.objective"));
    // JSON: the objective round-trips; an SFT job writes neither field (its JSON as before).
    j = dpo_job(finetune_method::full);
    j.training.finetune.precompute_ref_log_probs = true;
    const auto back = finetune_from_json(to_json(j.training.finetune));
    CHECK(back == j.training.finetune);
    const auto plain = to_json(finetune_spec{.method = finetune_method::lora});
    CHECK(!plain.contains("objective"));
    CHECK(!plain.contains("precompute_ref_log_probs"));
}
