// LoRA over an int8 base (bitsandbytes LLM.int8, training.finetune.load_in_8bit) and PEFT's modules_to_save
// (training.finetune.modules_to_save) against hand derivations from the libraries' code.
#include <catch2/catch.hpp>

#include "frenzy/io/job_json.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;

namespace {
// Llama-2-7B on one GPU under transformers' Trainer: h 4096, ffn 11008, 32 layers, kv = q (MHA), vocab 32000 untied.
job_spec peft_base_job() {
    job_spec j;
    j.model = preset("llama-2-7b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 1};
    j.training.finetune = {.method = finetune_method::lora, .rank = 16, .targets = lora_q | lora_k | lora_v | lora_o};
    j.runtime.framework = frameworks::hf::handle;
    return j;
}
model_state_bytes peft_base_states(const job_spec& j) {
    const auto f = profile_of(j);
    const auto l = stage_layouts(j, f).front();
    return method_model_states(j, l, f, sharded_model_states{}.model_states(j, l, f));
}
double peft_base_stored(const job_spec& j) {
    const auto f = profile_of(j);
    const auto l = stage_layouts(j, f).front();
    return method_activations(j, l, f, transformer_activations{}.activations(j, l, f)).stored.value;
}
}  // namespace

TEST_CASE("load_in_8bit: 1 byte a linear weight and an fp32 scale per output row") {
    // bitsandbytes@95f9af3 nn/modules.py Int8Params._quantize: int8_vectorwise_quant -> int8 CB, float32 SCB per row.
    // A layer's linears: 4 x 4096 x 4096 + 3 x 4096 x 11008 = 202,375,168 weights; rows 4 x 4096 (q, k, v, o) +
    // 2 x 11008 (gate, up) + 4096 (down) = 42,496. Against 16-bit LoRA (2 B a weight): weights fall by
    // 32 x (202,375,168 x (2 - 1) - 42,496 x 4).
    auto j = peft_base_job();
    const auto lora16 = peft_base_states(j);
    j.training.finetune.load_in_8bit = true;
    validate(j);
    const double linears = 4.0 * 4096 * 4096 + 3.0 * 4096 * 11008, rows = 4.0 * 4096 + 2 * 11008 + 4096;
    CHECK(lora16.weights.value - peft_base_states(j).weights.value == Approx(32 * (linears - 4 * rows)));
    CHECK(peft_base_states(j).gradients == lora16.gradients);  // the adapters alone train
    // MatMul8bitLt keeps its input A for the input gradient (ctx.tensors = (CAt, subA, A)): no frozen linear's input is
    // spared. Adapters that cast their own inputs (PEFT's fp32 adapters under autocast) let 16-bit LoRA spare every
    // frozen linear's input: the QKV input (h), the output projection's (q width), the MLP's (h) and the down
    // projection's (ffn), 2 B x 2048 x (3 x 4096 + 11008) a layer, which int8 keeps.
    auto l16 = peft_base_job();
    CHECK(peft_base_stored(j) - peft_base_stored(l16) == Approx(32 * 2.0 * 2048 * (3 * 4096 + 11008)));
}

TEST_CASE("load_in_8bit and modules_to_save are refused where they do not apply, naming the field") {
    auto j = peft_base_job();
    j.training.finetune.method = finetune_method::qlora;
    j.training.finetune.load_in_8bit = true;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("training.finetune.load_in_8bit=true needs method \"lora\" (got \"qlora\")"));
    j = peft_base_job();
    j.training.finetune.load_in_8bit = true;
    j.parallel.dp = 2;
    j.training.global_batch = 2;
    j.parallel.sharding = sharding::full;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("training.finetune.load_in_8bit=true with parallel.sharding=\"full\""));
    j = peft_base_job();
    j.training.finetune = {.method = finetune_method::full, .modules_to_save = save_lm_head};
    CHECK_THROWS_WITH(validate(j), Catch::Contains("training.finetune.modules_to_save needs method \"lora\" or \"qlora\""));
    CHECK_THROWS_WITH(finetune_from_json(nlohmann::json::parse(R"({"method": "lora", "modules_to_save": ["wte"]})")),
                      Catch::Contains("training.finetune.modules_to_save: \"wte\" is not one of: embed_tokens | lm_head"));
    // JSON round trip; a job without them writes neither field.
    j = peft_base_job();
    j.training.finetune.load_in_8bit = true;
    j.training.finetune.modules_to_save = save_embed_tokens | save_lm_head;
    const auto js = to_json(j.training.finetune);
    CHECK(js["modules_to_save"] == nlohmann::json::array({"embed_tokens", "lm_head"}));
    CHECK(finetune_from_json(js) == j.training.finetune);
    const auto plain = to_json(peft_base_job().training.finetune);
    CHECK(!plain.contains("load_in_8bit"));
    CHECK(!plain.contains("modules_to_save"));
}

TEST_CASE("modules_to_save: whole trainable copies of the embedding and the LM head beside the frozen originals") {
    // peft@5d602fd utils/other.py ModulesToSaveWrapper: modules_to_save[adapter] = deepcopy(original_module), trained;
    // the original stays frozen. Each copy is V x h = 32000 x 4096 = 131,072,000 parameters at hf's trainable bytes:
    // fp32 weight (4 B), fp32 gradient (4 B), AdamW's two fp32 moments (8 B).
    auto j = peft_base_job();
    const auto lora = peft_base_states(j);
    j.training.finetune.modules_to_save = save_embed_tokens | save_lm_head;
    validate(j);
    const auto both = peft_base_states(j);
    const double copy = 32000.0 * 4096;
    CHECK(both.weights.value - lora.weights.value == Approx(2 * copy * 4));
    CHECK(both.gradients.value - lora.gradients.value == Approx(2 * copy * 4));
    CHECK(both.optimizer.value - lora.optimizer.value == Approx(2 * copy * 8));
    // The LM head alone: one copy; and Liger's fused loss then saves its grad_weight (V x h x 4 B) as for a full fine-tune.
    j.training.finetune.modules_to_save = save_lm_head;
    CHECK(peft_base_states(j).weights.value - lora.weights.value == Approx(copy * 4));
    CHECK(detail::lm_head_trained(j));
    j.runtime.liger = true;
    auto frozen_head = j;
    frozen_head.training.finetune.modules_to_save = 0;
    const auto f = profile_of(j);
    CHECK(detail::last_stage_activations(j, f).first - detail::last_stage_activations(frozen_head, f).first ==
          Approx(copy * 4));
}
