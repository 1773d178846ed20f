#pragma once
// The Slurm backend of the orchestrator: the live inventory from `sinfo --json` (typed GPU GRES mapped to catalog
// GPU types by a configurable table), submission with `sbatch --parsable` pinned to the chosen nodes, following
// jobs with `squeue --json`, cancelling with `scancel`. Every command runs with an argument vector (process.hpp),
// never through a shell, with a timeout; every output is parsed by backend/slurm_json.hpp.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/backend/batch_script.hpp"
#include "frenzy/backend/process.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/backend/slurm_json.hpp"
#include "frenzy/sched/cluster_state.hpp"

namespace frenzy {

/// Slurm GRES type name -> catalog GPU type name ("a100" -> "a100-80g").
class gres_map {
public:
    gres_map() = default;
    /// "a100=a100-80g,v100=v100-32g"; entries may also be separated by newlines; '#' starts a comment.
    static gres_map parse(std::string_view text, const gpu_catalog& catalog = {}, const std::string& field = "gres_map") {
        gres_map m;
        std::string clean;
        bool comment = false;
        for (char c : text) {
            if (c == '#') comment = true;
            if (c == '\n') comment = false, c = ',';
            if (!comment) clean += (c == '\r' || c == ' ' || c == '\t') ? ',' : c;
        }
        for (std::size_t at = 0; at <= clean.size();) {
            const auto comma = std::min(clean.find(',', at), clean.size());
            const std::string_view item = std::string_view(clean).substr(at, comma - at);
            at = comma + 1;
            if (item.empty()) continue;
            const auto eq = item.find('=');
            if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
                throw config_error(field + ": entry \"" + std::string(item) + "\" is not SLURM_TYPE=CATALOG_TYPE");
            const std::string from(item.substr(0, eq)), to(item.substr(eq + 1));
            if (!catalog.find(to))
                throw config_error(field + ": " + from + "=" + to + ": \"" + to + "\" is not a GPU type of the catalog");
            if (m.map_.count(from)) throw config_error(field + ": Slurm GRES type \"" + from + "\" is mapped twice");
            m.map_[from] = to;
        }
        return m;
    }
    static gres_map load(const std::string& path, const gpu_catalog& catalog = {}, const std::string& field = "gres_map") {
        std::ifstream f(path);
        if (!f) throw config_error(field + ": cannot read file " + path);
        std::stringstream ss;
        ss << f.rdbuf();
        return parse(ss.str(), catalog, path);
    }
    /// The catalog type of a GRES type: the table's entry, else the GRES type itself if the catalog has it, else "".
    std::string lookup(const std::string& gres_type, const gpu_catalog& catalog = {}) const {
        if (auto it = map_.find(gres_type); it != map_.end()) return it->second;
        if (catalog.find(gres_type)) return gres_type;
        return {};
    }
    const std::map<std::string, std::string>& entries() const { return map_; }

private:
    std::map<std::string, std::string> map_;
};

/// The cluster as Frenzy sees it: one node group (count 1) per Slurm node with mapped GPUs, in sinfo's order,
/// so node index i of a cluster_state built from `spec` is Slurm node `nodes[i].name`.
struct slurm_inventory {
    cluster_spec spec;
    std::vector<slurm_node> nodes;            ///< the nodes kept, same order as spec.nodes
    std::vector<std::string> gres_types;      ///< Slurm GRES type of each kept node ("a100")
    std::vector<std::string> skipped;         ///< "node: why" for nodes without usable GPUs

