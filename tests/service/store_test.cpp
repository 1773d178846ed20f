// The SQLite job store: durable across reopening, WAL journal, one event per state change, Slurm tags.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "frenzy/service/store.hpp"

namespace {
struct temp_db {
    std::string path = (std::filesystem::temp_directory_path() / ("frenzy-store-test-" + std::to_string(getpid()) + ".db")).string();
    ~temp_db() {
        for (const char* s : {"", "-wal", "-shm"}) std::remove((path + s).c_str());
    }
};
}  // namespace

TEST_CASE("jobs and their events survive closing and reopening the store") {
    temp_db db;
    std::int64_t a = 0, b = 0;
    {
        frenzy::job_store s(db.path);
        a = s.add_job(R"({"model": {"preset": "gpt2"}})", 10.0);
        b = s.add_job(R"({"model": {"preset": "gpt2-xl"}})", 11.0);
        CHECK(b == a + 1);
        CHECK(std::filesystem::exists(db.path + "-wal"));  // journal_mode=WAL took effect
        s.record_intent(a, 1, R"({"gpu":"a100-80g"})", R"([["a100-1",8]])", 12.0);
        s.record_submitted(a, 42, 13.0);
        s.set_state(a, frenzy::job_states::running, 14.0, "on a100-1");
        s.set_state(b, frenzy::job_states::failed, 15.0, "why", "no feasible plan");
    }
    frenzy::job_store s(db.path);
    const auto ja = s.get(a);
    REQUIRE(ja);
    CHECK(ja->state == "running");
    CHECK(ja->attempt == 1);
    CHECK(ja->slurm_id == 42);
    CHECK(ja->alloc == R"([["a100-1",8]])");
    CHECK(ja->submit_s == 10.0);
    const auto ev = s.events(a);
    REQUIRE(ev.size() == 4);
    CHECK(ev[0].kind == "accepted");
    CHECK(ev[1].kind == "submitting");
    CHECK(ev[1].detail == "frenzy:" + std::to_string(a) + ":1 [[\"a100-1\",8]]");
    CHECK(ev[2].detail == "slurm job 42");
    CHECK(ev[3].t == 14.0);
    CHECK(s.get(b)->reason == "no feasible plan");
    // active() leaves out the terminal job
    REQUIRE(s.active().size() == 1);
    CHECK(s.active()[0].id == a);
    CHECK(s.all().size() == 2);
    CHECK_FALSE(s.get(999));
}

TEST_CASE("Slurm tags round-trip and reject anything else") {
    CHECK(frenzy::slurm_tag(17, 2) == "frenzy:17:2");
    CHECK(frenzy::parse_slurm_tag("frenzy:17:2") == std::pair<std::int64_t, int>{17, 2});
    CHECK(frenzy::parse_slurm_tag("frenzy:17").first == 0);
    CHECK(frenzy::parse_slurm_tag("frenzy:17:2x").first == 0);
    CHECK(frenzy::parse_slurm_tag("other:1:1").first == 0);
    CHECK(frenzy::parse_slurm_tag("frenzy:0:1").first == 0);
}

TEST_CASE("an unopenable store names the path") {
    CHECK_THROWS_WITH(frenzy::job_store("/nonexistent-dir/x.db"), Catch::Contains("state database /nonexistent-dir/x.db: cannot open SQLite database"));
}
