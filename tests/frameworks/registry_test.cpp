// Adding a framework is one folder and one line in each catalog (issues 22, 54): the test-only framework of
// toy_framework.hpp, registered with one call from this test alone, is found by name in job specs and measurement
// tables, estimated, considered by the planner, launched and imported back through the catalog's import path, with
// no other change anywhere. The CLI half of the check is tests/cli/CMakeLists.txt (cli_toy_framework_*).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "frenzy/io/job_json.hpp"
#include "frenzy/io/launcher_shell.hpp"
#include "frenzy/io/measurements_csv.hpp"
#include "frenzy/launch/launch.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"
#include "toy_framework.hpp"

using namespace frenzy;

namespace {

job_spec toy_job() {
    frenzy_test::toy::register_toy();
    job_spec j;
    j.name = "toy-run";
    j.model = preset("llama-3.1-8b");
    j.training.seq_len = 4096;
    j.training.global_batch = 64;
    j.training.total_tokens = 1e9;
    j.runtime.framework = find_framework("runtime.framework", "toy");
    j.parallel.sharding = sharding::full;
    j.parallel.dp = 8;
    return j;
}

}  // namespace

TEST_CASE("a framework added with one call is found by name wherever frameworks are named") {
    frenzy_test::toy::register_toy();
    const auto toy = find_framework("runtime.framework", "toy");
    CHECK(toy.name() == "toy");
    CHECK(framework_names() == "megatron | deepspeed | fsdp | ddp | hf | llm-foundry | torchtune | litgpt | axolotl | llamafactory | unsloth | toy");  // the built-ins first, then the added
    CHECK(launcher_names() == "megatron | torchtitan | deepspeed | fsdp | llm-foundry | hf | torchtune | litgpt | axolotl | llamafactory | toy");
    CHECK(launcher_for(toy) == find_launcher("--framework", "toy"));
    // a job spec naming it: the JSON reader and writer go through the catalog
    auto j = toy_job();
    const auto text = to_json(j).dump();
    CHECK(text.find("\"framework\":\"toy\"") != std::string::npos);
    CHECK(job_from_json(nlohmann::json::parse(text)).job.runtime.framework == toy);
    // adding it twice is refused, naming it
    CHECK_THROWS_WITH(add_framework(frenzy_test::toy::traits, frenzy_test::toy::launch_traits),
                      Catch::Contains("a launcher named \"toy\" exists"));
}

TEST_CASE("the added framework's rules and memory facts are the ones validate and the estimate use") {
    auto j = toy_job();
    j.parallel.sharding = sharding::optimizer;
    CHECK_THROWS_WITH(validate(j), "parallel.sharding=\"optimizer\" is not supported by runtime.framework=\"toy\" (none or full)");
    j.parallel.sharding = sharding::full;
    REQUIRE_NOTHROW(validate(j));
    // toy keeps dropout masks where fsdp (otherwise the same profile) does not: 2 x 1-byte masks of s x h per layer
    // (attention output and MLP output; memory/activations.hpp), here on every layer of the 8B model at micro-batch 1
    auto f = j;
    f.runtime.framework = frameworks::fsdp::handle;
    const memory_estimator e;
    const double toy_act = e.estimate(j).stages.front().breakdown.activations.value;
    const double fsdp_act = e.estimate(f).stages.front().breakdown.activations.value;
    CHECK(toy_act > fsdp_act);
}

