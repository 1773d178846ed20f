// HAS's moves (sched/has_moves.hpp) as the simulator charges them, in scenarios small enough to derive by hand: a
// move's cost from the job's checkpoint bytes and the cluster's storage bandwidth, a move to a faster type that frees
// up, a move that would not pay off, the bound on moves, and a shrink that starts a waiting job.
#include <catch2/catch.hpp>

#include "../sched/fixtures.hpp"
#include "frenzy/memory/model_states.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/sched/has.hpp"
#include "frenzy/sched/policy_registry.hpp"
#include "frenzy/sim/simulator.hpp"

using namespace frenzy;
using namespace frenzy_test;

namespace moves_test {

/// Llama-2-7B's parameters as Meta's Hugging Face checkpoint counts them (the model card's "7B").
constexpr double kLlama7bParams = 6738415616.0;
/// Its move on the default cluster move costs: save + load of 14 B per parameter (bf16 weights, fp32 master and two
/// Adam moments) at 5 GB/s each, plus 30 s restart and 30 s framework start-up.
constexpr double kMoveS = 2.0 * 14.0 * kLlama7bParams / 5e9 + 30.0 + 30.0;

trace_job job7b(const std::string& id, double submit, std::int64_t cls, double tokens) {
    auto j = mk_job(id, submit, cls, tokens);
    j.model = "llama-2-7b";
    return j;
}

has_options with_moves(int max_moves = 2) {
    has_options o;
    o.moves = true;
    o.max_moves = max_moves;
    return o;
}

/// A 8 x A100 node busy with job B until t = 10,000 s, and job A arriving at t = 1 that starts on 4 V100s (12,000 s
/// there beats waiting for the A100s: 10,010 + 3,000 s). `a_tokens` sets A's length.
sim_result faster_type_frees_up(double a_tokens, has_options o) {
    auto cluster = mk_cluster({{"a", "a100-80g", 8, 1}, {"v", "v100-32g", 8, 1}});
    std::vector<trace_job> trace{job7b("B", 0, 2, 1000.0 * 9990), job7b("A", 1, 1, a_tokens)};
    auto plans = table_provider({{1, {mk_plan("v100-32g", 4, 1000), mk_plan("a100-80g", 4, 4000)}},
                                 {2, {mk_plan("a100-80g", 8, 1000)}}});
    return simulate(cluster, trace, plans, has_scheduler<>(o), opts());
}

}  // namespace moves_test

using namespace moves_test;

TEST_CASE("moves: a 7B job's move cost is its checkpoint bytes over the storage bandwidth, twice, plus restart and start-up") {
    job_spec j;
    j.model = preset("llama-2-7b");
    j.training.seq_len = 4096;
    // 14 B per parameter: 2 (bf16 weights) + 4 (fp32 master) + 2 x 4 (Adam moments), Megatron's distributed optimizer.
    CHECK(checkpoint_state_bytes(j) == Approx(14.0 * kLlama7bParams).epsilon(1e-12));
    const move_costs m;  // the documented defaults
    CHECK(m.storage_GBps == 5);
    // save alone: 94.34 GB at 5 GB/s = 18.868 s
    CHECK(checkpoint_state_bytes(j) / (m.storage_GBps * 1e9) == Approx(18.8675637248).epsilon(1e-10));
    CHECK(move_seconds(m, checkpoint_state_bytes(j)) == Approx(kMoveS).epsilon(1e-12));
}

TEST_CASE("moves: when a faster type frees up, the job moves and ends earlier by the predicted amount") {
    // At 10,000 s A has computed 9,989 s of its 12,000 s on the V100s: 2,011 s left (ends at 12,011). On 4 A100s
    // (4x faster) after the move: 10,000 + move + 2,011 / 4. Gain 1,410 s > 0.2 x 2,011 s: it moves.
    const auto r = faster_type_frees_up(1000.0 * 12000, with_moves());
    const auto& a = rec(r, "A");
    CHECK(a.moves == 1);
    CHECK(a.preemptions == 0);  // a move is not counted as a preemption
    CHECK(a.moving_s == Approx(kMoveS).epsilon(1e-12));
    CHECK(a.end_s == Approx(10000 + kMoveS + 2011.0 / 4).epsilon(eps));
    CHECK(12011 - a.end_s == Approx(2011 - kMoveS - 2011.0 / 4).epsilon(eps));  // the predicted saving
    CHECK(a.gpu == "a100-80g");
    CHECK(r.metrics.moves == 1);
    CHECK(r.metrics.moving_s == Approx(kMoveS).epsilon(1e-12));
    // without moves it stays on the V100s and ends at 12,011 s
    CHECK(rec(faster_type_frees_up(1000.0 * 12000, has_options{}), "A").end_s == Approx(12011).epsilon(eps));
}

TEST_CASE("moves: a move that would not pay off is not made") {
    // A ends on the V100s at 10,111 s: 111 s left at 10,000 s, and the move alone takes 97.7 s (+ 27.75 s of work).
    const auto r = faster_type_frees_up(1000.0 * 10100, with_moves());
    CHECK(rec(r, "A").moves == 0);
    CHECK(rec(r, "A").end_s == Approx(10111).epsilon(eps));
    CHECK(r.metrics.moving_s == 0);
}

TEST_CASE("moves: a job moves at most max_moves times, and a move pays off when the new run catches up") {
    const auto r = faster_type_frees_up(1000.0 * 12000, with_moves(0));
    CHECK(rec(r, "A").moves == 0);
    CHECK(rec(r, "A").end_s == Approx(12011).epsilon(eps));
    // 2,011 s left; 502.75 s of work after a 97.735 s move: caught up after move x 2,011 / (2,011 - 502.75) = 4/3 move
    CHECK(detail::has_mover::payoff_s(100, kMoveS, 2011, 502.75) == Approx(100 + kMoveS * 4.0 / 3.0).epsilon(1e-12));
    CHECK(detail::has_mover::payoff_s(100, kMoveS, 500, 600) == std::numeric_limits<double>::infinity());
}

