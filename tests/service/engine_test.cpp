// serve_engine against a fake Slurm (an in-memory slurm_api): acceptance, placement on the plan's nodes and GRES,
// following job states, node drain -> requeue elsewhere, and reconciliation of the store after a crash.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "frenzy/service/engine.hpp"

namespace {

/// Slurm in memory: nodes as sinfo would list them, jobs as squeue would; sbatch appends a PENDING job.
struct fake_slurm : frenzy::slurm_api {
    frenzy::slurm_options opt;
    mutable std::vector<frenzy::slurm_node> node_list;
    mutable std::vector<frenzy::slurm_job> job_list;
    mutable std::vector<std::vector<std::string>> sbatch_calls;
    mutable std::vector<std::int64_t> scancels;
    mutable std::int64_t next_id = 100;
    mutable bool fail_after_register = false;  ///< sbatch registers the job, then the call fails (lost reply)
    mutable bool down = false;                 ///< controller unreachable

    fake_slurm() {
        node_list = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("t4-1", "t4", 4)};
    }
    static frenzy::slurm_node node(std::string name, std::string type, int n) {
        frenzy::slurm_node x;
        x.name = std::move(name);
        x.state = "idle";
        x.gres = {{"gpu", std::move(type), n}};
        return x;
    }
    const frenzy::slurm_options& options() const override { return opt; }
    std::vector<frenzy::slurm_node> nodes() const override {
        if (down) throw frenzy::io_error("sinfo --json: exit code 1 (Unable to contact slurm controller)");
        return node_list;
    }
    std::vector<frenzy::slurm_job> jobs() const override {
        if (down) throw frenzy::io_error("squeue --json: exit code 1");
        return job_list;
    }
    /// Options separated by ":" are the components of a heterogeneous job: one squeue entry each, ids in a row, the
    /// first one's id the job's, name and comment propagated to the later ones (as Slurm does).
    std::int64_t sbatch(const std::vector<std::string>& args, const std::string&) const override {
        if (down) throw frenzy::io_error("sbatch: exit code 1");
        sbatch_calls.push_back(args);
        std::vector<frenzy::slurm_job> comps(1);
        for (const auto& a : args) {
            if (a == ":") {
                comps.emplace_back();
                continue;
            }
            auto& j = comps.back();
            auto val = [&](const char* k) { return a.rfind(k, 0) == 0 ? a.substr(std::string(k).size()) : std::string{}; };
            if (auto v = val("--comment="); !v.empty()) j.comment = v;
            if (auto v = val("--job-name="); !v.empty()) j.name = v;
            if (auto v = val("--nodelist="); !v.empty()) j.nodes = frenzy::expand_hostlist(v);
            if (auto v = val("--gres="); !v.empty()) j.tres_per_node = "gres:" + v;
        }
        const std::int64_t first = next_id;
        for (std::size_t k = 0; k < comps.size(); ++k) {
            auto& j = comps[k];
            j.job_id = next_id++;
            j.state = "PENDING";
            if (comps.size() > 1) j.het_job_id = first, j.het_job_offset = static_cast<std::int64_t>(k);
            if (k > 0) j.name = comps[0].name, j.comment = comps[0].comment;
            job_list.push_back(j);
        }
        if (fail_after_register) throw frenzy::io_error("sbatch: timed out");
        return first;
    }
    void scancel(std::int64_t id) const override {  // a heterogeneous job's id cancels every component
        scancels.push_back(id);
        for (auto& j : job_list)
            if ((j.job_id == id || j.het_job_id == id) && !j.finished()) j.state = "CANCELLED";
    }
    frenzy::slurm_job* by_comment_prefix(const std::string& p) const {
        for (auto& j : job_list)
            if (j.comment.rfind(p, 0) == 0) return &j;
        return nullptr;
    }
    void set_all(const std::string& from, const std::string& to) const {
        for (auto& j : job_list)
            if (j.state == from) j.state = to;
    }
};

