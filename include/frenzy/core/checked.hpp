#pragma once
// The one validated-number layer: every number that enters Frenzy (JSON, CSV, CLI flags, HF configs, Slurm output,
// HTTP bodies) goes through these helpers. Integers are parsed with overflow detection, floats must be finite,
// every field kind has documented bounds (docs/hardening.md), products of degrees and sizes are checked before use,
// and every error is "FIELD=VALUE RULE" (field_error). Every bound on an input number lives here (`bounds::`):
// front ends (the CLI's flag validators, Python, serve) use these constants, never a literal of their own.
// Public API: every layer and front end calls these by their frenzy:: names (frenzy::detail:: holds aliases only).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "frenzy/core/error.hpp"

namespace frenzy {

/// Printable, bounded form of untrusted text: invalid UTF-8 bytes and control characters (C0, DEL and C1) become
/// \xNN escapes and the result is cut after `max_chars` characters ("..." appended), so an error message never carries raw bytes or
/// megabytes of input.
inline std::string printable(std::string_view s, std::size_t max_chars = 80) {
    std::string out;
    std::size_t i = 0, shown = 0;
    auto hex = [&](unsigned char c) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(c));
        out += buf;
    };
    while (i < s.size()) {
        if (shown >= max_chars) { out += "..."; break; }
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        bool ok = n > 0 && i + n <= s.size();
        for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
        bool c1 = false;    // U+0080-U+009F: the C1 control characters (NEL ends a line for some readers)
        if (ok && n > 1) {  // reject overlong forms, surrogates and code points past U+10FFFF
            std::uint32_t cp = c & (0x7F >> n);
            for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
            ok = !(n == 2 && cp < 0x80) && !(n == 3 && cp < 0x800) && !(n == 4 && cp < 0x10000) &&
                 !(cp >= 0xD800 && cp <= 0xDFFF) && cp <= 0x10FFFF;
            c1 = ok && n == 2 && cp <= 0x9F;
        }
        if (c1) { hex(c); hex(static_cast<unsigned char>(s[i + 1])); i += 2; }
        else if (!ok) { hex(c); ++i; }
        else if (n == 1 && (c < 0x20 || c == 0x7F)) { hex(c); ++i; }
        else { out.append(s.substr(i, n)); i += n; }
        ++shown;
    }
    return out;
}

/// True when `s` is valid UTF-8 (what JSON output may carry).
inline bool valid_utf8(std::string_view s) {
    const auto p = printable(s, std::numeric_limits<std::size_t>::max());
    return p.size() == s.size() && p.find("\\x") == std::string::npos;
}

/// Shortest round-trip text of a double ("nan", "inf" for non-finite values).
inline std::string number_text(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<std::int64_t>(v));
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

/// The message every input error has: "FIELD=VALUE RULE", e.g. "parallel.dp=0 must be at least 1".
/// `value` is untrusted text (it is made printable and truncated); `path` names file, line or JSON path and field.
inline std::string field_message(std::string_view path, std::string_view value, std::string_view rule) {
    return std::string(path) + "=" + printable(value) + " " + std::string(rule);
}
inline config_error field_error(std::string_view path, std::string_view value, std::string_view rule) {
    return config_error(field_message(path, value, rule));
}
inline config_error field_error(std::string_view path, std::int64_t value, std::string_view rule) {
    return field_error(path, std::to_string(value), rule);
}
inline config_error field_error(std::string_view path, double value, std::string_view rule) {
    return field_error(path, number_text(value), rule);
}

/// A name that written files carry as text (a job's or model's name in a launch script's comments and labels):
/// at most 256 bytes of valid UTF-8 without control characters, since a newline or carriage return would end the
/// comment and start a line of code.
inline void check_label(std::string_view field, std::string_view v) {
    // printable ASCII is its own printable form: checked without a copy (validate(job) runs on every estimate)
    const auto ascii = [](char ch) { return ch >= 0x20 && ch < 0x7F; };
    if (v.size() > 256 ||
        (!std::all_of(v.begin(), v.end(), ascii) && printable(v, std::numeric_limits<std::size_t>::max()) != v))
        throw field_error(field, v, "must be at most 256 bytes of UTF-8 text without control characters "
                                    "(launch scripts carry it as a label)");
}

