// The Slurm backend's pieces that need no Slurm: the command runner, the GRES map, the inventory from recorded
// sinfo output, the sbatch placement options and the batch script.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frenzy/backend/slurm.hpp"
#include "frenzy/model/presets.hpp"
#include "../slurm_data.hpp"

TEST_CASE("run_command: argument vector, exit code, stdout/stderr, stdin, timeout, missing program") {
    auto r = frenzy::run_command({"sh", "-c", "echo hi; echo err >&2; exit 3"}, 10);
    CHECK(r.exit_code == 3);
    CHECK(r.out == "hi\n");
    CHECK(r.err == "err\n");
    CHECK_FALSE(r.ok());
    // No shell: the argument reaches the program verbatim, metacharacters included.
    r = frenzy::run_command({"echo", "a; rm -rf /nonexistent $(id)"}, 10);
    CHECK(r.ok());
    CHECK(r.out == "a; rm -rf /nonexistent $(id)\n");
    r = frenzy::run_command({"cat"}, 10, "script body\n");
    CHECK(r.out == "script body\n");
    const auto t0 = std::chrono::steady_clock::now();
    r = frenzy::run_command({"sleep", "5"}, 0.3);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(r.timed_out);
    CHECK(took < 2.0);  // killed at 0.3 s; 2 s leaves room for a loaded 2-core machine
    r = frenzy::run_command({"/nonexistent/frenzy-no-such-program"}, 5);
    CHECK(r.exit_code == 127);
}

TEST_CASE("gres_map parses SLURM_TYPE=CATALOG_TYPE lists and files, and names what is wrong") {
    auto m = frenzy::gres_map::parse("a100=a100-80g, v100=v100-32g\n# comment\nt4=t4");
    CHECK(m.entries().size() == 3);
    CHECK(m.lookup("a100") == "a100-80g");
    CHECK(m.lookup("t4") == "t4");
    CHECK(m.lookup("h100-80g") == "h100-80g");  // a catalog name maps to itself
    CHECK(m.lookup("k80").empty());
    CHECK_THROWS_WITH(frenzy::gres_map::parse("a100"), Catch::Contains("gres_map: entry \"a100\" is not SLURM_TYPE=CATALOG_TYPE"));
    CHECK_THROWS_WITH(frenzy::gres_map::parse("a100=a100-81g"), Catch::Contains("\"a100-81g\" is not a GPU type of the catalog"));
    CHECK_THROWS_WITH(frenzy::gres_map::parse("a100=a100-80g,a100=a100-40g"), Catch::Contains("mapped twice"));
    CHECK_THROWS_WITH(frenzy::gres_map::load("/nonexistent/map"), Catch::Contains("cannot read file /nonexistent/map"));
}

TEST_CASE("inventory from recorded sinfo: one group per node, GRES types mapped, unmapped nodes skipped") {
    const auto nodes = frenzy::parse_sinfo_json(slurm_file("sinfo_idle.json"));
    const auto inv = frenzy::inventory_from_nodes(nodes, frenzy::gres_map::parse("a100=a100-80g,v100=v100-32g,t4=t4"));
    // slurm.conf of tests/slurm/slurm_cluster.py: 2 x 8 a100, 1 x 8 v100, 1 x 4 t4 = 28 GPUs.
    REQUIRE(inv.spec.nodes.size() == 4);
    CHECK(inv.spec.total_gpus() == 28);
    CHECK(inv.spec.nodes[0].name == "a100-1");
    CHECK(inv.spec.nodes[0].gpu == "a100-80g");
    CHECK(inv.spec.nodes[3].gpu == "v100-32g");
    CHECK(inv.gres_types[2] == "t4");
    CHECK(inv.index("v100-1") == 3);
    CHECK(inv.skipped.empty());
    const auto partial = frenzy::inventory_from_nodes(nodes, frenzy::gres_map::parse("a100=a100-80g"));
    CHECK(partial.spec.nodes.size() == 3);  // v100 has no catalog name of its own; t4 does
    REQUIRE(partial.skipped.size() == 1);
    CHECK(partial.skipped[0] == "v100-1: GRES type \"v100\" has no catalog GPU type (add it to the GRES map)");
}