    int index(std::string_view name) const {
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (nodes[i].name == name) return static_cast<int>(i);
        return -1;
    }
};

inline slurm_inventory inventory_from_nodes(const std::vector<slurm_node>& nodes, const gres_map& map,
                                            const gpu_catalog& catalog = {}) {
    slurm_inventory inv;
    inv.spec.catalog = catalog;
    for (const auto& n : nodes) {
        if (inv.index(n.name) >= 0) continue;  // sinfo lists a node once per partition
        const auto g = n.gpus();
        if (g.count == 0) {
            inv.skipped.push_back(n.name + ": no gpu GRES");
            continue;
        }
        const std::string type = map.lookup(g.type, catalog);
        if (type.empty()) {
            inv.skipped.push_back(n.name + ": GRES type \"" + g.type + "\" has no catalog GPU type (add it to the GRES map)");
            continue;
        }
        inv.spec.nodes.push_back({n.name, type, g.count, 1, 0});
        inv.nodes.push_back(n);
        inv.gres_types.push_back(g.type);
    }
    return inv;
}

struct slurm_options {
    double timeout_s = 20;          ///< per command
    std::string partition;          ///< "" = the default partition
    std::string run_command;        ///< replaces the training command (tests, dry runs)
    std::string output_dir;         ///< where job stdout goes ("" = /dev/null)
    std::string job_prefix = "frenzy";
    std::string bin_dir;            ///< directory of the Slurm commands ("" = PATH)
};

/// The time limits `sinfo --noheader --format=%l` prints (one partition a line, Slurm's time format, "infinite" for
/// none): the shortest in seconds, which every partition listed allows; 0 when none is limited (launch_options::
/// max_time_s). io_error naming the command for a line that is not a time.
inline double parse_sinfo_time_limits(std::string_view text, std::string_view command = "sinfo --format=%l") {
    double shortest = 0;
    std::istringstream in{std::string(text)};
    for (std::string line; std::getline(in, line);) {
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
        if (line.empty()) continue;
        double s = 0;
        try {
            s = slurm_time_seconds(line, "time limit");
        } catch (const config_error& e) {
            throw io_error(std::string(command) + ": " + e.what());
        }
        if (s > 0 && (shortest == 0 || s < shortest)) shortest = s;
    }
    return shortest;
}

/// What the backend needs of Slurm; slurm_client runs the real commands, tests may substitute a fake.
/// Every call throws frenzy::io_error when Slurm cannot be reached or answers something unparsable.
class slurm_api {
public:
    virtual ~slurm_api() = default;
    virtual const slurm_options& options() const = 0;
    virtual std::vector<slurm_node> nodes() const = 0;
    /// Every job Slurm still knows (pending, running, and ended within MinJobAge).
    virtual std::vector<slurm_job> jobs() const = 0;
    /// Submits `script` with the sbatch options `args`; returns the Slurm job id.
    virtual std::int64_t sbatch(const std::vector<std::string>& args, const std::string& script) const = 0;
    virtual void scancel(std::int64_t id) const = 0;
};

/// The Slurm commands, each run with an argument vector and parsed by backend/slurm_json.hpp.
class slurm_client : public slurm_api {
public:
    explicit slurm_client(slurm_options o = {}) : opt_(std::move(o)) {}
    const slurm_options& options() const override { return opt_; }

    std::vector<slurm_node> nodes() const override { return parse_sinfo_json(checked({"sinfo", "--json"}).out); }
    std::vector<slurm_job> jobs() const override { return parse_squeue_json(checked({"squeue", "--json"}).out); }
    std::optional<slurm_job> job(std::int64_t id) const {
        auto r = run({"scontrol", "show", "job", "-o", std::to_string(id)});
        if (!r.ok()) {
            if (r.err.find("Invalid job id") != std::string::npos) return std::nullopt;
            fail("scontrol show job -o " + std::to_string(id), r);
        }
        return parse_scontrol_job(r.out);
    }
    std::int64_t sbatch(const std::vector<std::string>& args, const std::string& script) const override {
        std::vector<std::string> argv{"sbatch", "--parsable"};
        argv.insert(argv.end(), args.begin(), args.end());
        auto r = run(argv, script);
        if (!r.ok()) fail("sbatch", r);
        return parse_sbatch_parsable(r.out);
    }
    void scancel(std::int64_t id) const override { checked({"scancel", std::to_string(id)}); }
    /// The partition's MaxTime in seconds (0 = unlimited); "" = the partitions sinfo lists by default, the shortest.
    double partition_max_time_s(const std::string& partition) const {
        std::vector<std::string> argv{"sinfo", "--noheader", "--format=%l"};
        if (!partition.empty()) argv.push_back("--partition=" + partition);
        return parse_sinfo_time_limits(checked(std::move(argv)).out);
    }
    bool ping() const {
        auto r = run({"scontrol", "ping"});
        return r.ok() && r.out.find("is UP") != std::string::npos;
    }

