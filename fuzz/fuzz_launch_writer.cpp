// libFuzzer target: the launch writer (launch/launch.hpp and frameworks/*/launcher.hpp) behind `frenzy launch` and
// `frenzy serve`. The input is split at NUL bytes into the texts a user controls: the job's name, the model's name,
// the GRES type, torchtrun's run command, the torchtitan base recipe, the time margin, and the Slurm partition,
// account, qos and memory. Each launcher of the catalog (frameworks/launchers.hpp: llm-foundry and hf
// too; hf also a LoRA fine-tune) writes its files for them; when it accepts them, every file must have exactly as many lines as it has for plain values
// ("x", "a100", ...; the model's name with its control characters replaced, as it picks torchtitan's base), hold no control character but newline and tab, and the batch script's #SBATCH lines must all
// come before its first command: input text never adds a line, so it never becomes a line of code. Rejections
// end as frenzy::error.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "frenzy/launch/launch.hpp"
#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/model/presets.hpp"
#include "fuzz_common.hpp"

namespace {

std::vector<std::string> fields(std::string_view in, std::size_t n) {
    std::vector<std::string> f;
    std::size_t pos = 0;
    while (f.size() + 1 < n) {
        const auto z = in.find('\0', pos);
        if (z == std::string_view::npos) break;
        f.emplace_back(in.substr(pos, z - pos));
        pos = z + 1;
    }
    f.emplace_back(in.substr(std::min(pos, in.size())));
    while (f.size() < n) f.emplace_back();
    return f;
}

frenzy::plan plan_of(const frenzy::job_spec& j) {
    frenzy::plan p;
    p.gpu = "h100-80g";
    p.gpus = static_cast<int>(j.parallel.gpus());
    p.nodes = 1;
    p.gpus_per_node = p.gpus;
    p.framework = j.runtime.framework;
    p.precision = j.training.precision;
    p.parallel = j.parallel;
    p.micro_batch = j.training.micro_batch;
    p.step_time = frenzy::seconds{2.5};
    p.tokens_per_s = j.tokens_per_step() / 2.5;
    p.est_time = frenzy::seconds{3600};
    p.has_budget = true;
    return p;
}

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

void check_structure(const std::vector<frenzy::launch_file>& got, const std::vector<frenzy::launch_file>& plain) {
    if (got.size() != plain.size()) std::abort();
    for (std::size_t i = 0; i < got.size(); ++i) {
        const auto& c = got[i].content;
        if (got[i].name != plain[i].name || lines(c) != lines(plain[i].content)) std::abort();
        for (unsigned char ch : c)
            if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f) std::abort();
        if (got[i].name != "launch.sbatch") continue;
        bool command_seen = false;  // sbatch stops reading #SBATCH at the first command
        std::size_t start = 0;
        while (start < c.size()) {
            const auto end = c.find('\n', start);
            const std::string_view line(c.data() + start, (end == std::string::npos ? c.size() : end) - start);
            if (line.rfind("#SBATCH", 0) == 0 && command_seen) std::abort();
            if (!line.empty() && line[0] != '#') command_seen = true;
            start = end == std::string::npos ? c.size() : end + 1;
        }
    }
}

/// The jobs each launcher writes, on its first framework: a run from scratch (a full fine-tune where it writes only
/// fine-tunes) and a LoRA fine-tune where it writes adapters (launcher_traits::methods).
std::vector<frenzy::job_spec> jobs_for(frenzy::launcher l) {
    using frenzy::finetune_method;
    frenzy::job_spec j;
    j.model = frenzy::preset("gpt2");
    j.training = {.seq_len = 1024, .micro_batch = 1, .global_batch = 8, .total_tokens = 1e9};
    j.runtime.framework = frenzy::framework{*l->runs[0]};
    j.parallel.dp = 8;
    const auto writes = [&](finetune_method m) { return (l->methods & frenzy::method_bits({m})) != 0; };
    j.training.finetune.method = writes(finetune_method::none) ? finetune_method::none : finetune_method::full;
    std::vector<frenzy::job_spec> out{j};
    if (writes(finetune_method::lora)) {
        j.training.finetune.method = finetune_method::lora;
        out.push_back(j);
    }
    return out;
}

void write_one(frenzy::launcher l, frenzy::job_spec j, const std::vector<std::string>& f) {
    // the plain values, given where the input gives one (a base recipe or run command changes which lines exist)
    frenzy::launch_options plain_o;
    plain_o.launcher = l;
    if (!f[2].empty()) plain_o.gres_names["h100-80g"] = "a100";
    if (!f[3].empty()) plain_o.run_command = "train.py --x 1";
    if (!f[4].empty()) plain_o.base_config = "m.n:f";
    if (!f[5].empty()) plain_o.time_margin = std::strtod(f[5].c_str(), nullptr);  // a number, not text
    if (!f[6].empty()) plain_o.partition = "p";
    if (!f[7].empty()) plain_o.account = "a";
    if (!f[8].empty()) plain_o.qos = "q";
    if (!f[9].empty()) plain_o.mem = "1G";
    // the model's name picks torchtitan's base recipe: the plain one differs only in control characters
    std::string model_name = f[1];
    for (auto& c : model_name)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = 'x';
    j.name = "x";
    j.model.name = model_name;
    std::vector<frenzy::launch_file> plain;
    try {
        plain = frenzy::launch_files(j, plan_of(j), plain_o);
    } catch (const frenzy::error&) {
        return;  // the launcher refuses this layout whatever the names
    }
    try {
        auto o = plain_o;
        j.name = f[0];
        j.model.name = f[1];
        if (!f[2].empty()) o.gres_names["h100-80g"] = f[2];
        o.run_command = f[3];
        o.base_config = f[4];
        o.partition = f[6];
        o.account = f[7];
        o.qos = f[8];
        o.mem = f[9];
        check_structure(frenzy::launch_files(j, plan_of(j), o), plain);
    } catch (const frenzy::error&) {
    }
}

void write_all(std::string_view input) {
    const auto f = fields(input, 10);
    for (const auto l : frenzy::launcher_catalog())  // every launcher this program knows, by its registry
        for (auto& j : jobs_for(l)) write_one(l, std::move(j), f);
}

}  // namespace

FRENZY_FUZZ_TARGET({ write_all(input); })