TEST_CASE("sbatch options pin the allocation: node list, node count, typed GRES") {
    const auto inv = frenzy::inventory_from_nodes(frenzy::parse_sinfo_json(slurm_file("sinfo_idle.json")),
                                                  frenzy::gres_map::parse("a100=a100-80g,v100=v100-32g"));
    frenzy::allocation even{0, {{0, 6}, {1, 6}}};
    auto args = frenzy::sbatch_placement_args(inv, even, "frenzy-7", "frenzy:7:1", {});
    auto has = [&](const std::string& a) { return std::find(args.begin(), args.end(), a) != args.end(); };
    CHECK(has("--nodes=2"));
    CHECK(has("--nodelist=a100-1,a100-2"));
    CHECK(has("--gres=gpu:a100:6"));
    CHECK(has("--comment=frenzy:7:1"));
    CHECK(has("--job-name=frenzy-7"));
    CHECK(has("--no-requeue"));
    frenzy::allocation uneven{0, {{0, 8}, {1, 4}}};
    args = frenzy::sbatch_placement_args(inv, uneven, "frenzy-8", "frenzy:8:1", {});
    CHECK(has("--gpus=a100:12"));
    CHECK_FALSE(has("--gres=gpu:a100:8"));
}

TEST_CASE("batch script: the run command replaces training, the plan travels in the environment") {
    frenzy::plan p;
    p.gpu = "a100-80g";
    p.gpus = 16;
    p.nodes = 2;
    p.parallel.tp = 8;
    p.parallel.dp = 2;
    const auto s = frenzy::batch_script({3, "it's mine", p, {"a100-1", "a100-2"}, "sleep 1", {}});
    CHECK(s.rfind("#!/bin/bash\n", 0) == 0);  // launch/launch.hpp's generator writes every job script
    CHECK(s.find("# frenzy job 3 (it's mine): 16 x a100-80g on 2 node(s) a100-1,a100-2, tp=8 pp=1 dp=2") != std::string::npos);
    CHECK(s.find("export FRENZY_JOB_NAME='it'\\''s mine'\n") != std::string::npos);
    CHECK(s.find("FRENZY_TP=8 FRENZY_PP=1 FRENZY_DP=2") != std::string::npos);
    CHECK(s.find("\nsleep 1\n") != std::string::npos);
    CHECK(s.find("torchrun") == std::string::npos);  // the run command replaces srun + torchrun
    CHECK(s.find("#SBATCH") == std::string::npos);   // the placement travels as sbatch options
    const auto t = frenzy::batch_script({3, "x", p, {}, "", {}});
    // 16 GPUs on 2 nodes: 8 processes per node, the rendezvous on the allocation's first host
    CHECK(t.find("torchrun --nnodes 2 --nproc-per-node 8 --rdzv-id \"$SLURM_JOB_ID\" --rdzv-backend c10d "
                 "--rdzv-endpoint \"$HEAD_NODE:29500\"") != std::string::npos);
    CHECK(t.find("\"${FRENZY_TRAIN_SCRIPT:-train.py}\"\n") != std::string::npos);
}