struct temp_db {
    std::string path;
    temp_db() {
        path = (std::filesystem::temp_directory_path() / ("frenzy-engine-test-" + std::to_string(getpid()) + "-" +
                                                          std::to_string(counter()++) + ".db")).string();
    }
    ~temp_db() {
        for (const char* s : {"", "-wal", "-shm"}) std::remove((path + s).c_str());
    }
    static int& counter() {
        static int c = 0;
        return c;
    }
};

const frenzy::gres_map map = frenzy::gres_map::parse("a100=a100-80g,t4=t4");

std::string small_job(const std::string& name, const std::string& limits = "") {
    return R"({"name": ")" + name + R"(", "model": {"preset": "gpt2"}, "training": {"seq_len": 1024, "micro_batch": 1,
              "global_batch": 8, "total_tokens": 2e6, "precision": "fp16-mixed"})" +
           (limits.empty() ? "" : ", \"limits\": " + limits) + "}";
}

nlohmann::ordered_json job_of(frenzy::serve_engine& e, std::int64_t id) {
    auto r = e.job(id);
    REQUIRE(r.status == 200);
    return r.body;
}

}  // namespace

TEST_CASE("a job is accepted, submitted on its plan's nodes and GRES, followed to completion") {
    fake_slurm slurm;
    temp_db db;
    frenzy::job_store store(db.path);
    frenzy::serve_engine eng(slurm, store, map);
    eng.start();
    auto r = eng.submit(small_job("one", R"({"gpu_types": ["a100-80g"]})"));
    REQUIRE(r.status == 201);
    const auto id = r.body["id"].get<std::int64_t>();
    CHECK(job_of(eng, id)["state"] == "queued");
    eng.tick();
    REQUIRE(slurm.sbatch_calls.size() == 1);
    auto j = job_of(eng, id);
    CHECK(j["state"] == "submitted");
    CHECK(j["slurm_job_id"] == 100);
    CHECK(j["plan"]["gpu"] == "a100-80g");
    // The sbatch options name exactly the allocation's nodes, and per-node GRES x nodes = the plan's GPUs.
    const auto& sj = slurm.job_list[0];
    CHECK(sj.comment == "frenzy:" + std::to_string(id) + ":1");
    REQUIRE(sj.nodes.size() == j["allocation"].size());
    int gpus = 0;
    for (std::size_t k = 0; k < sj.nodes.size(); ++k) {
        CHECK(sj.nodes[k] == j["allocation"][k][0].get<std::string>());
        gpus += j["allocation"][k][1].get<int>();
        CHECK(sj.tres_per_node == "gres:gpu:a100:" + std::to_string(j["allocation"][k][1].get<int>()));
    }
    CHECK(gpus == j["plan"]["gpus"].get<int>());
    slurm.set_all("PENDING", "RUNNING");
    eng.tick();
    CHECK(job_of(eng, id)["state"] == "running");
    CHECK(eng.metrics().find("frenzy_running_jobs 1\n") != std::string::npos);
    slurm.set_all("RUNNING", "COMPLETED");
    eng.tick();
    j = job_of(eng, id);
    CHECK(j["state"] == "completed");
    CHECK(slurm.sbatch_calls.size() == 1);
    // events: accepted, submitting, submitted, running, completed
    REQUIRE(j["events"].size() == 5);
    CHECK(j["events"][1]["kind"] == "submitting");
    CHECK(j["events"][4]["kind"] == "completed");
    CHECK(eng.metrics().find("frenzy_gpus_busy{type=\"a100-80g\"} 0\n") != std::string::npos);
}

