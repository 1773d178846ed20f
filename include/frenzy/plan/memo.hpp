#pragma once
// The memo of one plan() call: memory-model answers (required bytes, floors) keyed by the fields a search varies,
// so that each estimate is made once and reused for every GPU type, and the key of a layout's pipeline stages.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <compare>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frenzy/train/job.hpp"

namespace frenzy::detail {

/// What one plan() call shares across GPU types. The memory model sees only the job (MemoryModel), and the
/// jobs of one call differ only in the fields layout_job sets, the precision (a type's fallback), the attention
/// kernel (the type's: train/on_gpu.hpp) and the micro-batch, so each estimate is made once and its required bytes (memory/fit.hpp required_memory) reused
/// for every type: the fit rule is then a comparison with that type's usable memory.
using memo_key = std::array<std::int64_t, 20>;
struct memo_hash {
    std::size_t operator()(const memo_key& k) const noexcept {  // FNV-1a over the fields
        std::uint64_t h = 1469598103934665603ull;
        for (auto v : k) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
        return static_cast<std::size_t>(h);
    }
};
/// The same fields packed into 5 words (21 bits per degree, 6 per enum, 1 per flag, the micro-batch whole), one to
/// one wherever each field fits its width: every layout the planner builds. A job with a field outside its
/// width goes to the full key instead, so the memo stays exact for any input.
using packed_key = std::array<std::uint64_t, 5>;
struct packed_hash {
    std::size_t operator()(const packed_key& k) const noexcept {
        std::uint64_t h = 0x9e3779b97f4a7c15ull;
        for (auto v : k) h = (h ^ v) * 0xff51afd7ed558ccdull;
        h ^= h >> 33;  // MurmurHash3's finaliser: the table below takes the low bits
        h *= 0xc4ceb9fe1a85ec53ull;
        return static_cast<std::size_t>(h ^ (h >> 33));
    }
};
inline bool pack_key(const job_spec& j, packed_key& out) {
    const auto& p = j.parallel;
    auto u = [](auto v) { return static_cast<std::uint64_t>(v); };  // a negative value has its top bits set
    const std::uint64_t wide = u(p.dp) | u(p.tp) | u(p.pp) | u(p.vpp) | u(p.cp) | u(p.ep) | u(p.etp) |
                               u(p.first_stage_layers) | u(p.last_stage_layers);
    const std::uint64_t fw = u(catalog_index(j.runtime.framework));
    const std::uint64_t narrow = u(p.sharding) | u(p.recompute) | u(p.schedule) | u(p.dispatcher) | fw |
                                 u(j.training.precision) | u(j.runtime.attention);
    if ((wide >> 21) != 0 || (narrow >> 6) != 0 || !p.stage_layers.empty()) return false;
    out[0] = u(p.dp) | u(p.tp) << 21 | u(p.pp) << 42;
    out[1] = u(p.vpp) | u(p.cp) << 21 | u(p.ep) << 42;
    out[2] = u(p.etp) | u(p.first_stage_layers) << 21 | u(p.last_stage_layers) << 42;
    out[3] = u(p.sharding) | u(p.recompute) << 6 | u(p.schedule) << 12 | u(p.dispatcher) << 18 |
             fw << 24 | u(j.training.precision) << 30 | u(p.sequence_parallel) << 36 |
             u(p.grouped_gemm) << 37 | u(p.embedding_stage) << 38 | u(p.loss_stage) << 39 | u(j.runtime.attention) << 40;
    out[4] = u(j.training.micro_batch);
    return true;
}
/// The packed key of a job but for its recompute level and micro-batch, which a layout's memory checks vary (the
/// planner's search_layout): packed once per layout, completed per check (`of`), the same words pack_key gives.
/// `packed` false: the job does not pack (the memo's full path, from the job itself).
struct layout_key {
    packed_key words{};
    bool packed = false;
    packed_key of(recompute rc, std::int64_t micro_batch) const {
        packed_key k = words;
        k[3] |= static_cast<std::uint64_t>(rc) << 6;
        k[4] = static_cast<std::uint64_t>(micro_batch);
        return k;
    }
};
inline layout_key layout_key_of(const job_spec& j) {
    layout_key k;
    k.packed = pack_key(j, k.words);
    k.words[3] &= ~(std::uint64_t{63} << 6);  // the recompute level's bits
    k.words[4] = 0;
    return k;
}
/// layout_key_of(j) from `k`, the key of a job that differs from `j` at most in dp (the planner's dp loop): k's
/// words with dp's replaced, or the job packed again where either does not pack.
inline layout_key layout_key_at_dp(const layout_key& k, const job_spec& j) {
    const auto dp = static_cast<std::uint64_t>(j.parallel.dp);
    if (!k.packed || (dp >> 21) != 0) return layout_key_of(j);
    layout_key out = k;
    out.words[0] = (k.words[0] & ~((std::uint64_t{1} << 21) - 1)) | dp;
    return out;
}
/// The fields of a job the memory model can see vary in a search (memo_key order).
inline memo_key key_of(const job_spec& j) {
    const auto& p = j.parallel;
    auto e = [](auto v) { return static_cast<std::int64_t>(v); };
    return {p.dp, p.tp, p.pp, p.vpp, p.cp, p.ep, p.etp, e(p.sequence_parallel), e(p.sharding), e(p.recompute),
            e(p.schedule), e(p.dispatcher), e(p.grouped_gemm), p.first_stage_layers, p.last_stage_layers,
            e(p.embedding_stage) * 2 + e(p.loss_stage), e(j.runtime.framework.identity()), e(j.training.precision),
            e(j.runtime.attention), j.training.micro_batch};
}

/// Open addressing over packed keys (linear probing, at most half full): one allocation per growth, not one
/// per entry. Keys, values and the used flags in arrays of their own, each of a trivial type, so that a growth
/// zero-fills them (memset) instead of constructing slot by slot.
struct packed_table {
    std::vector<packed_key> keys;
    std::vector<double> values;
    std::vector<unsigned char> used;
    std::size_t count = 0;
    /// Word by word (inline: std::array's == calls memcmp for every probe).
    static bool same_key(const packed_key& a, const packed_key& b) {
        return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4];
    }
    std::pair<double*, bool> try_emplace(const packed_key& k, double init) {
        if (2 * (count + 1) > used.size()) grow();
        const std::size_t mask = used.size() - 1;
        for (std::size_t i = packed_hash{}(k) & mask;; i = (i + 1) & mask) {
            if (!used[i]) {
                keys[i] = k;
                values[i] = init;
                used[i] = 1;
                ++count;
                return {&values[i], true};
            }
            if (same_key(keys[i], k)) return {&values[i], false};
        }
    }
    /// Room for `entries` without growing (at most half full).
    void reserve(std::size_t entries) {
        if (2 * entries > used.size()) grow(2 * entries);
    }
    /// Four times the slots (1,024 at first), or the first power of two from there that reaches `at_least`.
    void grow(std::size_t at_least = 0) {
        std::size_t n = std::max<std::size_t>(1024, 4 * used.size());
        while (n < at_least) n *= 2;
        std::vector<packed_key> old_keys(n);
        std::vector<double> old_values(n);
        std::vector<unsigned char> old_used(n);
        old_keys.swap(keys);
        old_values.swap(values);
        old_used.swap(used);
        const std::size_t mask = n - 1;
        for (std::size_t o = 0; o < old_used.size(); ++o) {
            if (!old_used[o]) continue;
            std::size_t i = packed_hash{}(old_keys[o]) & mask;
            while (used[i]) i = (i + 1) & mask;
            keys[i] = old_keys[o];
            values[i] = old_values[o];
            used[i] = 1;
        }
    }
};
/// Bytes by job: the packed key where it applies, else the full one (with the layout's own layer counts, when it
/// states them: parallel.stage_layers).
struct memo {
    packed_table packed;
    std::unordered_map<memo_key, double, memo_hash> full;
    std::map<std::pair<memo_key, std::vector<std::int64_t>>, double> laid_out;
    /// Room for `n` packed entries (packed_table::reserve).
    void reserve(std::size_t n) { packed.reserve(n); }
    /// The entry of `j` and whether it is new (then set to `init`); valid until the next new entry.
    std::pair<double*, bool> try_emplace(const job_spec& j, double init) {
        packed_key k;
        if (pack_key(j, k)) return packed.try_emplace(k, init);
        return try_emplace_full(j, init);
    }
    /// The entry of `j`, whose packed key is `k` (layout_key::of), or of its full key where it does not pack.
    std::pair<double*, bool> try_emplace(const job_spec& j, const layout_key& k, double init) {
        if (k.packed) return packed.try_emplace(k.of(j.parallel.recompute, j.training.micro_batch), init);
        return try_emplace_full(j, init);
    }
    /// The jobs the packed key does not hold (out of line: the search's lookups all take the packed path).
    [[gnu::noinline]] std::pair<double*, bool> try_emplace_full(const job_spec& j, double init) {
        if (!j.parallel.stage_layers.empty()) {
            auto [it, fresh] = laid_out.try_emplace({key_of(j), j.parallel.stage_layers}, init);
            return {&it->second, fresh};
        }
        auto [it, fresh] = full.try_emplace(key_of(j), init);
        return {&it->second, fresh};
    }
};
/// The fields the pipeline stages of a job's layout depend on (train/geometry.hpp for_each_stage_layout, with
/// the framework's vocabulary padding), within one plan() call, where the model and sequence length are fixed:
/// what keys the stage walks shared across dp, sharding, recompute, micro-batches, precisions and GPU types.
struct stage_key {
    std::array<std::int64_t, 9> fields{};
    std::vector<std::int64_t> stage_layers;  ///< parallel.stage_layers (empty for every layout the planner builds)
    auto operator<=>(const stage_key&) const = default;
};
/// The stage key's fields of a job but its own layer counts (stage_layers).
inline std::array<std::int64_t, 9> stage_fields_of(const job_spec& j) {
    const auto& p = j.parallel;
    return {static_cast<std::int64_t>(j.runtime.framework.identity()), p.tp, p.etp, p.ep, p.pp, p.vpp,
            p.first_stage_layers, p.last_stage_layers,
            static_cast<std::int64_t>(p.embedding_stage) * 2 + static_cast<std::int64_t>(p.loss_stage)};
}
inline stage_key stage_key_of(const job_spec& j) { return {stage_fields_of(j), j.parallel.stage_layers}; }
/// stage_key_of(j) == k, without copying the job's layer counts into a key (a search asks it per estimate).
inline bool is_stage_key_of(const stage_key& k, const job_spec& j) {
    return k.fields == stage_fields_of(j) && k.stage_layers == j.parallel.stage_layers;
}

}  // namespace frenzy::detail
