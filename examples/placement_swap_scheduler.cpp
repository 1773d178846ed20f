// Swapping one policy of a baseline: Tiresias with the host's own placement (pack from the last node, e.g. to
// keep low-numbered nodes free for maintenance), everything else Tiresias's own. The same trace under the default
// (best fit) and the swapped placement: the schedule's timing is the same, the nodes differ.
// Exits non-zero if the swapped placement put a job on node 0 or the two runs' completion times differ (the jobs
// here hold at most 14 of the 32 GPUs at once, each on one node, so the placement cannot change the timing).
#include <cstdio>
#include <optional>
#include <span>
#include <vector>

#include "frenzy/sched/tiresias.hpp"
#include "frenzy/sim/simulator.hpp"

namespace {

/// The host's placement: the last node of the type with room for the whole request (counting the GPUs it hands
/// out per node, to show where jobs went).
struct last_node_first {
    std::vector<int>* gpus_on = nullptr;
    std::optional<frenzy::allocation> place(const frenzy::cluster_state& c, std::span<const int> free,
                                            const frenzy::placement_request& r) const {
        const auto& nodes = c.nodes_of_type(r.type);
        for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
            if (free[static_cast<std::size_t>(*it)] >= r.gpus) {
                if (gpus_on) (*gpus_on)[static_cast<std::size_t>(*it)] += r.gpus;
                return frenzy::allocation{r.type, {{*it, r.gpus}}};
            }
        return std::nullopt;
    }
};
static_assert(frenzy::PlacementPolicy<last_node_first>);

}  // namespace

int main() {
    using namespace frenzy;
    cluster_spec cluster;
    cluster.nodes = {{"a100", "a100-80g", 8, 4}};
    // Hand-set plans (the planner is not needed to show the swap): 1, 2 or 4 GPUs at 1,000 tokens/s per GPU.
    const plan_provider plans = [](const job_spec&) {
        plan_result r;
        for (int g : {1, 2, 4}) {
            plan p;
            p.gpu = "a100-80g";
            p.gpus = g;
            p.parallel.dp = g;
            p.tokens_per_s = 1000.0 * g;
            r.plans.push_back(p);
        }
        return r;
    };
    std::vector<trace_job> trace;
    for (int i = 0; i < 6; ++i) {
        trace_job t;
        t.job_id = "j" + std::to_string(i);
        t.submit_s = 60.0 * i;
        t.model = "gpt3-125m";
        t.total_tokens = 4e6;
        t.requested_gpus = 1 << (i % 3);
        trace.push_back(t);
    }
    sim_options o;
    const sim_result base = simulate(cluster, trace, plans, tiresias_scheduler{}, o);
    std::vector<int> gpus_on(4, 0);
    const sim_result mine = simulate(cluster, trace, plans,
                                     tiresias_scheduler::with_placement<last_node_first>({}, last_node_first{&gpus_on}), o);
    std::printf("%-4s %18s %18s\n", "job", "best fit: JCT s", "last node: JCT s");
    bool same = base.metrics.completed == mine.metrics.completed;
    for (std::size_t i = 0; i < trace.size(); ++i) {
        std::printf("%-4s %18.0f %18.0f\n", trace[i].job_id.c_str(), base.jobs[i].jct(), mine.jobs[i].jct());
        same = same && base.jobs[i].jct() == mine.jobs[i].jct();
    }
    std::printf("GPUs handed out per node with the swapped placement: %d %d %d %d\n", gpus_on[0], gpus_on[1], gpus_on[2], gpus_on[3]);
    std::printf("%s\n", same ? "same timing, other nodes" : "timing differs");
    return same && gpus_on[0] == 0 && gpus_on[3] > 0 ? 0 : 1;
}