TEST_CASE("recent decisions, newest first: the start of a job and the refusal of an impossible one") {
    fake_slurm slurm;
    temp_db db;
    frenzy::job_store store(db.path);
    frenzy::serve_engine eng(slurm, store, map);
    eng.start();
    CHECK(eng.decisions().body["decisions"].empty());
    auto r = eng.submit(small_job("first", R"({"gpu_types": ["a100-80g"]})"));
    REQUIRE(r.status == 201);
    eng.tick();
    // llama-3.1-405b fits no GPU type of the fake cluster (16 A100-80G, 4 T4): refused, with the planner's reasons
    REQUIRE(eng.submit(R"({"name": "huge", "model": {"preset": "llama-3.1-405b"}, "training": {"seq_len": 8192, "global_batch": 64, "precision": "fp16-mixed"}})").status == 422);
    const auto d = eng.decisions();
    CHECK(d.status == 200);
    REQUIRE(d.body["decisions"].size() == 2);
    CHECK(d.body["decisions"][0]["decision"] == "refuse");
    CHECK(d.body["decisions"][0]["name"] == "huge");
    CHECK(d.body["decisions"][1]["decision"] == "start");
    CHECK(d.body["decisions"][1]["job"] == r.body["id"]);
    CHECK(d.body["decisions"][1]["t"].get<double>() > 0);
}

TEST_CASE("malformed and impossible jobs are refused and change nothing") {
    fake_slurm slurm;
    temp_db db;
    frenzy::job_store store(db.path);
    frenzy::serve_engine eng(slurm, store, map);
    eng.start();
    auto r = eng.submit("{\"model\": ");
    CHECK(r.status == 400);
    r = eng.submit(R"({"model": {"preset": "gpt2"}, "trainig": {}})");
    CHECK(r.status == 400);
    CHECK_THAT(r.body["error"].get<std::string>(), Catch::Contains("trainig"));
    r = eng.submit(small_job("x", R"({"max_gpu": 4})"));
    CHECK(r.status == 400);
    CHECK_THAT(r.body["error"].get<std::string>(), Catch::Contains("limits.max_gpu is not a known field"));
    r = eng.submit(R"({"model": {"preset": "gpt2"}, "limits": {"deadline": "2h"}})");
    CHECK(r.status == 400);
    CHECK_THAT(r.body["error"].get<std::string>(), Catch::Contains("limits.deadline needs training.total_tokens"));
    // llama-3.1-405b cannot fit on 16 A100-80G or 4 T4 (the planner's reasons come back per type).
    r = eng.submit(R"({"model": {"preset": "llama-3.1-405b"}, "training": {"seq_len": 8192, "global_batch": 64, "precision": "fp16-mixed"}})");
    CHECK(r.status == 422);
    REQUIRE(r.body["infeasible"].size() == 2);
    CHECK_THAT(r.body["infeasible"][0]["reason"].get<std::string>(), Catch::Contains("needs"));
    // A deadline no plan meets: gpt2 with 2e12 tokens takes far longer than 60 s on any plan here.
    r = eng.submit(R"({"model": {"preset": "gpt2"}, "training": {"total_tokens": 2e12, "precision": "fp16-mixed"}, "limits": {"deadline": 60}})");
    CHECK(r.status == 422);
    CHECK(eng.list().body["jobs"].empty());
    CHECK(store.all().empty());
}

TEST_CASE("a drained node's job is cancelled in Slurm and placed again elsewhere") {
    fake_slurm slurm;
    temp_db db;
    frenzy::job_store store(db.path);
    frenzy::serve_engine eng(slurm, store, map);
    eng.start();
    const auto id = eng.submit(small_job("d", R"({"gpu_types": ["a100-80g"], "max_gpus": 8})")).body["id"].get<std::int64_t>();
    eng.tick();
    slurm.set_all("PENDING", "RUNNING");
    eng.tick();
    const auto first = job_of(eng, id);
    REQUIRE(first["state"] == "running");
    const auto node = first["allocation"][0][0].get<std::string>();
    for (auto& n : slurm.node_list)
        if (n.name == node) n.flags = {"DRAIN"};
    eng.tick();  // node seen drained: scancel, requeue, and HAS places it on the other A100 node
    REQUIRE(slurm.scancels == std::vector<std::int64_t>{100});
    REQUIRE(slurm.sbatch_calls.size() == 2);
    const auto second = job_of(eng, id);
    CHECK(second["attempt"] == 2);
    CHECK(second["slurm_job_id"] == 101);
    CHECK(second["allocation"][0][0].get<std::string>() != node);
    CHECK(slurm.job_list[1].comment == "frenzy:" + std::to_string(id) + ":2");
}