// ---- bounds per field kind ----------------------------------------------------------------------------------------

/// Inclusive range of an integer field kind.
struct int_bound {
    std::int64_t min, max;
};
/// Inclusive range of a floating-point field kind (values must also be finite).
struct real_bound {
    double min, max;
};

/// Documented bounds (docs/hardening.md "Bounds"). They are far above any real model or cluster, and low enough
/// that every product the library forms from them (tokens x hidden, layers x parameters, dp x tp x pp x cp) stays
/// exact in double and int64 arithmetic, and that no work loops over a number's magnitude.
namespace bounds {
inline constexpr int_bound layers{1, 100'000};             ///< largest published LLMs: ~200
inline constexpr int_bound hidden{1, 1 << 20};             ///< model width; largest published: ~3e4
inline constexpr int_bound heads{1, 1 << 16};              ///< attention heads, kv heads, head_dim
inline constexpr int_bound ffn_hidden{1, 1 << 22};
inline constexpr int_bound vocab{1, 1 << 24};              ///< 16.7M entries; largest published: ~2.6e5
inline constexpr int_bound positions{0, 1 << 26};          ///< learned position table (0 = seq_len)
inline constexpr int_bound experts{0, 1 << 16};            ///< MoE experts, top_k, shared experts
inline constexpr int_bound seq_len{1, 1 << 26};            ///< 67M tokens per sequence
inline constexpr int_bound micro_batch{1, 1 << 20};
inline constexpr int_bound global_batch{1, 1 << 30};       ///< sequences per optimizer step
inline constexpr int_bound recipe_tokens{1, std::int64_t{1} << 50};  ///< tokens per micro-batch or step (torchtitan)
inline constexpr int_bound steps{0, std::int64_t{1} << 40};         ///< optimizer steps of a run
inline constexpr int_bound degree{1, 1 << 20};             ///< dp, tp, pp, vpp, cp, ep
inline constexpr int_bound gpus{1, 1 << 24};               ///< GPUs of one job (dp x tp x pp x cp), of a cluster
inline constexpr int_bound gpu_limit{0, gpus.max};         ///< a limit on GPUs per plan (0 = what the cluster has)
inline constexpr int_bound gpus_per_node{1, 1024};
inline constexpr int_bound node_count{1, 1'000'000};
inline constexpr int_bound chunks{1, 1 << 16};             ///< runtime.loss_chunks
/// runtime.empty_unused_memory_level: Megatron's values of --empty-unused-memory-level
/// (megatron/training/config/training_config.py@d98e8a64: Literal[0, 1, 2])
inline constexpr int_bound empty_cache_level{0, 2};
inline constexpr real_bound memory_mib{1e-3, 1 << 24};     ///< per GPU; 16 TiB
inline constexpr real_bound tflops{0, 1e6};                ///< dense peak per GPU
inline constexpr real_bound watts{0, 1e5};                 ///< a GPU's board power or power cap (0 = not stated)
inline constexpr real_bound host_memory_GiB{0, 1e7};        ///< GiB of host memory per node (0 = not stated)
inline constexpr real_bound bandwidth_GBps{0, 1e6};        ///< GB/s: HBM, intra- and inter-node links
inline constexpr real_bound price{0, 1e6};                 ///< dollars per GPU-hour
inline constexpr real_bound seconds{0, 1e10};              ///< times and durations (~317 years)
inline constexpr real_bound tokens{0, 1e18};               ///< training budgets
inline constexpr real_bound fraction{0, 1};                ///< margins, efficiencies, tolerances
inline constexpr real_bound memory_bytes{0, 1e15};         ///< measured peaks (~1 PB)
inline constexpr int_bound lora_rank{1, 1 << 16};          ///< training.finetune.rank
inline constexpr int_bound frozen_layers{0, layers.max};   ///< training.finetune.frozen_layers
inline constexpr int_bound shown{0, 1 << 20};              ///< results listed (--top N; 0 = the default count)
inline constexpr real_bound relative_error{0, 10};         ///< tolerances on a relative error (validate --tolerance)
inline constexpr real_bound inverse_efficiency{1, 1e6};    ///< calibration: measured / ideal time
inline constexpr real_bound penalty{0, 1e9};               ///< calibration: weight-traffic multiplier, width penalty
inline constexpr real_bound tokens_per_s{0, 1e9};          ///< measured tokens/s per GPU
inline constexpr int_bound port{1, 65535};                 ///< TCP ports
inline constexpr int_bound cpus_per_task{1, 1 << 16};      ///< Slurm --cpus-per-task of a launch
/// Slurm --signal=...@TIME: sbatch reads TIME as at most 65535 s (SchedMD/slurm src/common/proc_args.c get_signal_opts).
inline constexpr real_bound slurm_signal_s{1, 65535};
inline constexpr real_bound softcap{0, 1e6};               ///< Gemma's logit soft-capping value
inline constexpr real_bound rope_theta{1, 1e12};            ///< rotary base (published: 1e4 .. 1e7)
inline constexpr real_bound rope_factor{1, 1e6};            ///< rotary scaling factor (published: 2 .. 64)
inline constexpr real_bound norm_eps{1e-12, 1e-1};          ///< LayerNorm / RMSNorm epsilon (published: 1e-6 .. 1e-5)
inline constexpr real_bound duration{0, 3.2e9};            ///< a duration written as text ("90m"): about 100 years
inline constexpr int_bound year{1900, 9999};               ///< a trace's timestamps (YYYY-MM-DD)
inline constexpr int_bound priority{-1'000'000, 1'000'000}; ///< a served job's limits.priority
// The simulator's and the schedulers' knobs (sim/options.hpp, `frenzy simulate`).
inline constexpr real_bound sim_seconds{0, 1e9};           ///< start-up, restart, checkpoint interval (~31 years)
/// A round-based scheduler's round (Gavel): its artifact uses 6 min, Sia 60 s; below 10 s a round is shorter than a
/// job's start-up, and the simulation of a trace takes rounds x jobs LP solves (`--gavel-round 0.001` ran for minutes).
inline constexpr real_bound sched_round_s{10, 1e6};
inline constexpr real_bound node_repair_s{1, 1e9};         ///< time until a failed node is back
inline constexpr real_bound node_mtbf_s{1, 1e12};          ///< a node's mean time between failures (0 = none)
inline constexpr real_bound sim_horizon_s{0, 1e12};        ///< simulated time, a trace's submit times (~31,700 years)
inline constexpr real_bound hours{0, 1e6};                 ///< the older hour spellings (--mtbf-h; ~114 years)
inline constexpr real_bound repair_hours{1e-6, 1e6};       ///< --repair-h
inline constexpr real_bound speed_sigma{0, 5};             ///< log-normal sigma of a job's true/predicted speed
inline constexpr real_bound rate{0, 1e6};                  ///< dimensionless rates: Tiresias' promotion, Sia's lambda
inline constexpr real_bound preempt_factor{1, 1e6};        ///< HAS: remaining time over the waiting job's, to preempt
inline constexpr real_bound gpu_hours{1e-6, 1e9};          ///< Tiresias' queue limits of attained service
inline constexpr real_bound exponent{-10, 10};             ///< Sia's goodput exponent p
inline constexpr int_bound events{1, std::int64_t{1} << 40}; ///< events one simulation may process
inline constexpr int_bound restarts{1, 1'000'000};         ///< failed runs of a job before it fails for good
inline constexpr int_bound scan{0, 1'000'000};             ///< HAS: waiting jobs scanned, reserved, preempted for
inline constexpr int_bound solver_nodes{0, 100'000'000};   ///< Sia: branch-and-bound subproblems per round
inline constexpr int_bound trace_gpus{1, 1'000'000};       ///< GPUs of one row of a Philly-format trace
inline constexpr std::uint64_t input_bytes = 256ull << 20; ///< largest input file read by default (256 MiB)
inline constexpr std::uint64_t json_bytes = 64ull << 20;   ///< largest JSON file read (64 MiB)
inline constexpr std::size_t json_depth = 64;              ///< deepest nesting of a JSON document
inline constexpr std::uint64_t request_bytes = 1u << 20;   ///< a request body or a file sent to `frenzy serve`
inline constexpr std::size_t gpu_type_count = 1024;        ///< GPU types in one file
inline constexpr std::size_t node_groups = 10000;          ///< node groups of a cluster file
inline constexpr int hostlist_range = 100000;              ///< names one Slurm hostlist range a[lo-hi] expands to
/// A launch script's expansions (io/launcher_shell.hpp): one value or array at most 1 MiB (launch scripts hold
/// kilobytes), an array at most 65,536 elements (a Megatron argument list holds a few hundred words; a doubling
/// array reached 2^20 one-character elements, a second of copying each time the fuzzer tried it), parentheses in
/// $(( )) and in a recipe's expressions at most 64 deep (bash itself recurses).
inline constexpr std::size_t shell_value_bytes = 1u << 20;
inline constexpr std::size_t shell_array_elements = 1u << 16;
inline constexpr std::size_t shell_depth = 64;
}  // namespace bounds

/// A bound's end as short text: powers of ten from 1e5 up as "1eN" (the form help texts and messages use), the
/// rest as number_text ("[0, 1e6]", "[1, 4096]").
inline std::string bound_text(double v) {
    if (v >= 1e5 && v <= 1e300) {
        int e = 0;
        double x = v;
        while (x >= 10 && std::fmod(x, 10) == 0) { x /= 10; ++e; }
        if (x == 1) return "1e" + std::to_string(e);
    }
    return number_text(v);
}

/// Whether `v` lies in `b` (the test of check_bound, without the error).
inline constexpr bool within(std::int64_t v, int_bound b) { return v >= b.min && v <= b.max; }
inline constexpr bool within(double v, real_bound b) { return v >= b.min && v <= b.max; }

/// Checks `v` against `b`; the error names the field, the value and the range.
/// The error of check_bound (out of line: the check itself stays small enough to inline on every estimate).
[[noreturn, gnu::cold, gnu::noinline]] inline void bound_failure(std::string_view field, std::int64_t v, int_bound b) {
    throw field_error(field, v, "must be in " + std::to_string(b.min) + ".." + std::to_string(b.max));
}
inline std::int64_t check_bound(std::string_view field, std::int64_t v, int_bound b) {
    if (v < b.min || v > b.max) [[unlikely]]
        bound_failure(field, v, b);
    return v;
}
inline double check_bound(std::string_view field, double v, real_bound b) {
    if (!std::isfinite(v)) throw field_error(field, v, "must be a finite number");
    if (v < b.min || v > b.max)
        throw field_error(field, v, "must be in [" + number_text(b.min) + ", " + number_text(b.max) + "]");
    return v;
}
/// Finite check alone (NaN fails every comparison, so range checks written as `v < 0` let it through).
inline double check_finite(std::string_view field, double v) {
    if (!std::isfinite(v)) throw field_error(field, v, "must be a finite number");
    return v;
}

// ---- checked arithmetic -----------------------------------------------------------------------------------------

/// a x b, or config_error naming `what` (e.g. "training.micro_batch x parallel.dp") when it overflows int64.
inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        throw config_error(std::string(what) + " = " + std::to_string(a) + " x " + std::to_string(b) +
                           " overflows a 64-bit integer");
    return r;
}
inline std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r))
        throw config_error(std::string(what) + " = " + std::to_string(a) + " + " + std::to_string(b) +
                           " overflows a 64-bit integer");
    return r;
}
/// Product of several factors checked against a bound: the error names the product and its factors.
inline std::int64_t checked_product(std::initializer_list<std::int64_t> factors, std::string_view what, int_bound b) {
    std::int64_t r = 1;
    for (auto f : factors) r = checked_mul(r, f, what);
    if (r < b.min || r > b.max)
        throw config_error(std::string(what) + " = " + std::to_string(r) + " must be in " + std::to_string(b.min) +
                           ".." + std::to_string(b.max));
    return r;
}

