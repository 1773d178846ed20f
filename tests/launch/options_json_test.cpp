// launch_options' JSON codec (launch/launch_json.hpp): Python's frenzy.launch keywords and its "slurm" object read
// as the one reader does, each bad value refused naming its key, plan options flat beside them, and the writer read
// back to the same options.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "frenzy/launch/launch_json.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {
std::string launch_options_error(const json& j) {
    try {
        launch_options_from_json(j);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("launch options from JSON: every keyword of frenzy.launch, the Slurm settings and the plan options") {
    const auto o = launch_options_from_json(json{
        {"framework", "deepspeed"}, {"plan", 3}, {"mixed", true}, {"gres", {{"a100-80g", "a100"}}},
        {"run_command", "train.py --fast"}, {"time_margin", 0.5}, {"torchtitan_base", "m:f"},
        {"slurm", {{"partition", "gpu"}, {"account", "proj"}, {"qos", "high"}, {"cpus_per_task", 16}, {"mem", "500G"},
                   {"requeue_signal_s", 120}}},
        {"objective", "gpu-hours"}, {"margin", 0.1}});
    CHECK(o.launcher == frameworks::deepspeed::launcher_handle);
    CHECK(o.plan_index == 2);
    CHECK(o.mixed);
    CHECK(o.gres_names == std::map<std::string, std::string>{{"a100-80g", "a100"}});
    CHECK(o.run_command == "train.py --fast");
    CHECK(o.time_margin == 0.5);
    CHECK(o.base_config == "m:f");
    CHECK(o.partition == "gpu");
    CHECK(o.account == "proj");
    CHECK(o.qos == "high");
    CHECK(o.cpus_per_task == 16);
    CHECK(o.mem == "500G");
    CHECK(o.requeue_signal_s == 120);
    CHECK(o.planning.objective == plan_objective::gpu_hours);
    CHECK(o.planning.margin == 0.1);
    const auto d = launch_options_from_json(json::object());
    CHECK(d.launcher == frameworks::megatron::launcher_handle);
    CHECK(d.plan_index == 0);
    CHECK(d.time_margin == 0.2);
    CHECK(d.requeue_signal_s == 300);
}

TEST_CASE("launch options from JSON: each bad value refused naming its key, in Python's words") {
    CHECK(launch_options_error({{"plan", 0}}) == "plan=0: plans are numbered from 1");
    CHECK(launch_options_error({{"time_margin", -1}}) == "time_margin=-1.000000 must be a finite fraction >= 0");
    CHECK(launch_options_error({{"gres", {{"a100-80g", ""}}}}) == "gres[\"a100-80g\"] must not be empty");
    CHECK_THAT(launch_options_error({{"gres", {{"warp-drive", "x"}}}}), Contains("warp-drive"));
    CHECK(launch_options_error({{"slurm", {{"queue", "gpu"}}}}) ==
          "slurm[\"queue\"] is not a setting (partition, account, qos, cpus_per_task, mem, requeue_signal_s, max_time_s)");
    CHECK(launch_options_error({{"slurm", {{"max_time_s", "2-00:00:00"}}}}) == "slurm[\"max_time_s\"]=\"2-00:00:00\" must be a number");
    CHECK_THAT(launch_options_error({{"checkpoint_every_s", -5}}), Contains("checkpoint_every_s"));
    CHECK(launch_options_error({{"slurm", {{"cpus_per_task", "many"}}}}) == "slurm[\"cpus_per_task\"]=\"many\" must be a number");
    CHECK(launch_options_error({{"slurm", {{"requeue_signal_s", true}}}}) == "slurm[\"requeue_signal_s\"]=true must be a number");
    CHECK_THAT(launch_options_error({{"framework", "jax"}}), Contains("framework=\"jax\" is not one of"));
    CHECK_THAT(launch_options_error({{"objective", "fast"}}), Contains("objective=\"fast\""));
    CHECK_THAT(launch_options_error({{"colour", "red"}}), Contains("launch option \"colour\" is not one of: framework, plan"));
}

TEST_CASE("launch options to JSON and back: the same options") {
    launch_options o;
    o.launcher = frameworks::fsdp::launcher_handle;
    o.plan_index = 4;
    o.gres_names = {{"h100-80g", "h100"}};
    o.run_command = "python x.py";
    o.time_margin = 0.3;
    o.partition = "p";
    o.account = "a";
    o.qos = "q";
    o.cpus_per_task = 8;
    o.mem = "0";
    o.requeue_signal_s = 0;
    o.max_time_s = 2 * 86400;
    o.checkpoint_every_s = 900;
    o.planning.objective = plan_objective::gpu_hours;
    o.planning.max_gpus = 32;
    const json j = o;
    CHECK(j.at("plan") == 5);
    CHECK(j.at("slurm").at("cpus_per_task") == 8);
    const auto back = j.get<launch_options>();
    CHECK(back.launcher == o.launcher);
    CHECK(back.plan_index == o.plan_index);
    CHECK(back.gres_names == o.gres_names);
    CHECK(back.run_command == o.run_command);
    CHECK(back.time_margin == o.time_margin);
    CHECK(back.partition == o.partition);
    CHECK(back.account == o.account);
    CHECK(back.qos == o.qos);
    CHECK(back.cpus_per_task == o.cpus_per_task);
    CHECK(back.mem == o.mem);
    CHECK(back.requeue_signal_s == o.requeue_signal_s);
    CHECK(back.max_time_s == o.max_time_s);
    CHECK(back.checkpoint_every_s == o.checkpoint_every_s);
    CHECK(back.planning.objective == o.planning.objective);
    CHECK(back.planning.max_gpus == o.planning.max_gpus);
}