TEST_CASE("after a crash: an intent Slurm took is adopted, one it never saw is submitted once more, nothing twice") {
    fake_slurm slurm;
    temp_db db;
    std::int64_t took = 0, lost = 0;
    {
        frenzy::job_store store(db.path);
        frenzy::serve_engine eng(slurm, store, map);
        eng.start();
        took = eng.submit(small_job("took")).body["id"].get<std::int64_t>();
        lost = eng.submit(small_job("lost")).body["id"].get<std::int64_t>();
        // The crash: "took" reached Slurm but the reply was lost; "lost" had its intent written and then the
        // process died before sbatch. Both rows say "submitting" (written by the engine's own pre-sbatch step).
        slurm.fail_after_register = true;
        eng.tick();
        slurm.fail_after_register = false;
    }
    REQUIRE(slurm.sbatch_calls.size() == 2);
    // Make "lost" a job Slurm never saw.
    const std::string lost_tag = "frenzy:" + std::to_string(lost) + ":1";
    std::erase_if(slurm.job_list, [&](const frenzy::slurm_job& j) { return j.comment == lost_tag; });
    {
        frenzy::job_store store(db.path);
        REQUIRE(store.get(took)->state == "submitting");
        REQUIRE(store.get(lost)->state == "submitting");
        frenzy::serve_engine eng(slurm, store, map);
        eng.start();  // reconciliation
        CHECK(job_of(eng, took)["state"] == "submitted");
        CHECK(job_of(eng, took)["slurm_job_id"] == 100);
        CHECK(job_of(eng, lost)["state"] == "queued");
        eng.tick();
        REQUIRE(slurm.sbatch_calls.size() == 3);  // only "lost" again
        CHECK(slurm.job_list.back().comment == "frenzy:" + std::to_string(lost) + ":2");
        slurm.set_all("PENDING", "COMPLETED");
        eng.tick();
        CHECK(job_of(eng, took)["state"] == "completed");
        CHECK(job_of(eng, lost)["state"] == "completed");
        eng.tick();
        CHECK(slurm.sbatch_calls.size() == 3);
    }
}

TEST_CASE("a failed sbatch whose job Slurm did take is confirmed from squeue, not submitted again") {
    fake_slurm slurm;
    temp_db db;
    frenzy::job_store store(db.path);
    frenzy::serve_engine eng(slurm, store, map);
    eng.start();
    const auto id = eng.submit(small_job("t")).body["id"].get<std::int64_t>();
    slurm.fail_after_register = true;
    eng.tick();
    slurm.fail_after_register = false;
    CHECK(job_of(eng, id)["state"] == "submitted");  // "submitting" is shown as submitted
    eng.tick();
    CHECK(slurm.sbatch_calls.size() == 1);
    CHECK(job_of(eng, id)["slurm_job_id"] == 100);
    slurm.set_all("PENDING", "COMPLETED");
    eng.tick();
    CHECK(job_of(eng, id)["state"] == "completed");
}

TEST_CASE("an unreachable controller is reported, and nothing is lost meanwhile") {
    fake_slurm slurm;
    temp_db db;
    frenzy::job_store store(db.path);
    frenzy::serve_engine eng(slurm, store, map);
    eng.start();
    slurm.down = true;
    const auto id = eng.submit(small_job("u")).body["id"].get<std::int64_t>();
    eng.tick();
    CHECK(eng.metrics().find("frenzy_slurm_reachable 0\n") != std::string::npos);
    CHECK(job_of(eng, id)["state"] == "queued");
    slurm.down = false;
    eng.tick();
    CHECK(eng.metrics().find("frenzy_slurm_reachable 1\n") != std::string::npos);
    CHECK(job_of(eng, id)["state"] == "submitted");
}

