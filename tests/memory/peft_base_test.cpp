// LoRA over an int8 base (bitsandbytes LLM.int8, training.finetune.load_in_8bit) against hand derivations from the
// library's code.
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
    j.runtime.framework = framework::hf;
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

TEST_CASE("load_in_8bit is refused where it does not apply, naming the field") {
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
    // JSON round trip; a job without them writes neither field.
    j = peft_base_job();
    j.training.finetune.load_in_8bit = true;
    const auto js = to_json(j.training.finetune);
    CHECK(js["load_in_8bit"] == true);
    CHECK(finetune_from_json(js) == j.training.finetune);
    const auto plain = to_json(peft_base_job().training.finetune);
    CHECK(!plain.contains("load_in_8bit"));
}
