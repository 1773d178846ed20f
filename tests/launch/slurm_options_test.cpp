// launch.sbatch's Slurm settings (partition, account, qos, CPUs, memory) and its requeue before the time limit:
// each written as sbatch reads it, each bad value refused naming its field, and the requeue run by bash with
// scontrol and srun stubbed: USR1 (what `#SBATCH --signal=B:USR1@N` sends) makes the script requeue its own job.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "frenzy/launch/launch.hpp"
#include "frenzy/model/presets.hpp"
#include "shell.hpp"

using namespace frenzy;

namespace slurm_options {

job_spec small_job() {
    job_spec j;
    j.name = "opts";
    j.model = preset("gpt3-125m");
    j.training.seq_len = 2048;
    j.training.global_batch = 64;
    j.training.total_tokens = 64.0 * 2048 * 10;
    j.runtime.framework = frameworks::fsdp::handle;
    j.parallel = {.dp = 8, .sharding = sharding::full};
    return j;
}

plan plan_of(const job_spec& j, double run_s) {
    plan p;
    p.gpu = "h100-80g";
    p.gpus = 8;
    p.nodes = 1;
    p.framework = j.runtime.framework;
    p.precision = j.training.precision;
    p.parallel = j.parallel;
    p.micro_batch = j.training.micro_batch;
    p.est_time = seconds{run_s};
    return p;
}

std::string script(const launch_options& o, double run_s = 3600) {
    const auto j = small_job();
    return launch_files(j, plan_of(j, run_s), o).front().content;
}

launch_options fsdp_options() {
    launch_options o;
    o.launcher = frameworks::fsdp::launcher_handle;
    o.run_command = "train.py";  // the user's script, which fsdp_settings.json configures
    return o;
}

using launch_shell::read_text;


TEST_CASE("Slurm settings: partition, account, qos, CPUs per task and memory are #SBATCH lines, checked") {
    auto o = fsdp_options();
    o.partition = "gpu,gpu-long";
    o.account = "proj_42";
    o.qos = "high";
    o.cpus_per_task = 64;
    o.mem = "0";
    const auto s = script(o);
    for (const char* want : {"#SBATCH --partition=gpu,gpu-long\n", "#SBATCH --account=proj_42\n", "#SBATCH --qos=high\n",
                             "#SBATCH --cpus-per-task=64\n", "#SBATCH --mem=0\n"}) {
        INFO(want);
        CHECK(s.find(want) != std::string::npos);
    }
    // not given: not written (the cluster's defaults hold)
    CHECK(script(fsdp_options()).find("--partition") == std::string::npos);
    CHECK(script(fsdp_options()).find("--mem") == std::string::npos);
    const auto refused = [](auto set, const char* field) {
        auto x = fsdp_options();
        set(x);
        CHECK_THROWS_WITH(script(x), Catch::Contains(field));
    };
    refused([](launch_options& x) { x.partition = "gpu\n#SBATCH --uid=0"; }, "launch_options::partition");
    refused([](launch_options& x) { x.account = "a b"; }, "launch_options::account");
    refused([](launch_options& x) { x.qos = "q;rm"; }, "launch_options::qos");
    refused([](launch_options& x) { x.cpus_per_task = -1; }, "launch_options::cpus_per_task");
    refused([](launch_options& x) { x.mem = "12GB"; }, "launch_options::mem");
    refused([](launch_options& x) { x.mem = "G"; }, "launch_options::mem");
    // bounded (issue 57): 1e15 bytes per node is 909 TiB; a 400-digit count neither overflows nor passes
    refused([](launch_options& x) { x.mem = "910T"; }, "more than 909 TiB per node");
    refused([](launch_options& x) { x.mem = std::string(400, '9'); }, "launch_options::mem");
    refused([](launch_options& x) { x.requeue_signal_s = 70000; }, "launch_options::requeue_signal_s");  // sbatch: <= 65535
    auto m = fsdp_options();
    m.mem = "512G";
    CHECK(script(m).find("#SBATCH --mem=512G\n") != std::string::npos);
    m.mem = "909T";  // the largest whole number of TiB within the bound
    CHECK(script(m).find("#SBATCH --mem=909T\n") != std::string::npos);
}

TEST_CASE("Slurm requeue: --requeue and USR1 before the time limit by default, half the limit at most, 0 turns it off") {
    const auto s = script(fsdp_options());
    CHECK(s.find("#SBATCH --requeue\n") != std::string::npos);
    CHECK(s.find("#SBATCH --signal=B:USR1@300\n") != std::string::npos);
    CHECK(s.find("trap '") != std::string::npos);
    CHECK(s.find(" &\nwait $!\n") != std::string::npos);
    auto o = fsdp_options();
    o.requeue_signal_s = 0;
    const auto off = script(o);
    CHECK(off.find("--requeue") == std::string::npos);
    CHECK(off.find("trap") == std::string::npos);
    // the limit is at least 10 minutes: a signal 301 s before it would requeue the job before it ran half of it
    o.requeue_signal_s = 301;
    CHECK_THROWS_WITH(script(o, 60), Catch::Contains("half the time limit (600 s)"));
    CHECK_NOTHROW(script(o, 3600));
}

TEST_CASE("Slurm requeue: on USR1 the script requeues its own job (bash, scontrol and srun stubbed)") {
    const auto dir = std::filesystem::temp_directory_path() / ("frenzy_requeue_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto o = fsdp_options();
    o.run_command = "bash -c 'sleep 3' run";  // what torchrun starts (ignoring the --settings after it), in the background
    std::ofstream(dir / "launch.sbatch") << script(o);
    // the job: bash on the script; 1 s later the batch shell gets USR1, as Slurm sends it 300 s before the limit
    const std::string cmd = "cd '" + dir.string() + "' && env -i PATH=\"$PATH\" SLURM_JOB_NODELIST=n1 SLURM_JOB_ID=41 "
                            "SLURM_SUBMIT_DIR=. bash -c 'scontrol() { echo \"$@\" >> scontrol.log; }; "
                            "srun() { while [[ $1 == --* ]]; do shift; done; \"$@\"; }; "
                            "torchrun() { while [[ $1 == --* ]]; do shift 2; done; \"$@\"; }; export -f scontrol srun torchrun; "
                            "bash launch.sbatch 2>err.log & p=$!; sleep 1; kill -USR1 $p; wait $p; echo $? > rc'";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const auto calls = read_text(dir / "scontrol.log");
    const auto err = read_text(dir / "err.log");
    const auto rc = read_text(dir / "rc");
    std::filesystem::remove_all(dir);
    INFO("scontrol calls: " << calls << "stderr: " << err);
    CHECK(calls.find("requeue 41\n") != std::string::npos);
    CHECK(err.find("requeued, to resume from the last checkpoint") != std::string::npos);
    CHECK(rc != "0\n");  // the script stops (Slurm starts the job again from the queue)
}

}  // namespace slurm_options

TEST_CASE("Slurm time values as sinfo and sbatch write them read back as seconds (launch --max-time)") {
    for (const auto& [text, s] : {std::pair{"30", 1800.0}, {"30:15", 1815.0}, {"48:00:00", 172800.0}, {"2-00:00:00", 172800.0},
                                  {"1-12", 129600.0}, {"1-12:30", 131400.0}, {"UNLIMITED", 0.0}, {"infinite", 0.0}, {"", 0.0}}) {
        INFO(text);
        CHECK(slurm_time_seconds(text, "--max-time") == s);
    }
    for (const auto* bad : {"2 days", "1-", "-5", "1:2:3:4", "12:xx", "1-2-3"}) {
        INFO(bad);
        CHECK_THROWS_WITH(slurm_time_seconds(bad, "--max-time"), Catch::StartsWith("--max-time=\""));
    }
}

TEST_CASE("launch --max-time: a time limit past the partition's MaxTime is capped at it, with a note, never left for sbatch to refuse (issue 53)") {
    auto o = slurm_options::fsdp_options();
    o.max_time_s = 3600;  // the run needs 3600 s x 1.2
    const auto s = slurm_options::script(o);
    CHECK(s.find("#SBATCH --time=01:00:00\n") != std::string::npos);
    CHECK(s.find("# time limit capped at the partition's MaxTime, 01:00:00 (the run needs 01:12:00): it requeues itself") !=
          std::string::npos);
    CHECK(s.find("#SBATCH --requeue\n") != std::string::npos);
    o.max_time_s = 2 * 86400;  // room enough: the predicted limit, no note
    const auto roomy = slurm_options::script(o);
    CHECK(roomy.find("#SBATCH --time=01:12:00\n") != std::string::npos);
    CHECK(roomy.find("MaxTime") == std::string::npos);
    // without a requeue a capped run would stop unfinished: refused, naming both settings
    o.max_time_s = 3600;
    o.requeue_signal_s = 0;
    CHECK_THROWS_WITH(slurm_options::script(o), Catch::Contains("MaxTime 01:00:00") && Catch::Contains("--max-time") &&
                                     Catch::Contains("--requeue-signal 0"));
}