// ---- parsing numbers from text ----------------------------------------------------------------------------------

/// Parses the whole of `text` (surrounding blanks allowed) as a base-10 int64: no sign tricks, no trailing junk,
/// no silent clamping ("18446744073709551616" is an error, not INT64_MAX).
inline std::int64_t parse_int64(std::string_view text, std::string_view field) {
    auto s = text;
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    if (s.empty()) throw field_error(field, text, "is empty (expected an integer)");
    if (s.front() == '+') s.remove_prefix(1);
    std::int64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec == std::errc::result_out_of_range)
        throw field_error(field, text, "is outside the 64-bit integer range");
    if (r.ec != std::errc{} || r.ptr != s.data() + s.size()) throw field_error(field, text, "is not an integer");
    return v;
}
inline std::int64_t parse_int64(std::string_view text, std::string_view field, int_bound b) {
    return check_bound(field, parse_int64(text, field), b);
}

/// Parses the whole of `text` as a finite double ("nan", "inf", "1e400" are errors).
inline double parse_double(std::string_view text, std::string_view field) {
    auto s = text;
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    if (s.empty()) throw field_error(field, text, "is empty (expected a number)");
    if (s.front() == '+') s.remove_prefix(1);
    double v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
    if (r.ec == std::errc::result_out_of_range) throw field_error(field, text, "is outside the range of a double");
    if (r.ec != std::errc{} || r.ptr != s.data() + s.size()) throw field_error(field, text, "is not a number");
    if (!std::isfinite(v)) throw field_error(field, text, "must be a finite number");
    return v;
}
inline double parse_double(std::string_view text, std::string_view field, real_bound b) {
    return check_bound(field, parse_double(text, field), b);
}