TEST_CASE("cancel: a queued job at once, a running one through scancel") {
    fake_slurm slurm;
    temp_db db;
    frenzy::job_store store(db.path);
    frenzy::serve_engine eng(slurm, store, map);
    eng.start();
    slurm.down = true;  // keep the first job queued
    const auto q = eng.submit(small_job("q")).body["id"].get<std::int64_t>();
    CHECK(eng.cancel(q).status == 200);
    CHECK(job_of(eng, q)["state"] == "cancelled");
    CHECK(eng.cancel(q).status == 409);
    CHECK(eng.cancel(12345).status == 404);
    slurm.down = false;
    const auto r = eng.submit(small_job("r")).body["id"].get<std::int64_t>();
    eng.tick();
    slurm.set_all("PENDING", "RUNNING");
    eng.tick();
    CHECK(eng.cancel(r).status == 202);
    eng.tick();
    CHECK(slurm.scancels == std::vector<std::int64_t>{100});
    CHECK(job_of(eng, r)["state"] == "cancelled");
}

TEST_CASE("the policy is chosen by name from the registry: fcfs places jobs in arrival order on their smallest plan") {
    fake_slurm slurm;
    temp_db db;
    frenzy::job_store store(db.path);
    frenzy::engine_options eo;
    eo.policy = "fcfs";
    frenzy::serve_engine eng(slurm, store, map, eo);
    CHECK(eng.policy() == "fcfs");
    eng.start();
    const auto a = eng.submit(small_job("first")).body["id"].get<std::int64_t>();
    const auto b = eng.submit(small_job("second")).body["id"].get<std::int64_t>();
    const auto t4 = eng.submit(small_job("t4 only", R"({"gpu_types": ["t4"]})")).body["id"].get<std::int64_t>();
    eng.tick();
    REQUIRE(slurm.sbatch_calls.size() == 2);
    CHECK(slurm.job_list[0].comment == "frenzy:" + std::to_string(a) + ":1");
    CHECK(slurm.job_list[1].comment == "frenzy:" + std::to_string(b) + ":1");
    for (auto id : {a, b}) {
        const auto j = job_of(eng, id);
        CHECK(j["state"] == "submitted");
        CHECK(j["plan"]["gpu"] == "a100-80g");  // the first type with room
        CHECK(j["plan"]["gpus"] == 1);          // fcfs without a user's request: the smallest plan (sched/fcfs.hpp)
    }
    // fcfs offers the T4-only job an A100, where none of its plans is: serve never submits such a launch
    CHECK(job_of(eng, t4)["state"] == "queued");
    slurm.set_all("PENDING", "COMPLETED");
    eng.tick();
    CHECK(job_of(eng, a)["state"] == "completed");
    CHECK(job_of(eng, b)["state"] == "completed");
}

TEST_CASE("an unknown policy name is refused with the registry's choices, without 'all'") {
    fake_slurm slurm;
    temp_db db;
    frenzy::job_store store(db.path);
    frenzy::engine_options eo;
    eo.policy = "lottery";
    try {
        frenzy::serve_engine eng(slurm, store, map, eo);
        FAIL("no error");
    } catch (const frenzy::config_error& e) {
        const std::string m = e.what();
        CHECK(m.find("policy=\"lottery\" is not one of: has | fcfs | tiresias") != std::string::npos);
        CHECK(m.find("all") == std::string::npos);
    }
    eo.policy = "all";
    CHECK_THROWS_AS(frenzy::serve_engine(slurm, store, map, eo), frenzy::config_error);
}

TEST_CASE("the backend is handed the job: the script carries the spec's name and its framework's configuration") {
    std::string script;
    struct capturing : fake_slurm {
        std::string* out = nullptr;
        std::int64_t sbatch(const std::vector<std::string>& args, const std::string& s) const override {
            *out = s;
            return fake_slurm::sbatch(args, s);
        }
    } cap;
    cap.out = &script;
    temp_db db;
    frenzy::job_store store(db.path);
    frenzy::serve_engine eng(cap, store, map);
    eng.start();
    const auto id = eng.submit(small_job("named-job", R"({"gpu_types": ["a100-80g"]})")).body["id"].get<std::int64_t>();
    eng.tick();
    REQUIRE(cap.sbatch_calls.size() == 1);
    CHECK(script.find("frenzy job " + std::to_string(id) + " (named-job)") != std::string::npos);
    CHECK(script.find("FRENZY_JOB_NAME='named-job'") != std::string::npos);
    CHECK(script.find("layout dp=") != std::string::npos);  // the plan's comments, as `frenzy launch` writes them
}

