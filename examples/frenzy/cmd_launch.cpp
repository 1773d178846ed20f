// `frenzy launch`: a plan becomes launch files (launch.sbatch + the framework's configuration).
// `frenzy import`: a launcher configuration (Megatron-LM script, torchtitan recipe, ds_config.json, FSDP settings)
// becomes a job spec, with the arguments ignored and not understood listed.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "frenzy/backend/slurm.hpp"
#include "frenzy/io/cluster_json.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/io/result_json.hpp"
#include "frenzy/launch/launch.hpp"
#include "frenzy/launch/launch_json.hpp"

namespace {

struct launch_args {
    frenzy_cli::job_args job;
    frenzy_cli::cluster_args cluster;
    std::string out, run_command, objective = "time";
    std::vector<std::string> gres, prices;
    std::size_t plan = 1;
    double margin = frenzy::default_margin;
    double time_margin = 0.2;
    std::string torchtitan_base, max_time;
    double checkpoint_every = 1800;
    frenzy::launch_options slurm;  // its Slurm fields: partition, account, qos, cpus per task, memory, requeue signal
    bool json = false, mixed = false;
};

/// "plan N: 8 x h100-80g on 1 node(s), megatron dp.. tp.. pp.., sharding .., recompute .., micro-batch N"
void print_plan(std::size_t n, const frenzy::launch_result& r) {
    using namespace frenzy;
    const auto& q = r.job.parallel;
    const std::string layout = fmt::format("{} dp{} tp{} pp{}{}{}{}, sharding {}, recompute {}, micro-batch {}",
                                           to_string(r.job.runtime.framework), q.dp, q.tp, q.pp,
                                           q.vpp > 1 ? fmt::format(" vpp{}", q.vpp) : "", q.cp > 1 ? fmt::format(" cp{}", q.cp) : "",
                                           q.ep > 1 ? fmt::format(" ep{}", q.ep) : "", to_string(q.sharding), to_string(q.recompute),
                                           r.job.training.micro_batch);
    if (!r.plan.mixed()) {
        fmt::print("plan {}: {} x {} on {} node(s), {}\n", n, r.plan.gpus, r.plan.gpu, r.plan.nodes, layout);
        return;
    }
    fmt::print("mixed plan {}: {}, a Slurm heterogeneous job of {} components\n", n, layout, r.plan.groups.size());
    for (std::size_t k = 0; k < r.plan.groups.size(); ++k) {
        const auto& g = r.plan.groups[k];
        fmt::print("  component {}: {} x {} on {} node(s), stages {}-{} ({} layers)\n", k, g.gpus, g.gpu, g.nodes, g.first_stage,
                   g.first_stage + g.stages - 1, g.layers);
    }
}

void run_launch(launch_args a) {
    using namespace frenzy;
    if (a.job.frameworks.size() != 1) throw config_error("give --framework " + launcher_names("|") + " once");
    launch_options o;
    o.launcher = parse_enum<launcher>("--framework", a.job.frameworks.front());
    a.job.frameworks.clear();  // the launcher, not a plan framework: launch() plans with the launcher's frameworks
    auto parsed = frenzy_cli::build_job(frenzy_cli::with_import_world_size(a.job, a.cluster));
    parsed.choose_global_batch();
    const auto cluster = frenzy_cli::build_cluster(a.cluster);
    if (a.plan < 1) throw config_error("--plan=0: plans are numbered from 1");
    o.plan_index = a.plan - 1;
    o.mixed = a.mixed;
    o.run_command = a.run_command;
    o.time_margin = a.time_margin;
    o.base_config = a.torchtitan_base;
    o.partition = a.slurm.partition;
    o.account = a.slurm.account;
    o.qos = a.slurm.qos;
    o.cpus_per_task = a.slurm.cpus_per_task;
    o.mem = a.slurm.mem;
    o.requeue_signal_s = a.slurm.requeue_signal_s;
    o.checkpoint_every_s = a.checkpoint_every;
    // --max-time: a Slurm time, or "sinfo": the partition's MaxTime as sinfo reports it (the shortest of a list)
    o.max_time_s = a.max_time == "sinfo" ? slurm_client{}.partition_max_time_s(a.slurm.partition)
                                         : slurm_time_seconds(a.max_time, "--max-time");
    for (const auto& g : a.gres) {
        const auto eq = g.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == g.size())
            throw config_error("--gres-map \"" + g + "\" must be CATALOG_NAME=GRES_TYPE");
        cluster.catalog.at(g.substr(0, eq), "--gres-map");
        o.gres_names[g.substr(0, eq)] = g.substr(eq + 1);
    }
    o.planning.objective = parse_enum<plan_objective>("--objective", a.objective);
    o.planning.margin = a.margin;
    o.planning.constraints = parsed.stated;
    frenzy_cli::apply_prices(o.planning, a.prices, cluster);  // --objective cost ranks by them (issue 57: it never ran)
    auto r = launch(parsed.job, cluster, o);
    try {
        r.written = write_launch_files(r.files, a.out);
    } catch (const io_error& e) {
        throw io_error(std::string("-o: ") + e.what());
    }
    if (a.json) {
        fmt::print("{}\n", nlohmann::ordered_json(r).dump(2));
        return;
    }
    print_plan(a.plan, r);
    if (parsed.global_batch_chosen)
        fmt::print("global batch {} sequences (not given: DeepSeek LLM's batch-size law for the budget; --global-batch N "
                   "sets it)\n", r.job.training.global_batch);
    for (const auto& path : r.written) fmt::print("wrote {}\n", path);
    fmt::print("submit: cd {} && sbatch launch.sbatch\n", a.out);
}

