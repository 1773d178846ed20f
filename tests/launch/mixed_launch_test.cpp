// A mixed plan as launch files (issue 27): one Slurm heterogeneous job with a component per stage group in pipeline
// order, the torchrun start that ranks nodes in component order, Megatron-LM's layout string, and the plans the
// launcher refuses. tests/slurm/test_serve.py test_launch_hetjob submits such a script to a real Slurm.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "frenzy/launch/launch.hpp"
#include "frenzy/launch/launch_json.hpp"
#include "frenzy/model/presets.hpp"
#include "shell.hpp"

using namespace frenzy;

namespace mixed_launch {

/// llama-2-13b (40 layers) over 2 nodes of 4 x T4 (stage 0, 6 layers) then 2 nodes of 8 x V100 (stages 1-2, 17 + 17),
/// tp 4 x dp 2: every stage is 8 ranks.
plan t4_v100_plan() {
    plan p;
    p.groups = {{.gpu = "t4", .gpus = 8, .nodes = 2, .gpus_per_node = 4, .first_stage = 0, .stages = 1, .layers = 6},
                {.gpu = "v100-32g", .gpus = 16, .nodes = 2, .gpus_per_node = 8, .first_stage = 1, .stages = 2, .layers = 34}};
    p.precision = precision::fp16_mixed;
    p.parallel = {.dp = 2, .tp = 4, .pp = 3, .sequence_parallel = true};
    p.parallel.stage_layers = {6, 17, 17};
    p.micro_batch = 1;
    p.step_time = seconds{10};
    p.tokens_per_s = 1000;
    p.est_time = seconds{3600};
    set_group_totals(p);
    return p;
}

job_spec job_13b() {
    job_spec j;
    j.name = "het";
    j.model = preset("llama-2-13b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 64, .total_tokens = 1e9};
    return j;
}

launch_options het_launch_options() {
    launch_options o;
    o.gres_names = {{"v100-32g", "v100"}};
    return o;
}

std::vector<std::string> sbatch_lines(const std::string& script) {
    std::vector<std::string> d;
    for (const auto& l : launch_shell::lines_of(script))
        if (l.rfind("#SBATCH ", 0) == 0) d.push_back(l.substr(8));
    return d;
}

}  // namespace mixed_launch

using namespace mixed_launch;

TEST_CASE("launch of a mixed plan: one #SBATCH component per stage group, in pipeline order") {
    const auto p = t4_v100_plan();
    const auto j = job_for_plan(job_13b(), p);
    CHECK(j.parallel.stage_layers == std::vector<std::int64_t>{6, 17, 17});
    CHECK(j.training.precision == precision::fp16_mixed);
    const auto files = launch_files(j, p, het_launch_options());
    REQUIRE(files.front().name == "launch.sbatch");
    const auto& script = files.front().content;
    // 3600 s x 1.2 = 72 minutes; the requeue signal acts on the whole job and is written once, in component 0
    const std::vector<std::string> want{
        "--job-name=het", "--nodes=2", "--ntasks-per-node=1", "--gres=gpu:t4:4", "--time=01:12:00", "--exclusive",
        "--requeue", "--signal=B:USR1@300", "hetjob", "--nodes=2", "--ntasks-per-node=1", "--gres=gpu:v100:8",
        "--time=01:12:00", "--exclusive"};
    CHECK(sbatch_lines(script) == want);
    CHECK(script.find("HEAD_NODE=$(scontrol show hostnames \"$SLURM_JOB_NODELIST_HET_GROUP_0\" | head -n 1)") != std::string::npos);
    CHECK(script.find("srun --het-group=0,1 \\\n") != std::string::npos);
    CHECK(script.find("nprocs=(4 4 8 8); exec torchrun --nnodes 4 --nproc-per-node \"${nprocs[$SLURM_PROCID]}\" "
                      "--node-rank \"$SLURM_PROCID\" --master-addr \"$1\" --master-port 29500") != std::string::npos);
    CHECK(script.find("--pipeline-model-parallel-layout 'Et*6|t*17|t*17L'") != std::string::npos);
    CHECK(script.find("# component 1: 16 x v100-32g on 2 node(s), pipeline stages 1-2 (34 layers)") != std::string::npos);
    CHECK(script.find("stage_layers=6,17,17") != std::string::npos);
    // the script is valid bash as written
    const auto path = std::filesystem::temp_directory_path() / "frenzy_mixed_launch_test.sbatch";
    std::ofstream(path) << script;
    CHECK(launch_shell::run("bash -n " + path.string() + " 2>&1").first == 0);
    std::filesystem::remove(path);
}

TEST_CASE("launch of a mixed plan: every rank of a stage is on the GPU type of that stage's group") {
    // torchelastic ranks node k after nodes 0..k-1 (their --nproc-per-node added up); Megatron-LM puts pipeline
    // stage s on ranks [s x tp x cp x dp, (s + 1) x tp x cp x dp). Read the per-node counts back from the script
    // and place every rank: stage 0's 8 ranks must be the T4 nodes' 4 + 4, stages 1-2's 16 the V100 nodes' 8 + 8.
    const auto p = t4_v100_plan();
    const auto script = launch_files(job_for_plan(job_13b(), p), p, het_launch_options()).front().content;
    std::smatch m;
    REQUIRE(std::regex_search(script, m, std::regex(R"(nprocs=\(([0-9 ]+)\))")));
    std::vector<int> per_node;
    std::istringstream in(m[1].str());
    for (int n; in >> n;) per_node.push_back(n);
    REQUIRE(per_node == std::vector<int>{4, 4, 8, 8});
    const std::vector<std::string> node_type{"t4", "t4", "v100-32g", "v100-32g"};  // components in order, nodes in each
    int rank = 0;
    for (std::size_t node = 0; node < per_node.size(); ++node)
        for (int local = 0; local < per_node[node]; ++local, ++rank) {
            const auto stage = rank / (p.parallel.tp * p.parallel.cp * p.parallel.dp);
            const auto& group = stage < 1 ? p.groups[0] : p.groups[1];
            CHECK(node_type[node] == group.gpu);
        }
    CHECK(rank == p.gpus);
}

TEST_CASE("launch of a mixed plan: a group that is not whole stages on whole nodes, or out of order, is refused") {
    const auto j = job_for_plan(job_13b(), t4_v100_plan());
    auto p = t4_v100_plan();
    p.groups[0].gpus = 4;  // 4 GPUs cannot be one stage of tp 4 x dp 2
    p.groups[0].nodes = 1;
    CHECK_THROWS_WITH(launch_files(j, p, het_launch_options()),
                      Catch::Contains("mixed plan group 0 (t4): 4 GPUs are not its 1 stage(s) x tp x cp x dp = 8 ranks each"));
    p = t4_v100_plan();
    p.groups[1].nodes = 3;  // 16 GPUs are not 3 nodes of 8
    CHECK_THROWS_WITH(launch_files(j, p, het_launch_options()),
                      Catch::Contains("mixed plan group 1 (v100-32g): 16 GPUs are not 3 node(s) of 8"));
    p = t4_v100_plan();
    p.groups[1].first_stage = 2;
    CHECK_THROWS_WITH(launch_files(j, p, het_launch_options()),
                      Catch::Contains("mixed plan group 1 (v100-32g): its first stage is 2, not 1"));
    auto o = het_launch_options();
    o.launcher = frameworks::torchtitan::launcher_handle;
    CHECK_THROWS_WITH(launch_files(j, t4_v100_plan(), o),
                      Catch::Contains("launch_options::mixed: the torchtitan launcher cannot write a pipeline over several GPU types"));
}

TEST_CASE("launch --mixed plans and writes the best mixed plan, and its JSON carries mixed_plan in place of plan") {
    cluster_spec c;
    c.nodes = {{"v100", "v100-32g", 8, 1}, {"t4", "t4", 4, 1}};  // neither alone runs llama-2-13b with these GPUs
    validate(c);
    auto o = het_launch_options();
    o.mixed = true;
    const auto r = launch(job_13b(), c, o);
    REQUIRE(r.plan.mixed());
    CHECK(r.job.parallel == r.plan.parallel);
    CHECK(r.job.parallel.stage_layers.size() == static_cast<std::size_t>(r.job.parallel.pp));
    const auto d = sbatch_lines(r.files.front().content);
    CHECK(std::count(d.begin(), d.end(), "hetjob") == static_cast<long>(r.plan.groups.size()) - 1);
    const nlohmann::ordered_json doc = r;
    CHECK(doc.contains("mixed_plan"));
    CHECK_FALSE(doc.contains("plan"));
    o.plan_index = 5;
    CHECK_THROWS_WITH(launch(job_13b(), c, o), Catch::Contains("no mixed plan 6 (the planner found"));
}

TEST_CASE("the one plan type: a mixed plan as plan::groups writes mixed_plan's JSON and reads it back") {
    const plan p = t4_v100_plan();
    CHECK(p.mixed());
    CHECK(p.gpus == 8 + 16);  // set_group_totals: the sums over the groups
    CHECK(p.nodes == 2 + 2);
    CHECK(p.gpu == "t4+v100-32g");
    const auto text = nlohmann::ordered_json(p).dump();
    CHECK(text.rfind(R"({"gpus":24,"groups":[)", 0) == 0);  // the store and plan --json keep the mixed form
    const auto back = nlohmann::json::parse(text).get<plan>();  // the budget keys travel only with a budget
    CHECK(back.groups == p.groups);
    CHECK(back.parallel == p.parallel);
    CHECK(nlohmann::ordered_json(back).dump() == text);
    CHECK(job_for_plan(job_13b(), p).parallel.stage_layers == std::vector<std::int64_t>{6, 17, 17});
}

TEST_CASE("launch --mixed over A100 + V100: the batch script runs unfused attention, as a V100-only launch does (issue 53)") {
    cluster_spec c;
    c.nodes = {{"v100", "v100-32g", 8, 1}, {"a100", "a100-40g", 8, 1}};
    validate(c);
    auto o = het_launch_options();
    o.mixed = true;
    const auto r = launch(job_13b(), c, o);
    REQUIRE(r.plan.mixed());
    REQUIRE(r.plan.gpu.find("v100-32g") != std::string::npos);
    CHECK(r.job.runtime.attention == attention_impl::unfused);  // Megatron-LM's --attention-backend is one for all stages
    const auto& script = r.files.front().content;
    CHECK(script.find("    --attention-backend unfused\n") != std::string::npos);
    // the V100-only launch writes the same flag (job_for_plan: the type's resolved kernel)
    c.nodes = {{"v100", "v100-32g", 8, 2}};
    o.mixed = false;
    const auto v = launch(job_13b(), c, o);
    CHECK(v.files.front().content.find("    --attention-backend unfused\n") != std::string::npos);
}
