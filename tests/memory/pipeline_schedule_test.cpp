// Brute force: a step-by-step simulation of each pipeline schedule (the order Megatron-LM's
// megatron/core/pipeline_parallel/schedules.py @d98e8a64 runs forwards and backwards on one rank) counts the live
// (micro-batch, chunk) forwards after every step, and the closed forms of pipeline_in_flight_counts() must equal
// the simulated maxima for every (pp, vpp, m, rank) tried. Exact integer counts: no tolerance.
#include <catch2/catch.hpp>

#include <algorithm>
#include <utility>
#include <vector>

#include "frenzy/memory/activations.hpp"

using namespace frenzy;

namespace {
struct simulated {
    std::int64_t total = 0;                  ///< max over steps of live forwards, all chunks
    std::vector<std::int64_t> per_chunk;     ///< max over steps of live forwards of each chunk
    std::int64_t weighted = 0;               ///< max over steps of sum_c live_c x weight_c
};

// Megatron get_schedule_table: groups of g micro-batches, chunk-major inside a group.
std::vector<int> chunk_table(std::int64_t m, std::int64_t vpp, std::int64_t g) {
    std::vector<int> t;
    for (std::int64_t lo = 0; lo < m; lo += g) {
        const auto hi = lo + g >= m ? m : lo + g;
        for (std::int64_t c = 0; c < vpp; ++c)
            for (std::int64_t mb = lo; mb < hi; ++mb) t.push_back(static_cast<int>(c));
    }
    return t;
}

// One rank of the interleaved schedule (1F1B is vpp = 1 with W = pp - r - 1; GPipe is W = all).
simulated simulate(std::int64_t pp, std::int64_t vpp, std::int64_t m, std::int64_t rank, pipeline_schedule s,
                   const std::vector<std::int64_t>& weight) {
    const auto total = m * vpp;
    std::int64_t warmup = 0;
    switch (s) {
        case pipeline_schedule::gpipe: warmup = total; break;
        case pipeline_schedule::one_f_one_b: warmup = pp - rank - 1; break;
        case pipeline_schedule::interleaved: warmup = (pp - rank - 1) * 2 + (vpp - 1) * pp; break;
    }
    warmup = std::min(warmup, total);
    const auto table = chunk_table(m, vpp, pp);
    std::vector<std::int64_t> live(static_cast<std::size_t>(vpp), 0);
    simulated r;
    r.per_chunk.assign(static_cast<std::size_t>(vpp), 0);
    auto record = [&] {
        std::int64_t sum = 0, w = 0;
        for (std::size_t c = 0; c < live.size(); ++c) {
            sum += live[c];
            w += live[c] * weight[c];
            r.per_chunk[c] = std::max(r.per_chunk[c], live[c]);
        }
        r.total = std::max(r.total, sum);
        r.weighted = std::max(r.weighted, w);
    };
    std::int64_t f = 0, b = 0;
    auto forward = [&] { ++live[static_cast<std::size_t>(table[static_cast<std::size_t>(f++)])]; record(); };
    // Backward k runs the table's k-th entry with the chunk order reversed (schedules.py get_model_chunk_id).
    auto backward = [&] { --live[static_cast<std::size_t>(vpp - 1 - table[static_cast<std::size_t>(b++)])]; record(); };
    for (std::int64_t k = 0; k < warmup; ++k) forward();
    for (std::int64_t k = 0; k < total - warmup; ++k) {
        forward();
        backward();
    }
    while (b < total) backward();
    return r;
}
}  // namespace