namespace {
/// The test Slurm cluster of tests/slurm (two 8 x A100 nodes, 8 x V100, 4 x T4) with both A100 nodes drained: Qwen2.5-14B
/// at seq 4096 fits neither 8 V100s nor 4 T4s alone, but a pipeline over the two (frenzy plan --mixed: T4 stage 0,
/// V100 stages 1-2, tp 4), and HAS starts it rather than wait for the A100s.
fake_slurm mixed_cluster() {
    fake_slurm s;
    s.node_list = {fake_slurm::node("a100-1", "a100", 8), fake_slurm::node("a100-2", "a100", 8),
                   fake_slurm::node("v100-1", "v100", 8), fake_slurm::node("t4-1", "t4", 4)};
    for (int k : {0, 1}) s.node_list[static_cast<std::size_t>(k)].flags = {"DRAIN"};
    return s;
}
const frenzy::gres_map mixed_map = frenzy::gres_map::parse("a100=a100-80g,v100=v100-32g,t4=t4");
const std::string qwen_job = R"({"name": "qwen", "model": {"preset": "qwen2.5-14b"}, "runtime": {"framework": "megatron"},
    "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 8, "total_tokens": 1e6, "precision": "fp16-mixed"}})";
frenzy::engine_options mixed_options() {
    frenzy::engine_options o;
    o.planning.mixed = true;
    return o;
}
}  // namespace

TEST_CASE("serve --mixed: a pipeline over two GPU types is one heterogeneous job, adopted after a crash, followed to the end") {
    auto slurm = mixed_cluster();
    temp_db db;
    std::int64_t id = 0;
    {
        frenzy::job_store store(db.path);
        frenzy::serve_engine eng(slurm, store, mixed_map, mixed_options());
        eng.start();
        auto r = eng.submit(qwen_job);
        REQUIRE(r.status == 201);
        id = r.body["id"].get<std::int64_t>();
        eng.tick();
        REQUIRE(slurm.sbatch_calls.size() == 1);
        const auto& args = slurm.sbatch_calls[0];
        REQUIRE(std::count(args.begin(), args.end(), ":") == 1);  // two components
        const auto j = job_of(eng, id);
        CHECK(j["state"] == "submitted");
        REQUIRE(j["plan"].contains("groups"));
        CHECK(j["plan"]["groups"][0]["gpu"] == "t4");
        CHECK(j["plan"]["groups"][1]["gpu"] == "v100-32g");
        CHECK(j["allocation"] == nlohmann::ordered_json::parse(R"([["t4-1", 4], ["v100-1", 8]])"));
        // squeue: the job's two components, both tagged; the first one's id is the job's
        REQUIRE(slurm.job_list.size() == 2);
        CHECK(slurm.job_list[0].job_id == j["slurm_job_id"].get<std::int64_t>());
        CHECK(slurm.job_list[1].het_job_id == slurm.job_list[0].job_id);
        CHECK(slurm.job_list[1].nodes == std::vector<std::string>{"v100-1"});
        CHECK(eng.metrics().find("frenzy_gpus_busy{type=\"t4\"} 4\n") != std::string::npos);
        CHECK(eng.metrics().find("frenzy_gpus_busy{type=\"v100-32g\"} 8\n") != std::string::npos);
        const auto d = eng.decisions().body["decisions"][0];
        CHECK(d["decision"] == "start");
        CHECK(d["why"].get<std::string>().find("pipeline over several types") != std::string::npos);
    }
    slurm.set_all("PENDING", "RUNNING");
    {
        // the crash: a new engine on the same store adopts the running heterogeneous job, GPUs of both types held
        frenzy::job_store store(db.path);
        frenzy::serve_engine eng(slurm, store, mixed_map, mixed_options());
        eng.start();
        eng.tick();
        CHECK(slurm.sbatch_calls.size() == 1);
        CHECK(slurm.scancels.empty());  // the second component is no orphan
        auto j = job_of(eng, id);
        CHECK(j["state"] == "running");
        CHECK(j["plan"]["groups"].size() == 2);
        CHECK(eng.metrics().find("frenzy_gpus_busy{type=\"t4\"} 4\n") != std::string::npos);
        CHECK(eng.metrics().find("frenzy_gpus_busy{type=\"v100-32g\"} 8\n") != std::string::npos);
        slurm.set_all("RUNNING", "COMPLETED");
        eng.tick();
        CHECK(job_of(eng, id)["state"] == "completed");
        CHECK(eng.metrics().find("frenzy_gpus_busy{type=\"v100-32g\"} 0\n") != std::string::npos);
        CHECK(slurm.sbatch_calls.size() == 1);
    }
}

