// Parsing of Slurm 22.05's outputs, recorded from the test cluster (tests/data/slurm/README.md says how).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "frenzy/backend/slurm_json.hpp"
#include "../slurm_data.hpp"

namespace {
std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const frenzy::io_error& e) {
        return e.what();
    }
    return "no error";
}
}  // namespace

TEST_CASE("sinfo --json of the idle test cluster gives its nodes, GPU types and counts") {
    const auto nodes = frenzy::parse_sinfo_json(slurm_file("sinfo_idle.json"));
    // The test cluster's slurm.conf: a100-1, a100-2 (gpu:a100:8), t4-1 (gpu:t4:4), v100-1 (gpu:v100:8); sinfo sorts by name.
    REQUIRE(nodes.size() == 4);
    CHECK(nodes[0].name == "a100-1");
    CHECK(nodes[0].gpus() == frenzy::slurm_gres{"gpu", "a100", 8});
    CHECK(nodes[2].name == "t4-1");
    CHECK(nodes[2].gpus() == frenzy::slurm_gres{"gpu", "t4", 4});
    CHECK(nodes[3].gpus() == frenzy::slurm_gres{"gpu", "v100", 8});
    for (const auto& n : nodes) {
        CHECK(n.state == "idle");
        CHECK(n.usable());
        CHECK(n.gpus_used() == 0);
    }
}

TEST_CASE("sinfo --json while busy: allocated GRES and the drained node") {
    const auto nodes = frenzy::parse_sinfo_json(slurm_file("sinfo_busy.json"));
    REQUIRE(nodes.size() == 4);
    // Job 1 holds gpu:a100:6 on each a100 node, job 2 all four T4s (README.md).
    CHECK(nodes[0].state == "mixed");
    CHECK(nodes[0].gpus_used() == 6);
    CHECK(nodes[1].gpus_used() == 6);
    CHECK(nodes[2].gpus_used() == 4);
    // v100-1 was drained with reason "maint": Slurm 22.05 reports state idle + flag DRAIN.
    CHECK(nodes[3].state == "idle");
    CHECK(nodes[3].has_flag("DRAIN"));
    CHECK(nodes[3].reason == "maint");
    CHECK_FALSE(nodes[3].usable());
    CHECK(nodes[0].usable());
}

TEST_CASE("squeue --json gives job ids, names, comments, states, nodes and GRES") {
    const auto jobs = frenzy::parse_squeue_json(slurm_file("squeue_busy.json"));
    REQUIRE(jobs.size() == 3);
    const auto& j = jobs[0];
    CHECK(j.job_id == 1);
    CHECK(j.name == "frenzy-7");
    CHECK(j.comment == "frenzy:7");
    CHECK(j.state == "RUNNING");
    CHECK(j.nodes == std::vector<std::string>{"a100-1", "a100-2"});
    CHECK(j.node_count == 2);
    CHECK(j.tres_per_node == "gres:gpu:a100:6");
    CHECK(frenzy::parse_gres(j.tres_per_node) == std::vector<frenzy::slurm_gres>{{"gpu", "a100", 6}});
    CHECK(jobs[2].state == "PENDING");
    CHECK(jobs[2].reason == "Resources");
    CHECK(jobs[2].nodes.empty());
    CHECK_FALSE(j.finished());
    CHECK(frenzy::parse_squeue_json(slurm_file("squeue_empty.json")).empty());
}

TEST_CASE("squeue --json of a heterogeneous job: one entry per component, the first one's id the job's") {
    const auto jobs = frenzy::parse_squeue_json(slurm_file("squeue_hetjob.json"));
    REQUIRE(jobs.size() == 2);
    CHECK(jobs[0].job_id == 1);
    CHECK(jobs[0].het_job_id == 1);
    CHECK(jobs[0].het_job_offset == 0);
    CHECK_FALSE(jobs[0].het_follower());
    CHECK(jobs[0].nodes == std::vector<std::string>{"t4-1"});
    CHECK(jobs[1].job_id == 2);
    CHECK(jobs[1].het_job_id == 1);
    CHECK(jobs[1].het_job_offset == 1);
    CHECK(jobs[1].het_follower());
    CHECK(jobs[1].nodes == std::vector<std::string>{"v100-1"});
    CHECK(jobs[1].comment == "frenzy:5:1");  // Slurm propagates the comment: the tag alone does not tell the job
    CHECK(jobs[1].name == "frenzy-5");
    // a job that is not heterogeneous: het_job_id 0
    for (const auto& j : frenzy::parse_squeue_json(slurm_file("squeue_busy.json"))) {
        CHECK(j.het_job_id == 0);
        CHECK_FALSE(j.het_follower());
    }
}