TEST_CASE("batch script with the job spec: the framework configuration frenzy launch writes for the same plan") {
    using namespace frenzy;
    job_spec j;
    j.name = "llama";
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 64, .total_tokens = 1e9};
    plan p;
    p.gpu = "h100-80g";
    p.gpus = 16;
    p.nodes = 2;
    p.parallel = {.dp = 8, .tp = 2, .sequence_parallel = true, .sharding = sharding::optimizer};
    p.micro_batch = 2;
    p.precision = precision::bf16_mixed;
    auto between = [](const std::string& s, const std::string& from, const std::string& to) {
        const auto a = s.find(from);
        return a == std::string::npos ? std::string{} : s.substr(a, s.find(to, a) - a);
    };
    SECTION("Megatron: the same MEGATRON_ARGS as launch.sbatch, with the plan's layout") {
        p.framework = frameworks::megatron::handle;
        const auto s = batch_script({5, "llama", p, {}, "", j});
        launch_options o;
        o.launcher = frameworks::megatron::launcher_handle;
        const auto launched = launch_files(job_for_plan(j, p), p, o).front().content;
        const auto args = between(s, "MEGATRON_ARGS=(", ")\n");
        CHECK(args.find("--tensor-model-parallel-size 2\n") != std::string::npos);
        CHECK(args.find("--micro-batch-size 2\n") != std::string::npos);  // the plan's, not the job's 1
        CHECK(args == between(launched, "MEGATRON_ARGS=(", ")\n"));
        CHECK(s.find("\"$MEGATRON_LM/pretrain_gpt.py\" \"${MEGATRON_ARGS[@]}\"\n") != std::string::npos);
        CHECK(s.find("export CUDA_DEVICE_MAX_CONNECTIONS=1\n") != std::string::npos);  // tp 2, not Megatron-FSDP
    }
    SECTION("DeepSpeed: ds_config.json written by the script itself, byte for byte launch's") {
        p.framework = frameworks::deepspeed::handle;
        const auto s = batch_script({5, "llama", p, {}, "", j});
        launch_options o;
        o.launcher = frameworks::deepspeed::launcher_handle;
        o.run_command = "\"${FRENZY_TRAIN_SCRIPT:-train.py}\"";  // the user's script, as the backend's generic start names it
        const auto files = launch_files(job_for_plan(j, p), p, o);
        REQUIRE(files.size() == 2);
        CHECK(s.find("cat > \"$LAUNCH_DIR/ds_config.json\" <<'FRENZY_EOF'\n" + files[1].content + "FRENZY_EOF\n") !=
              std::string::npos);
        CHECK(s.find("LAUNCH_DIR=\"${LAUNCH_DIR:-${TMPDIR:-/tmp}/frenzy-job-$SLURM_JOB_ID}\"") != std::string::npos);
    }
    SECTION("a job the launcher cannot express keeps the generic start and says why") {
        p.framework = frameworks::megatron::handle;
        j.runtime.compile = true;  // launch.hpp: "runtime.compile=true has no Megatron-LM argument"
        const auto s = batch_script({5, "llama", p, {}, "", j});
        CHECK(s.find("# no megatron configuration written: runtime.compile=true has no Megatron-LM argument") != std::string::npos);
        CHECK(s.find("\"${FRENZY_TRAIN_SCRIPT:-train.py}\"") != std::string::npos);
    }
}

namespace {
/// A pipeline of Qwen2.5-14B over 4 T4s (stage 0, 7 layers) then 8 V100s (stages 1-2, 21 and 20 layers), tp 4: the
/// planner's plan for seq 4096 on the test cluster (frenzy plan --mixed), written out by hand.
frenzy::plan t4_v100_plan() {
    frenzy::plan m;
    m.groups = {{.gpu = "t4", .gpus = 4, .nodes = 1, .gpus_per_node = 4, .first_stage = 0, .stages = 1, .layers = 7},
                {.gpu = "v100-32g", .gpus = 8, .nodes = 1, .gpus_per_node = 8, .first_stage = 1, .stages = 2, .layers = 41}};
    m.framework = frenzy::frameworks::megatron::handle;
    m.precision = frenzy::precision::fp16_mixed;
    m.parallel = {.dp = 1, .tp = 4, .pp = 3, .sequence_parallel = true, .stage_layers = {7, 21, 20}};
    m.micro_batch = 1;
    frenzy::set_group_totals(m);
    return m;
}
}  // namespace

TEST_CASE("sbatch options of a mixed plan: one heterogeneous job, a component per GPU type after ':'") {
    const auto inv = frenzy::inventory_from_nodes(frenzy::parse_sinfo_json(slurm_file("sinfo_idle.json")),
                                                  frenzy::gres_map::parse("a100=a100-80g,v100=v100-32g,t4=t4"));
    REQUIRE(inv.index("t4-1") == 2);
    REQUIRE(inv.index("v100-1") == 3);
    frenzy::allocation a{1, {{2, 4}}, {frenzy::allocation{2, {{3, 8}}}}};
    const auto args = frenzy::sbatch_placement_args(inv, a, "frenzy-9", "frenzy:9:1", {});
    // The job's name, comment, requeue and output once (Slurm propagates them); each component its nodes and GRES.
    const std::vector<std::string> want{"--job-name=frenzy-9", "--comment=frenzy:9:1", "--no-requeue", "--output=/dev/null",
                                        "--nodes=1", "--ntasks-per-node=1", "--nodelist=t4-1", "--gres=gpu:t4:4", ":",
                                        "--nodes=1", "--ntasks-per-node=1", "--nodelist=v100-1", "--gres=gpu:v100:8"};
    CHECK(args == want);
}