    command_result run(std::vector<std::string> argv, const std::string& input = {}) const {
        if (!opt_.bin_dir.empty()) argv[0] = opt_.bin_dir + "/" + argv[0];
        return run_command(argv, opt_.timeout_s, input);
    }

private:
    command_result checked(std::vector<std::string> argv) const {
        std::string what;
        for (const auto& a : argv) what += (what.empty() ? "" : " ") + a;
        auto r = run(std::move(argv));
        if (!r.ok()) fail(what, r);
        return r;
    }
    [[noreturn]] static void fail(const std::string& what, const command_result& r) {
        std::string msg = what + ": ";
        if (r.timed_out) msg += "timed out";
        else if (r.exit_code == 127) msg += "command not found";
        else msg += "exit code " + std::to_string(r.exit_code);
        std::string e = r.err;
        while (!e.empty() && (e.back() == '\n' || e.back() == ' ')) e.pop_back();
        if (!e.empty()) msg += " (" + e + ")";
        throw io_error(msg);
    }
    slurm_options opt_;
};

/// The sbatch options that pin a plan to its allocation: node list, node count, typed GRES per node (or per job
/// when the parts are uneven), one task per node, no Slurm-side requeue (Frenzy re-places a job itself). An
/// allocation of several components (a mixed plan's stage groups) is a heterogeneous job: the components' options
/// separated by ":" (sbatch(1), slurm.schedmd.com/heterogeneous_jobs.html), the job's name, comment, requeue and
/// output given once, in the first (Slurm propagates them to the later components).
inline std::vector<std::string> sbatch_placement_args(const slurm_inventory& inv, const allocation& a, const std::string& job_name,
                                                      const std::string& comment, const slurm_options& o) {
    std::vector<std::string> args{"--job-name=" + job_name, "--comment=" + comment, "--no-requeue",
                                  "--output=" + (o.output_dir.empty() ? std::string("/dev/null") : o.output_dir + "/" + job_name + "-%j.out")};
    const auto comps = a.components();
    for (std::size_t k = 0; k < comps.size(); ++k) {
        const auto& c = comps[k];
        if (k > 0) args.push_back(":");
        args.push_back("--nodes=" + std::to_string(c.nodes()));
        args.push_back("--ntasks-per-node=1");
        std::string list;
        bool even = true;
        for (const auto& p : c.parts) {
            list += (list.empty() ? "" : ",") + inv.nodes.at(static_cast<std::size_t>(p.node)).name;
            even = even && p.gpus == c.parts.front().gpus;
        }
        args.push_back("--nodelist=" + list);
        const std::string gres_type = inv.gres_types.at(static_cast<std::size_t>(c.parts.front().node));
        if (even) args.push_back("--gres=gpu:" + gres_type + ":" + std::to_string(c.parts.front().gpus));
        else args.push_back("--gpus=" + gres_type + ":" + std::to_string(c.gpus()));
        if (!o.partition.empty()) args.push_back("--partition=" + o.partition);
    }
    return args;
}

/// What a host keeps of its submissions, around each sbatch: intent() before it (a durable record; it returns the
/// tag the job's Slurm comment carries, by which the host finds the job in squeue), submitted() after it with the
/// Slurm job id. Without one, a job is tagged "frenzy:JOB".
class submission_journal {
public:
    virtual ~submission_journal() = default;
    virtual std::string intent(int job, const allocation& a) = 0;
    virtual void submitted(int job, std::int64_t slurm_id) = 0;
};

/// cluster_backend over Slurm: launch() submits the job with its spec (its name heads the script and its
/// framework's files are written) as one sbatch pinned to the allocation, a mixed plan as one heterogeneous job;
/// stop() scancels it.
class slurm_backend : public cluster_backend {
public:
    slurm_backend(const slurm_api& client, const slurm_inventory& inv, submission_journal* journal = nullptr)
        : client_(&client), inv_(&inv), journal_(journal) {}

    /// sbatch pinned to the allocation's nodes and GRES (throws io_error if sbatch fails; the journal's intent
    /// stays recorded).
    void launch(int id, const job_spec& job, const plan& p, const allocation& a) override {
        const std::string name = client_->options().job_prefix + "-" + std::to_string(id);
        batch_request req{id, job.name, p, {}, client_->options().run_command, job};
        for (const auto& c : a.components())
            for (const auto& part : c.parts) req.nodes.push_back(inv_->nodes.at(static_cast<std::size_t>(part.node)).name);
        const std::string tag = journal_ ? journal_->intent(id, a) : "frenzy:" + std::to_string(id);
        const auto slurm_id = client_->sbatch(sbatch_placement_args(*inv_, a, name, tag, client_->options()), batch_script(req));
        slurm_ids_[id] = slurm_id;
        if (journal_) journal_->submitted(id, slurm_id);
    }
    void stop(int job) override {
        auto it = slurm_ids_.find(job);
        if (it == slurm_ids_.end()) return;
        client_->scancel(it->second);
        slurm_ids_.erase(it);
    }
    /// A job known from before (reconciled after a restart).
    void adopt(int job, std::int64_t slurm_id) { slurm_ids_[job] = slurm_id; }
    void forget(int job) { slurm_ids_.erase(job); }
    std::optional<std::int64_t> slurm_id(int job) const {
        auto it = slurm_ids_.find(job);
        return it == slurm_ids_.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
    }

private:
    const slurm_api* client_;
    const slurm_inventory* inv_;
    submission_journal* journal_;
    std::map<int, std::int64_t> slurm_ids_;
};

}  // namespace frenzy