struct import_args {
    std::string from, model, hf_config, name;
    std::int64_t world_size = 0, seq_len = 0, tp = 1, pp = 1, cp = 1, ep = 1;
    double total_tokens = 0;
    bool json = false;
};

void run_import(const import_args& a) {
    using namespace frenzy;
    const auto colon = a.from.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == a.from.size())
        throw config_error("--from \"" + a.from + "\" must be KIND:FILE (" + import_examples() + ")");
    const std::string kind = a.from.substr(0, colon), path = a.from.substr(colon + 1);
    import_options o;
    o.name = a.name;
    if (!a.model.empty() && !a.hf_config.empty()) throw config_error("give --model or --hf-config, not both");
    if (launcher_needs_model(kind) && a.model.empty() && a.hf_config.empty())
        throw config_error("--from " + kind + ":FILE: the configuration does not describe the model; give --model or --hf-config");
    if (!a.model.empty()) o.model = preset(a.model);
    if (!a.hf_config.empty()) o.model = load_hf_model(a.hf_config);  // a file, a snapshot folder or a cached ORG/NAME
    o.world_size = a.world_size;
    o.layout.tp = a.tp;
    o.layout.pp = a.pp;
    o.layout.cp = a.cp;
    o.layout.ep = a.ep;
    if (a.seq_len > 0) o.training.seq_len = a.seq_len;
    o.training.total_tokens = a.total_tokens;
    const auto r = import_launcher_file(kind, path, o);
    if (a.json) {
        fmt::print("{}\n", nlohmann::ordered_json(r).dump(2));
        return;
    }
    fmt::print("{}\n", to_json(r.job).dump(2));
    if (!r.has_parallel) fmt::print("layout: not fixed (no world size; dp=1 assumed; give --world-size)\n");
    fmt::print("ignored ({}, irrelevant to memory and speed):\n", r.ignored.size());
    for (const auto& s : r.ignored) fmt::print("  {}\n", s);
    fmt::print("not understood or not modelled ({}; the estimate does not account for them):\n", r.unknown.size());
    for (const auto& s : r.unknown) fmt::print("  {}\n", s);
    for (const auto& s : r.notes) fmt::print("note: {}\n", s);
}

}  // namespace

/// The examples under `launch --help` (issue 55).
constexpr const char* launch_examples =
    "Examples:\n"
    "  frenzy launch --job examples/jobs/plan-llama-3.1-8b.json --gpus 16xa100-80g --framework megatron -o run/\n"
    "  cd run && MEGATRON_LM=~/Megatron-LM DATA_PATH=/data/my_text sbatch launch.sbatch";

