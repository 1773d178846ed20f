// A host scheduler embedding Frenzy: it owns its event source (a scripted feed standing in for a job queue and a
// cluster monitor), keeps the cluster in an `orchestrator` whose backend it implements, asks HAS what to start,
// and plugs in its own placement policy (first fit by node index, e.g. to keep low-numbered racks busy) while
// keeping HAS's queue order (`has::with_placement<>`); the views HAS decides on come from `make_job_view`.
// Exits non-zero if any job is left unfinished or any invariant breaks.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "frenzy/model/presets.hpp"
#include "frenzy/plan/planner.hpp"
#include "frenzy/sched/cluster_state.hpp"
#include "frenzy/sched/has.hpp"

namespace {

/// The host's own placement: first fit in node order, whole tensor-parallel groups per node.
struct first_fit_placement {
    std::optional<frenzy::allocation> place(const frenzy::cluster_state& c, std::span<const int> free,
                                            const frenzy::placement_request& r) const {
        frenzy::allocation a;
        a.type = r.type;
        int left = r.gpus;
        for (int n : c.nodes_of_type(r.type)) {
            const int take = std::min(left, free[static_cast<std::size_t>(n)] / r.tp * r.tp);
            if (take <= 0) continue;
            a.parts.push_back({n, take});
            left -= take;
            if (left == 0) return a;
        }
        return std::nullopt;
    }
};
static_assert(frenzy::PlacementPolicy<first_fit_placement>);

/// The host's side of the cluster: here it only records what it would tell the real cluster manager.
struct host_backend : frenzy::cluster_backend {
    double now = 0;
    std::map<int, double> end_at;  // job -> when the host's monitor will report it done
    std::map<int, double> runtime; // job -> seconds it runs once launched (from the chosen plan)
    void launch(int job, const frenzy::job_spec&, const frenzy::plan& p, const frenzy::allocation& a) override {
        std::printf("t=%6.0f  launch job %d on %d x %s over %d node(s), tp=%lld\n", now, job, a.gpus(), p.gpu.c_str(),
                    a.nodes(), static_cast<long long>(p.parallel.tp));
        end_at[job] = now + runtime[job];
    }
    void stop(int job) override { end_at.erase(job); }
};

struct host_job {
    int id;
    double submit;
    frenzy::job_spec spec;
    frenzy::plan_result plans;
    bool running = false, done = false;
    frenzy::plan current{};  // what it runs
    double started = 0;    // when it was launched
    double progress = 0;   // fraction done when it last stopped (preemption checkpoints)
};

}  // namespace

int main() {
    using namespace frenzy;
    cluster_spec cluster;
    cluster.nodes = {{"a100", "a100-80g", 8, 2}, {"v100", "v100-32g", 8, 2}};
    host_backend backend;
    orchestrator orch(cluster, backend);
    has::with_placement<first_fit_placement> has(has_options{.startup_s = 0});  // HAS, only placement swapped

    // The host's event source: submissions at fixed times (a real host would read its queue / REST API).
    std::vector<host_job> jobs;
    const std::vector<std::pair<double, const char*>> feed{
        {0, "gpt3-1.3b"}, {10, "llama-3.1-8b"}, {20, "gpt3-350m"}, {30, "gpt3-2.7b"}, {40, "gpt3-125m"}};
    for (std::size_t i = 0; i < feed.size(); ++i) {
        job_spec j;
        j.name = feed[i].second;
        j.model = preset(feed[i].second);
        j.training.seq_len = 2048;
        j.training.global_batch = 256;
        j.training.precision = precision::fp16_mixed;  // V100 has no bf16
        j.training.total_tokens = 2e8;
        jobs.push_back({static_cast<int>(i), feed[i].first, j, planner{}.plan(j, cluster)});
    }

    std::size_t next = 0;
    int finished = 0;
    while (finished < static_cast<int>(jobs.size())) {
        // Next event: a submission or a completion reported by the (simulated) monitor.
        double t_sub = next < jobs.size() ? jobs[next].submit : 1e300;
        double t_end = 1e300;
        int ending = -1;
        for (const auto& [id, t] : backend.end_at)
            if (t < t_end) { t_end = t; ending = id; }
        if (t_sub == 1e300 && t_end == 1e300) {
            std::printf("stuck: %d of %zu jobs finished and nothing runs\n", finished, jobs.size());
            return 1;
        }
        if (t_sub <= t_end) {
            backend.now = t_sub;
            std::printf("t=%6.0f  submit job %zu (%s)\n", t_sub, next, jobs[next].spec.name.c_str());
            ++next;
        } else {
            backend.now = t_end;
            orch.finished(ending);
            backend.end_at.erase(ending);
            jobs[static_cast<std::size_t>(ending)].running = false;
            jobs[static_cast<std::size_t>(ending)].done = true;
            ++finished;
            std::printf("t=%6.0f  job %d done\n", t_end, ending);
        }
        // Ask HAS: the library builds each job's view from what the host knows of it (make_job_view).
        std::vector<job_view> views;
        for (std::size_t i = 0; i < next; ++i) {
            auto& j = jobs[i];
            if (j.done) continue;
            job_facts f;
            f.id = j.id;
            f.submit_s = j.submit;
            f.plans = &j.plans.plans;
            f.total_tokens = j.spec.training.total_tokens;
            f.progress = j.progress;
            if (j.running) {
                f.current = &j.current;
                f.run_started_s = j.started;
            }
            views.push_back(make_job_view(f, orch.state(), backend.now));
        }
        const sched_decisions d = has.schedule({backend.now, &orch.state(), views});
        for (int id : d.preempt) {  // preempted (or restarted wider): it checkpoints and stops
            auto& j = jobs[static_cast<std::size_t>(id)];
            j.progress = std::min(1.0, j.progress + (backend.now - j.started) * j.current.tokens_per_s / j.spec.training.total_tokens);
            orch.stop(id);
            j.running = false;
            std::printf("t=%6.0f  preempt job %d\n", backend.now, id);
        }
        for (const auto& s : d.start) {
            backend.runtime[s.job] = (1.0 - jobs[static_cast<std::size_t>(s.job)].progress) *
                                     jobs[static_cast<std::size_t>(s.job)].spec.training.total_tokens / s.p.tokens_per_s;
            auto& j = jobs[static_cast<std::size_t>(s.job)];
            orch.start(s.job, j.spec, s.p, s.alloc);
            j.running = true;
            j.current = s.p;
            j.started = backend.now;
        }
        if (auto e = orch.state().check_invariants(); !e.empty()) {
            std::printf("invariant broken: %s\n", e.c_str());
            return 1;
        }
    }
    std::printf("all %d jobs finished at t=%.0f s\n", finished, backend.now);
    return orch.state().holdings().empty() ? 0 : 1;
}