/// An integer held in a double (JSON's 1e3, a CSV's 4.0): exact, finite and inside int64, else config_error.
inline std::int64_t integer_from_double(double d, std::string_view field, std::string_view shown) {
    if (!std::isfinite(d)) throw field_error(field, shown, "must be a finite integer");
    if (d != std::floor(d)) throw field_error(field, shown, "must be an integer");
    if (std::fabs(d) > 9007199254740992.0)  // 2^53: beyond it a double no longer holds every integer exactly
        throw field_error(field, shown, "is too large to be an exact integer (at most 2^53)");
    return static_cast<std::int64_t>(d);
}

// ---- work bounded by the answer, not by a number ----------------------------------------------------------------

/// Divisors of n in increasing order, at most `limit` (0 = no limit), in O(sqrt n) time, so the planner's work does
/// not follow the size of a number such as training.global_batch.
inline std::vector<std::int64_t> divisors_of(std::int64_t n, std::int64_t limit = 0) {
    std::vector<std::int64_t> low, high;
    if (n <= 0) return low;
    for (std::int64_t i = 1; i <= n / i; ++i) {
        if (n % i != 0) continue;
        low.push_back(i);
        if (i != n / i) high.push_back(n / i);
    }
    for (auto it = high.rbegin(); it != high.rend(); ++it) low.push_back(*it);
    if (limit > 0)
        while (!low.empty() && low.back() > limit) low.pop_back();
    return low;
}

}  // namespace frenzy