void frenzy_cli::add_launch(CLI::App& app) {
    auto a = std::make_shared<launch_args>();
    auto* c = app.add_subcommand("launch", "Plan a job and write its Slurm launch script and framework configuration");
    c->footer(launch_examples);
    frenzy_cli::add_job_options(c, a->job);
    frenzy_cli::add_cluster_options(c, a->cluster);
    // add_job_options' --framework is taken here as the launcher (frameworks/launchers.hpp)
    c->get_option("--framework")->description(frenzy::launcher_names() + " (the launcher; it plans with the frameworks it runs)");
    c->add_option("--plan", a->plan, "Take plan N of the ranking (default 1, the best)")->check(CLI::PositiveNumber);
    c->add_flag("--mixed", a->mixed,
                "Take mixed plan N (plan --mixed: pipeline stages on two GPU types) and write it as a Slurm heterogeneous "
                "job, one component per type (Megatron-LM only)");
    c->add_option("-o,--out", a->out, "Output directory (created)")->required();
    c->add_option("--objective", a->objective, "time | gpu-hours | cost (default time; cost needs --price)");
    frenzy_cli::add_price_option(c, a->prices);
    c->add_option("--gres-map", a->gres, "Catalog name to Slurm GRES type, NAME=GRES (repeatable; default the catalog name)")->delimiter(',');
    c->add_option("--run-command", a->run_command, "Script and arguments torchrun starts, as shell words: quotes and $VARS work, "
                  "; & | < > ( ) ` $( are refused (put a pipeline in a script) (default: the framework's)")
        ->check(frenzy_cli::non_empty());
    c->add_option("--time-margin", a->time_margin, "Slurm --time = predicted run time x (1 + this) (default 0.2)")->check(CLI::NonNegativeNumber);
    c->add_option("--torchtitan-base", a->torchtitan_base, "torchtitan recipe the generated one starts from, MODULE:FUNCTION (default: torchtitan's recipe for the model)");
    c->add_option("--partition", a->slurm.partition, "Slurm partition (#SBATCH --partition; default the cluster's)")
        ->check(frenzy_cli::non_empty());
    c->add_option("--account", a->slurm.account, "Slurm account to charge (#SBATCH --account)")->check(frenzy_cli::non_empty());
    c->add_option("--qos", a->slurm.qos, "Slurm quality of service (#SBATCH --qos)")->check(frenzy_cli::non_empty());
    c->add_option("--cpus-per-task", a->slurm.cpus_per_task, "CPUs for each node's task, which starts every rank (#SBATCH --cpus-per-task)")
        ->check(frenzy_cli::whole_number(frenzy::bounds::cpus_per_task));
    c->add_option("--mem", a->slurm.mem, "Memory per node: MB, or with a unit K|M|G|T; 0 = all of it (#SBATCH --mem)")
        ->check(frenzy_cli::non_empty());
    c->add_option("--requeue-signal", a->slurm.requeue_signal_s,
                  "Seconds before the time limit at which the job requeues itself, to resume from its checkpoint; 0 = never "
                  "(default 300)")->check(frenzy_cli::finite_number(frenzy::bounds::seconds));
    c->add_option("--max-time", a->max_time,
                  "The partition's longest --time (Slurm's format: 2-00:00:00, 48:00:00, ...; \"sinfo\" reads it for "
                  "--partition): a longer run's limit is capped at it and the run resumes over requeued jobs");
    c->add_option("--checkpoint-every", a->checkpoint_every,
                  "Seconds of training between checkpoints: the save interval in steps at the predicted step time "
                  "(default 1800)")->check(CLI::PositiveNumber);
    frenzy_cli::add_margin(c, a->margin);
    c->add_flag("--json", a->json, "Print the plan, the job and the files written as JSON");
    c->callback([a] { run_launch(*a); });

    auto b = std::make_shared<import_args>();
    auto* i = app.add_subcommand("import", "Read a launcher configuration into a job spec (printed as job JSON)");
    i->add_option("--from", b->from, "KIND:FILE, KIND = " + frenzy::importer_names() + " (the launchers that read their files back)")->required();
    i->add_option("--model", b->model, "Model preset (for configurations that do not describe the model: all but megatron's)");
    i->add_option("--hf-config", b->hf_config, "Hugging Face config.json for the model instead")->check(CLI::ExistingFile);
    i->add_option("--name", b->name, "Job name");
    i->add_option("--world-size", b->world_size, "GPUs, when the configuration does not start the processes")->check(frenzy_cli::whole_number(frenzy::bounds::gpus));
    i->add_option("--seq-len", b->seq_len, "Sequence length (DeepSpeed: ds_config has none)")->check(frenzy_cli::whole_number(frenzy::bounds::seq_len));
    i->add_option("--total-tokens", b->total_tokens, "Training budget in tokens (DeepSpeed): 1e12, 1T, 300B, 50M")
        ->transform(frenzy_cli::count_suffix())
        ->check(frenzy_cli::finite_number(frenzy::bounds::tokens));
    i->add_option("--tp", b->tp, "Tensor-parallel degree the DeepSpeed training script sets")->check(frenzy_cli::whole_number(frenzy::bounds::degree));
    i->add_option("--pp", b->pp, "Pipeline-parallel degree the DeepSpeed training script sets")->check(frenzy_cli::whole_number(frenzy::bounds::degree));
    i->add_option("--cp", b->cp, "Context-parallel degree the DeepSpeed training script sets")->check(frenzy_cli::whole_number(frenzy::bounds::degree));
    i->add_option("--ep", b->ep, "Expert-parallel degree the DeepSpeed training script sets")->check(frenzy_cli::whole_number(frenzy::bounds::degree));
    i->add_flag("--json", b->json, "Print {job, ignored, not_understood, notes} as JSON");
    i->callback([b] { run_import(*b); });
}
