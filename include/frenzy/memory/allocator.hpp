#pragma once
// The allocator policy: how the peak of allocated bytes becomes the peak of reserved bytes (what the device must
// hold). A host whose runtime does not use PyTorch's caching allocator (or configures it differently:
// expandable_segments, a memory pool of its own) replaces only this policy:
// `memory_estimator::with_allocator<my_allocator>` (examples/swap_allocator_policy.cpp).
#include <concepts>

#include "frenzy/core/units.hpp"
#include "frenzy/memory/activations.hpp"
#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/memory/model_states.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// Policy: the reserved peak of a stage from its allocated peak, its activations and its model states.
template <class T>
concept AllocatorPolicy = requires(const T& p, const job_spec& j, const framework_profile& f, bytes allocated,
                                   const activation_bytes& a, const model_state_bytes& s) {
    { p.reserved(j, f, allocated, a, s) } -> std::same_as<bytes>;
};

/// Default: PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp). It rounds blocks up (2 MiB
/// segments for large blocks) and keeps freed blocks cached: transient tensors of changing sizes leave
/// reserved-but-unallocated space. Model: reserved = allocated + a share of the transient and activation churn (the
/// blocks freed and re-requested each step), + the blocks of a side stream's pool where a framework allocates on one.
struct caching_allocator {
    /// What reserved() reads of the job alone, the same on every stage: whether a side stream's pool holds the
    /// gradients.
    struct job_terms {
        bool side_stream_grads = false;
    };
    job_terms terms_of(const job_spec& j, const framework_profile& f) const {
        // FSDP2 allocates the reduce-scattered (sharded) gradients on its reduce-scatter stream (FSDP1 on its
        // post-backward stream); the caching allocator keeps one block pool per stream, so the activation blocks
        // freed on the default stream during backward cannot serve them and that stream's pool adds their size to
        // the reserved peak (c10/cuda/CUDACachingAllocator.cpp per-stream pools; torch/distributed/fsdp/
        // _fully_shard/_fsdp_collectives.py foreach_reduce allocates on reduce_scatter_stream). Where earlier
        // micro-batches accumulated them, the gradients were allocated there before the peak and are part of
        // `allocated` already: the default stream's pool then holds only the rest.
        const bool sharded = j.parallel.sharding == sharding::full || j.parallel.sharding == sharding::gradients;
        return {!gradients_at_forward_peak(j, f) &&
                ((f.side_stream_reduce_scatter && sharded) || (f.side_stream_all_reduce && !sharded))};
    }
    bytes reserved(const job_spec& j, const framework_profile& f, bytes allocated, const activation_bytes& a,
                   const model_state_bytes& s) const {
        return reserved(j, f, allocated, a, s, terms_of(j, f));
    }
    /// reserved(j, f, allocated, a, s) with `t` = terms_of(j, f).
    bytes reserved(const job_spec&, const framework_profile&, bytes allocated, const activation_bytes& a,
                   const model_state_bytes& s, const job_terms& t) const {
        return allocated + bytes{fragmentation * (a.transient.value + a.stored.value)} +
               (t.side_stream_grads ? s.gradients : bytes{});
    }

    /// Share of the activation and transient bytes left reserved but unallocated. 0.15 is the one free constant of
    /// the reserved model, set from torchtitan's two FSDP rows of the same job at 8 and 128 GPUs (rows 18 and 25 of
    /// data/memory/measured_calibration.csv: 82.4 and 67.0 GiB reserved), which it reproduces within 3%
    /// while the model states change by 14 GiB between them.
    double fragmentation = 0.15;
};
static_assert(AllocatorPolicy<caching_allocator>);

/// Whether the job's allocator options let it hand back its whole cache when the card is full, so that what must fit
/// is the allocated peak rather than the reserved one (memory/fit.hpp, the "tight" verdict). By default it cannot: a
/// failed cudaMalloc frees only the cached blocks that are not split, and the slivers left in a segment that still
/// holds a live block stay reserved (pytorch/pytorch@001074d2 c10/cuda/CUDACachingAllocator.cpp, the allocator's
/// header comment). It can:
/// - with expandable_segments:True: "if we end up out of memory, we can unmap all the memory in our segment
///   corresponding to empty physical pages" (same file, Note [Expandable Segments]; 20 MiB pages in the large pool);
/// - under Megatron's --empty-unused-memory-level >= 1: torch.cuda.empty_cache() after every forward/backward
///   (NVIDIA/Megatron-LM@d98e8a64 megatron/training/training.py train_step) returns every segment of the step's
///   activations, each whole again once they are freed, so no sliver split in one step is still reserved in the
///   next: the reserve carries no churn from earlier steps (the share `fragmentation` is set on runs that never
///   empty the cache), and within a step a failed cudaMalloc frees the unsplit blocks and retries.
inline bool cache_returned_whole(const job_spec& j) {
    return j.runtime.expandable_segments || j.runtime.empty_unused_memory_level >= 1;
}

}  // namespace frenzy