TEST_CASE("moves: a running job shrinks so that a waiting job starts, and grows back when it ends") {
    // V runs alone on 8 A100s (8,000 tok/s; 4 GPUs: 6,000 tok/s). W (4 GPUs only, 1,000 s of work) arrives at
    // 1,000 s. Without moves (and without preemption) W waits for V's end at 20,010 s. With moves V shrinks to 4:
    // W's start 19,010 s earlier outweighs V's delay (move + 25,346.7 - 19,010 s) by more than 0.2 x 19,010 s.
    auto cluster = mk_cluster({{"a", "a100-80g", 8, 1}});
    std::vector<trace_job> trace{job7b("V", 0, 3, 8000.0 * 20000), job7b("W", 1000, 4, 4000.0 * 1000)};
    auto plans = table_provider({{3, {mk_plan("a100-80g", 8, 8000), mk_plan("a100-80g", 4, 6000)}},
                                 {4, {mk_plan("a100-80g", 4, 4000)}}});
    auto o = with_moves();
    o.preempt = false;
    const auto r = simulate(cluster, trace, plans, has_scheduler<>(o), opts());
    CHECK(rec(r, "W").first_start_s == Approx(1000).epsilon(eps));
    CHECK(rec(r, "W").end_s == Approx(2010).epsilon(eps));
    // V: 990 s at 8,000 tok/s, then a move and 6,000 tok/s until 2,010 s, then a move back to 8 GPUs.
    const double left_at_2010 = 8000.0 * 20000 - 990 * 8000.0 - (2010 - 1000 - kMoveS) * 6000.0;
    CHECK(rec(r, "V").moves == 2);
    CHECK(rec(r, "V").moving_s == Approx(2 * kMoveS).epsilon(1e-12));
    CHECK(rec(r, "V").end_s == Approx(2010 + kMoveS + left_at_2010 / 8000).epsilon(eps));
    o.moves = false;
    const auto base = simulate(cluster, trace, plans, has_scheduler<>(o), opts());
    CHECK(rec(base, "W").end_s == Approx(20010 + 10 + 1000).epsilon(eps));
    CHECK(base.metrics.moves == 0);
}

TEST_CASE("moves: lost work since the last checkpoint is charged when the cluster checkpoints on an interval") {
    // At 10,000 s A has computed 9,989 s on the V100s (2,011 s left). Checkpoints every 1,000 s of computing: 989 s
    // of it since the last one, done again on the A100s: 97.7 + (2,011 + 989) / 4 = 847.7 s < 0.8 x 2,011 s, moved.
    auto cluster = mk_cluster({{"a", "a100-80g", 8, 1}, {"v", "v100-32g", 8, 1}});
    cluster.moves.checkpoint_interval_s = 1000;
    std::vector<trace_job> trace{job7b("B", 0, 2, 1000.0 * 9990), job7b("A", 1, 1, 1000.0 * 12000)};
    auto plans = table_provider({{1, {mk_plan("v100-32g", 4, 1000), mk_plan("a100-80g", 4, 4000)}},
                                 {2, {mk_plan("a100-80g", 8, 1000)}}});
    const auto moved = simulate(cluster, trace, plans, has_scheduler<>(with_moves()), opts());
    CHECK(rec(moved, "A").moves == 1);
    CHECK(rec(moved, "A").moving_s == Approx(kMoveS + 989).epsilon(1e-12));
    CHECK(rec(moved, "A").end_s == Approx(10000 + kMoveS + (2011.0 + 989) / 4).epsilon(eps));
    // Every 5,000 s: 4,989 s lost, 97.7 + 7,000 / 4 = 1,847.7 s > 0.8 x 2,011 s: it stays and ends at 12,011 s.
    cluster.moves.checkpoint_interval_s = 5000;
    const auto stayed = simulate(cluster, trace, plans, has_scheduler<>(with_moves()), opts());
    CHECK(rec(stayed, "A").moves == 0);
    CHECK(rec(stayed, "A").end_s == Approx(12011).epsilon(eps));
}

TEST_CASE("rubick: re-plans a running job onto the idle GPUs of its type, paying the move") {
    // R runs on 4 A100s (4,000 tok/s) beside B (4 A100s, ends at 1,000 s). When B ends, R re-plans on 8 A100s
    // (7,000 tok/s): 19,010 s left on 4 GPUs, 97.7 + 76.04e6 / 7,000 = 10,960 s on 8, more than 10% earlier.
    auto cluster = mk_cluster({{"a", "a100-80g", 8, 1}});
    std::vector<trace_job> trace{job7b("B", 0, 2, 4000.0 * 990), job7b("R", 0, 1, 4000.0 * 20000)};
    auto plans = table_provider({{1, {mk_plan("a100-80g", 4, 4000), mk_plan("a100-80g", 8, 7000)}},
                                 {2, {mk_plan("a100-80g", 4, 4000)}}});
    trace[1].requested_gpus = 4;
    const auto r = simulate(cluster, trace, plans, make_scheduler("rubick"), opts());
    CHECK(rec(r, "B").end_s == Approx(1000).epsilon(eps));
    CHECK(rec(r, "R").moves == 1);
    const double left = 4000.0 * 20000 - 990 * 4000.0;
    CHECK(rec(r, "R").end_s == Approx(1000 + kMoveS + left / 7000).epsilon(eps));
}