TEST_CASE("batch script of a mixed plan: torchrun on every node of both components, Megatron's layout as launch writes it") {
    using namespace frenzy;
    job_spec j;
    j.name = "qwen";
    j.model = preset("qwen2.5-14b");
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 8, .precision = precision::fp16_mixed, .total_tokens = 1e6};
    j.runtime.framework = frameworks::megatron::handle;
    const auto m = t4_v100_plan();
    batch_request r;
    r.job = 4;
    r.name = "qwen";
    r.nodes = {"t4-1", "v100-1"};
    r.spec = j;
    r.p = m;
    const auto s = batch_script(r);
    CHECK(s.find("# frenzy job 4 (qwen): 4 x t4 + 8 x v100-32g on 2 node(s) t4-1,v100-1, tp=4 pp=3 dp=1 micro_batch=1\n") != std::string::npos);
    CHECK(s.find("export FRENZY_GPU='t4+v100-32g'\n") != std::string::npos);
    // ranks in pipeline order: node 0 (the T4s) runs 4 processes, node 1 (the V100s) 8 (launch/launch.hpp)
    CHECK(s.find("HEAD_NODE=$(scontrol show hostnames \"$SLURM_JOB_NODELIST_HET_GROUP_0\" | head -n 1)") != std::string::npos);
    CHECK(s.find("srun --het-group=0,1 \\\n    bash -c 'nprocs=(4 8); exec torchrun --nnodes 2 ") != std::string::npos);
    CHECK(s.find("#SBATCH") == std::string::npos);  // the placement travels as sbatch options
    launch_options o;
    o.launcher = frameworks::megatron::launcher_handle;
    const auto launched = launch_files(job_for_plan(j, m), m, o).front().content;
    auto args_of = [](const std::string& text) {
        const auto a = text.find("MEGATRON_ARGS=(");
        return a == std::string::npos ? std::string{} : text.substr(a, text.find(")\n", a) - a);
    };
    CHECK(args_of(s).find("--pipeline-model-parallel-layout") != std::string::npos);
    CHECK(args_of(s).find("--tensor-model-parallel-size 4\n") != std::string::npos);
    CHECK(args_of(s) == args_of(launched));
    // with a run command, that command alone
    r.run_command = "sleep 1";
    r.spec.reset();
    const auto t = batch_script(r);
    CHECK(t.find("\nsleep 1\n") != std::string::npos);
    CHECK(t.find("torchrun") == std::string::npos);
}

TEST_CASE("a partition's MaxTime from sinfo (launch --max-time sinfo): the shortest limit listed, infinite as none") {
    CHECK(frenzy::parse_sinfo_time_limits("2-00:00:00\n4:00:00\ninfinite\n") == 4 * 3600);
    CHECK(frenzy::parse_sinfo_time_limits("infinite\n") == 0);
    CHECK_THROWS_WITH(frenzy::parse_sinfo_time_limits("soon\n"), Catch::Contains("sinfo --format=%l") && Catch::Contains("soon"));
    // the command run: sinfo of its bin_dir with the partition, its output parsed (a stub sinfo checks the arguments)
    const auto dir = std::filesystem::temp_directory_path() / ("frenzy_sinfo_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "sinfo") << "#!/bin/sh\n[ \"$*\" = \"--noheader --format=%l --partition=gpu\" ] || exit 9\necho 1-12:00:00\n";
    std::filesystem::permissions(dir / "sinfo", std::filesystem::perms::owner_all);
    frenzy::slurm_options o;
    o.bin_dir = dir.string();
    CHECK(frenzy::slurm_client(o).partition_max_time_s("gpu") == 36 * 3600);
    CHECK_THROWS(frenzy::slurm_client(o).partition_max_time_s("other"));  // sinfo failed: an io_error naming it
    std::filesystem::remove_all(dir);
}