TEST_CASE("the planner considers the added framework and launch writes and reads back its files") {
    auto j = toy_job();
    cluster_spec c;
    c.nodes = {{"h100", "h100-80g", 8, 2}};
    plan_options o;
    o.frameworks = {find_framework("--framework", "toy")};
    const auto r = planner{}.plan(j, c, o);
    REQUIRE(!r.plans.empty());
    for (const auto& p : r.plans) {
        CHECK(p.framework.name() == "toy");
        CHECK(p.parallel.pp == 1);  // its rules: no pipeline
        CHECK((p.parallel.sharding == sharding::none || p.parallel.sharding == sharding::full));
    }
    launch_options lo;
    lo.launcher = find_launcher("--framework", "toy");
    const auto l = launch(j, c, lo);
    REQUIRE(l.files.size() == 2);
    CHECK(l.files[0].name == "launch.sbatch");
    CHECK(l.files[0].content.find("toy_train.py --config \"$LAUNCH_DIR/toy.json\"") != std::string::npos);
    CHECK(l.files[1].name == "toy.json");
    const auto dir = std::filesystem::temp_directory_path() / ("frenzy_toy_" + std::to_string(::getpid()));
    const auto paths = write_launch_files(l.files, dir.string());
    import_options io;
    io.model = j.model;
    const auto back = import_launcher_file("toy", paths[1], io);
    std::filesystem::remove_all(dir);
    CHECK(back.job.parallel == l.job.parallel);
    CHECK(back.job.runtime.framework.name() == "toy");
    CHECK(back.world_size == l.plan.gpus);
}

TEST_CASE("a measurement table's rows that name the added framework are read as its, by its traits") {
    frenzy_test::toy::register_toy();
    const auto path = (std::filesystem::temp_directory_path() / ("frenzy_toy_" + std::to_string(::getpid()) + ".csv")).string();
    std::ofstream(path)
        << "id,value_type,framework,model,layers,hidden,heads,kv_heads,ffn_hidden,mlp_act,vocab_padded,tied_emb,seq_len,"
           "micro_batch,global_batch,num_gpus,dp,tp,pp,vpp,cp,ep,seq_parallel,sharding,recompute,attention_impl,precision,"
           "optimizer,gpu,peak_GiB,peak_bytes,metric,rank_measured,other_flags,source,confidence,notes\n"
           "1,measured,Toy (test only),toy,12,512,8,8,2048,GELU,50304,yes,1024,4,32,8,8,1,1,,1,1,no,full,none,,bf16,AdamW,"
           "H100,3.0,,max_memory_allocated,,,src,high,\n"
           "2,measured,plain PyTorch,toy,12,512,8,8,2048,GELU,50304,yes,1024,4,32,8,8,1,1,,1,1,no,none,none,,bf16,AdamW,"
           "H100,3.0,,max_memory_allocated,,,src,high,\n";
    const auto rows = read_memory_measurements(path);
    std::filesystem::remove(path);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].job.runtime.framework.name() == "toy");  // its table word
    CHECK(rows[0].job.parallel.sharding == sharding::full);
    CHECK(rows[1].job.runtime.framework == frameworks::ddp::handle);  // a row naming none: the framework whose rows those are
}

TEST_CASE("a launch script's launch command is found by the launch programs the frameworks declare") {
    // no *.py word: only the program tells the launch line from the others (the last command's words otherwise)
    const auto ds = read_shell_script("export X=1\ndeepspeed --num_gpus 8 -m trainer.main --zero-stage 3\n");
    REQUIRE(ds.found);  // DeepSpeed declares `deepspeed` (frameworks/deepspeed/traits.hpp)
    CHECK(ds.launcher == std::vector<std::string>{"deepspeed", "--num_gpus", "8"});
    CHECK(ds.script == "-m trainer.main");
    CHECK(ds.args == std::vector<std::string>{"--zero-stage", "3"});
    const std::string toy_script = "toyrun --nodes 2 -m toy.train --layers 4\n";
    frenzy_test::toy::register_toy();
    CHECK(framework_launch_program("toyrun"));
    CHECK_FALSE(framework_launch_program("megatron"));  // a framework's name is not a program
    const auto toy = read_shell_script(toy_script);
    REQUIRE(toy.found);
    CHECK(toy.script == "-m toy.train");
    CHECK(toy.args == std::vector<std::string>{"--layers", "4"});
    // an unknown program: no launch command, every word an argument
    const auto other = read_shell_script("otherrun --nodes 2 -m x.y --a 1\n");
    CHECK_FALSE(other.found);
    CHECK(other.args.size() == 7);
}