TEST_CASE("serve without --mixed: the same job waits for the A100s") {
    auto slurm = mixed_cluster();
    temp_db db;
    frenzy::job_store store(db.path);
    frenzy::serve_engine eng(slurm, store, mixed_map);
    eng.start();
    const auto id = eng.submit(qwen_job).body["id"].get<std::int64_t>();
    eng.tick();
    CHECK(slurm.sbatch_calls.empty());
    CHECK(job_of(eng, id)["state"] == "queued");
}

TEST_CASE("squeue's heterogeneous job is its first component: by id and by tag, the later one left out") {
    const auto sjobs = frenzy::parse_squeue_json(R"({"jobs": [
        {"job_id": 1, "het_job_id": 1, "het_job_offset": 0, "name": "frenzy-5", "comment": "frenzy:5:1", "job_state": "RUNNING", "nodes": "t4-1"},
        {"job_id": 2, "het_job_id": 1, "het_job_offset": 1, "name": "frenzy-5", "comment": "frenzy:5:1", "job_state": "RUNNING", "nodes": "v100-1"},
        {"job_id": 3, "het_job_id": 0, "het_job_offset": 0, "name": "frenzy-6", "comment": "frenzy:6:1", "job_state": "PENDING", "nodes": ""}]})");
    const frenzy::slurm_index idx(sjobs);
    CHECK(idx.by_id.size() == 2);
    CHECK(idx.by_id.count(2) == 0);
    REQUIRE(idx.by_tag.count("frenzy:5:1") == 1);
    CHECK(idx.by_tag.at("frenzy:5:1")->job_id == 1);
    CHECK(idx.by_tag.at("frenzy:6:1")->job_id == 3);
}

TEST_CASE("a mixed plan's stored allocation reads back into its components by GPU type, and nothing else does") {
    const auto inv = frenzy::inventory_from_nodes({fake_slurm::node("a100-1", "a100", 8), fake_slurm::node("v100-1", "v100", 8),
                                                   fake_slurm::node("t4-1", "t4", 4)}, mixed_map);
    const frenzy::cluster_state cs(inv.spec);
    const int t4 = cs.type_index("t4"), v100 = cs.type_index("v100-32g"), a100 = cs.type_index("a100-80g");
    const auto a = frenzy::allocation_from_text(R"([["t4-1", 4], ["v100-1", 8]])", {t4, v100}, inv, cs);
    REQUIRE(a);
    CHECK(a->type == t4);
    CHECK(a->parts == std::vector<frenzy::node_share>{{2, 4}});
    REQUIRE(a->next.size() == 1);
    CHECK(a->next[0].type == v100);
    CHECK(a->gpus() == 12);
    CHECK(frenzy::allocation_json(*a, inv).dump() == R"([["t4-1",4],["v100-1",8]])");
    CHECK_FALSE(frenzy::allocation_from_text(R"([["t4-1", 4], ["a100-1", 8]])", {t4, v100}, inv, cs));  // a100 is no group's type
    CHECK_FALSE(frenzy::allocation_from_text(R"([["t4-1", 4]])", {t4, v100}, inv, cs));              // a group without nodes
    CHECK_FALSE(frenzy::allocation_from_text(R"([["gone-1", 4]])", {t4}, inv, cs));
    CHECK(frenzy::allocation_from_text(R"([["a100-1", 8]])", {a100}, inv, cs)->gpus() == 8);
}
