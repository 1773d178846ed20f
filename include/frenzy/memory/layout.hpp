#pragma once
// The pipeline stages with a framework's profile: train/geometry.hpp derives the stages, their layers and
// per-GPU parameters (the one layout computation, shared with perf/); these overloads pass the profile's
// vocabulary padding (framework_profile::vocab_divisible_by), as the memory model's policies hold a profile.
#include <cstdint>
#include <utility>
#include <vector>

#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/train/geometry.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// Vocabulary as the framework pads it for this tensor-parallel degree (train/geometry.hpp tp_padded_vocab).
inline std::int64_t framework_vocab(const job_spec& j, const framework_profile& f) {
    return tp_padded_vocab(j, f.vocab_divisible_by);
}

/// train/geometry.hpp for_each_stage_layout with the profile's vocabulary padding.
template <class Visit>
void for_each_stage_layout(const job_spec& j, const framework_profile& f, Visit&& visit) {
    for_each_stage_layout(j, f.vocab_divisible_by, std::forward<Visit>(visit));
}

/// train/geometry.hpp stage_layouts with the profile's vocabulary padding.
inline std::vector<stage_layout> stage_layouts(const job_spec& j, const framework_profile& f) {
    return stage_layouts(j, f.vocab_divisible_by);
}

}  // namespace frenzy
