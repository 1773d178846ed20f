#pragma once
// The simulator's options (sim_options: launch costs, failures, speed errors, size regimes, guards) and their
// checks.
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"

namespace frenzy {

/// Which GPU counts a job may run on (docs/results.md "Regimes").
enum class size_regime {
    native,     ///< each policy as built: fcfs, Tiresias and Gavel run the request, HAS and Sia choose (legacy)
    requested,  ///< every policy runs the trace's requested count (doubled until it fits in memory), on the
                ///< requested type when the trace names one, else on any type
    free,       ///< every policy may choose count and type from the job's full plan list; policies that do not
                ///< size jobs (fcfs, Tiresias, Gavel) use efficient_size
};

/// The true speed is at most this many times the predicted one, and at least its inverse: a prediction 10x off is a
/// wrong model rather than an error to simulate, and an unbounded factor (sigma 5 drew e^-15) made one job run
/// millions of scheduling rounds (issue 57: 7 million rounds for 30 jobs under Tiresias).
inline constexpr double max_speed_factor = 10;

struct sim_options {
    double startup_s = 30;   ///< first launch of a job: container start, model load, NCCL init
    double restart_s = 30;   ///< every later launch (after preemption, failure, OOM): also reloads a checkpoint
    /// > 0: every later launch also saves and reloads the job's checkpoint at this storage bandwidth (GB/s),
    /// adding 2 x checkpoint bytes / bandwidth to restart_s (detail::checkpoint_bytes). The same for every policy.
    double checkpoint_GBps = 0;
    std::uint64_t seed = 1;
    /// True speed of job j on GPU type t = predicted x exp(speed_error x z_jt), z_jt standard normal drawn from
    /// `seed` (log-normal factor with median 1), kept within max_speed_factor either way. Policies see predictions
    /// and observed progress only. 0 = oracle.
    double speed_error = 0;
    double measure_after_s = 60;  ///< compute seconds after which a running job's throughput is observed
    size_regime sizes = size_regime::native;
    /// A job whose runs have ended this often in a failure (node failure or out-of-memory crash) fails: "too many
    /// restarts". Preemptions by the policy do not count (max_events bounds a policy that never settles).
    int max_failures = 50;
    std::uint64_t max_events = 50'000'000;  ///< guard: more events than this stops the run with an error
    double node_mtbf_s = 0;      ///< mean time between failures of one node (exponential); 0 = no failures
    double node_repair_s = 3600; ///< a failed node comes back after this
    double checkpoint_interval_s = 0;  ///< 0 = each job's training.checkpoint_interval_s
    bool check_invariants = true;      ///< re-verify orchestrator accounting after every event batch
    bool record_log = false;           ///< keep the event log in sim_result::log
    std::function<void(double done_fraction, double now_s)> progress;  ///< called after event batches
};

namespace detail {
/// Largest simulated time, s (about 31,700 years): inputs that would push events past it are rejected.
inline constexpr double sim_horizon_s = bounds::sim_horizon_s.max;

/// Checks sim_options; throws config_error naming the field, value and rule.
inline void validate(const sim_options& o) {
    auto num = [](double v) { std::ostringstream s; s << v; return s.str(); };
    auto bounded = [&](const char* f, double v, real_bound b) {
        if (!within(v, b))
            throw config_error(std::string("simulate.") + f + "=" + num(v) + " must be in [" + num(b.min) + ", " + num(b.max) + "]");
    };
    bounded("startup_s", o.startup_s, bounds::sim_seconds);
    bounded("restart_s", o.restart_s, bounds::sim_seconds);
    bounded("checkpoint_GBps", o.checkpoint_GBps, bounds::bandwidth_GBps);
    bounded("speed_error", o.speed_error, bounds::speed_sigma);
    bounded("measure_after_s", o.measure_after_s, bounds::sim_seconds);
    if (o.node_mtbf_s != 0) bounded("node_mtbf_s", o.node_mtbf_s, bounds::node_mtbf_s);
    bounded("node_repair_s", o.node_repair_s, bounds::node_repair_s);
    bounded("checkpoint_interval_s", o.checkpoint_interval_s, bounds::sim_seconds);
    if (o.checkpoint_interval_s != 0 && o.checkpoint_interval_s < 1)
        throw config_error("simulate.checkpoint_interval_s=" + num(o.checkpoint_interval_s) + " must be 0 or >= 1");
    if (o.max_failures < 1) throw config_error("simulate.max_failures=" + std::to_string(o.max_failures) + " must be >= 1");
    if (o.max_events < 1) throw config_error("simulate.max_events=0 must be >= 1");
}

/// Bytes a job's checkpoint holds: 16-bit weights (2 B) plus fp32 main weights and Adam's two moments (12 B) per
/// parameter, as Megatron-LM's distributed optimizer saves them (NVIDIA/Megatron-LM
/// megatron/core/optimizer/distrib_optimizer.py, main branch as indexed, commit not pinned: per-parameter fp32
/// "param", "exp_avg", "exp_avg_sq" beside the 16-bit model state dict).
inline double checkpoint_bytes(double parameters) { return 14.0 * parameters; }
}  // namespace detail

}  // namespace frenzy