TEST_CASE("per-chunk in-flight counts equal a step-by-step simulation of every schedule") {
    int cases = 0;
    for (std::int64_t pp = 2; pp <= 8; ++pp)
        for (std::int64_t vpp = 1; vpp <= 5; ++vpp)
            for (std::int64_t m = (vpp > 1 ? pp : 1); m <= 6 * pp; m += (vpp > 1 ? pp : 1))
                for (auto s : {pipeline_schedule::one_f_one_b, pipeline_schedule::interleaved, pipeline_schedule::gpipe}) {
                    if ((s == pipeline_schedule::interleaved) != (vpp > 1)) continue;
                    job_spec j;
                    j.model = {.name = "m", .layers = pp * vpp * 2, .hidden = 64, .heads = 4, .ffn_hidden = 256, .vocab = 100};
                    j.training = {.seq_len = 16, .micro_batch = 1, .global_batch = m};
                    j.parallel = {.pp = pp, .vpp = vpp, .schedule = s};
                    validate(j);
                    for (std::int64_t rank = 0; rank < pp; ++rank) {
                        // Chunks weigh 10 each; the loss's chunk on the last rank and the embedding's chunk on
                        // rank 0 weigh 10 + 7 (the extra is live as often as that chunk's forwards).
                        std::vector<std::int64_t> w(static_cast<std::size_t>(vpp), 10);
                        if (rank == pp - 1) w.back() += 7;
                        else if (rank == 0) w.front() += 7;
                        const auto sim = simulate(pp, vpp, m, rank, s, w);
                        // The same with that chunk lighter (10 - 3: it builds one layer fewer): the peak holds the
                        // fewest of it among the steps that hold the most chunks.
                        std::vector<std::int64_t> light(static_cast<std::size_t>(vpp), 10);
                        if (rank == pp - 1) light.back() -= 3;
                        else if (rank == 0) light.front() -= 3;
                        const auto sim_light = simulate(pp, vpp, m, rank, s, light);
                        const auto got = pipeline_in_flight_counts(j, static_cast<int>(rank));
                        INFO("pp " << pp << " vpp " << vpp << " m " << m << " rank " << rank << " schedule "
                                   << to_string(s));
                        CHECK(got.chunks == static_cast<double>(sim.total));
                        if (rank == pp - 1) CHECK(got.last_chunk == static_cast<double>(sim.per_chunk.back()));
                        if (rank == 0) CHECK(got.first_chunk == static_cast<double>(sim.per_chunk.front()));
                        // What the estimator stores: chunks x 10 + (the special chunk's count) x 7.
                        const double special = rank == pp - 1 ? got.last_chunk : rank == 0 ? got.first_chunk : 0.0;
                        CHECK(10 * got.chunks + 7 * special == static_cast<double>(sim.weighted));
                        const double special_min = rank == pp - 1 ? got.last_chunk_min : rank == 0 ? got.first_chunk_min : 0.0;
                        CHECK(10 * got.chunks - 3 * special_min == static_cast<double>(sim_light.weighted));
                        CHECK(in_flight_micro_batches(j, static_cast<int>(rank)) == Approx(sim.total / static_cast<double>(vpp)));
                        ++cases;
                    }
                }
    CHECK(cases > 500);
}

TEST_CASE("interleaved: the last rank holds one micro-batch of the loss, not vpp-fold (hand count)") {
    // pp 4, vpp 3, m 4 (measured_more.csv row 45): last rank W = (4-3-1) x 2 + 2 x 4 = 8 warm-up chunk forwards
    // (4 of chunk 0, 4 of chunk 1), then chunk 2's forward and at once its backward: 9 live chunks, 1 with the loss.
    job_spec j;
    j.model = {.name = "m", .layers = 12, .hidden = 64, .heads = 4, .ffn_hidden = 256, .vocab = 100};
    j.training = {.seq_len = 16, .micro_batch = 1, .global_batch = 4};
    j.parallel = {.pp = 4, .vpp = 3, .schedule = pipeline_schedule::interleaved};
    const auto last = pipeline_in_flight_counts(j, 3);
    CHECK(last.chunks == 9);
    CHECK(last.last_chunk == 1);
    // Rank 0: W = 3 x 2 + 8 = 14 >= m x vpp - 1 = 11: every forward runs before any backward, 4 of each chunk.
    const auto first = pipeline_in_flight_counts(j, 0);
    CHECK(first.chunks == 12);
    CHECK(first.first_chunk == 4);
}