TEST_CASE("scontrol show job -o and sbatch --parsable") {
    const auto j = frenzy::parse_scontrol_job(slurm_file("scontrol_show_job.txt"));
    CHECK(j.job_id == 1);
    CHECK(j.name == "frenzy-7");
    CHECK(j.state == "RUNNING");
    CHECK(j.comment == "frenzy:7");
    CHECK(j.nodes == std::vector<std::string>{"a100-1", "a100-2"});
    CHECK(j.node_count == 2);
    CHECK(j.tres_per_node == "gres:gpu:a100:6");
    const auto node = frenzy::parse_scontrol_record(slurm_file("scontrol_show_node.txt"));
    CHECK(node.at("NodeName") == "a100-1");
    CHECK(node.at("Gres") == "gpu:a100:8");
    CHECK(frenzy::parse_sbatch_parsable("42\n") == 42);
    CHECK(frenzy::parse_sbatch_parsable("sbatch: warning: x\n43;frenzytest\n") == 43);
    CHECK_THROWS_WITH(frenzy::parse_sbatch_parsable(""), Catch::Contains("sbatch --parsable: job id: output is empty"));
    CHECK_THROWS_WITH(frenzy::parse_sbatch_parsable("Submitted batch job 5"), Catch::Contains("is not a count"));
    CHECK_THROWS_WITH(frenzy::parse_scontrol_job("garbage"), Catch::Contains("expected Key=Value pairs"));
    CHECK_THROWS_WITH(frenzy::parse_scontrol_job("JobId=3 JobName=x"), Catch::Contains("JobState: missing"));
}

TEST_CASE("host lists and GRES strings") {
    CHECK(frenzy::expand_hostlist("a100-[1-2,5],t4-1") == std::vector<std::string>{"a100-1", "a100-2", "a100-5", "t4-1"});
    CHECK(frenzy::expand_hostlist("n[08-10]") == std::vector<std::string>{"n08", "n09", "n10"});
    CHECK(frenzy::expand_hostlist("").empty());
    CHECK_THROWS_WITH(frenzy::expand_hostlist("a[1-"), Catch::Contains("unbalanced"));
    CHECK_THROWS_WITH(frenzy::expand_hostlist("a[3-1]"), Catch::Contains("bad range"));
    CHECK(frenzy::parse_gres("gpu:a100:8(S:0-1),gpu:v100:2") ==
          std::vector<frenzy::slurm_gres>{{"gpu", "a100", 8}, {"gpu", "v100", 2}});
    CHECK(frenzy::parse_gres("gpu:4") == std::vector<frenzy::slurm_gres>{{"gpu", "", 4}});
    CHECK(frenzy::parse_gres("(null)").empty());
    CHECK_THROWS_WITH(frenzy::parse_gres("gpu:a:b:c"), Catch::Contains("is not name[:type][:count]"));
}

TEST_CASE("malformed, truncated and partial outputs give errors naming the command and field") {
    CHECK_THAT(error_of([] { frenzy::parse_sinfo_json(slurm_file("sinfo_truncated.json")); }),
               Catch::StartsWith("sinfo --json: output: is not valid JSON"));
    CHECK_THAT(error_of([] { frenzy::parse_squeue_json(slurm_file("squeue_truncated.json")); }),
               Catch::StartsWith("squeue --json: output: is not valid JSON"));
    CHECK(error_of([] { frenzy::parse_sinfo_json(slurm_file("sinfo_missing_gres.json")); }) ==
          "sinfo --json: nodes[1] (a100-2).gres: missing");
    CHECK(error_of([] { frenzy::parse_sinfo_json(slurm_file("sinfo_bad_gres.json")); }) ==
          "sinfo --json: nodes[2] (t4-1).gres: \"four\" is not a count");
    CHECK(error_of([] { frenzy::parse_sinfo_json(slurm_file("sinfo_nodes_not_array.json")); }) ==
          "sinfo --json: nodes: expected an array");
    CHECK(error_of([] { frenzy::parse_squeue_json(slurm_file("squeue_bad_job_id.json")); }) ==
          "squeue --json: jobs[0].job_id: expected an integer, got string");
    CHECK(error_of([] { frenzy::parse_squeue_json(slurm_file("squeue_bad_nodes.json")); }) ==
          "squeue --json: jobs[1] (job 2).nodes: unbalanced '[' in \"t4-[1\"");
    CHECK(error_of([] { frenzy::parse_squeue_json(slurm_file("squeue_slurm_error.json")); }) ==
          "squeue --json: errors: Slurm reported: Unable to contact slurm controller (connect failure)");
    CHECK(error_of([] { frenzy::parse_squeue_json("[]"); }) == "squeue --json: output: expected a JSON object");
    CHECK(error_of([] { frenzy::parse_squeue_json("{}"); }) == "squeue --json: output.jobs: missing");
    CHECK_THAT(error_of([] { frenzy::parse_squeue_json(""); }), Catch::StartsWith("squeue --json: output: is not valid JSON"));
}
