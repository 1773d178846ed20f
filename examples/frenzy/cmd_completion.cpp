// `frenzy completion bash|zsh|fish`: a shell completion script made from the CLI's own subcommands and options,
// so it never lists an option that does not exist or misses one that does.
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"
#include "frenzy/core/precision.hpp"
#include "frenzy/frameworks/registry.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/sched/policy_registry.hpp"

namespace {

/// "--model --gpu ..." of a subcommand: every long and short name of its options, and --help.
std::string option_words(const CLI::App& sub) {
    std::string out = "--help";
    for (const auto* o : sub.get_options()) {
        for (const auto& l : o->get_lnames())
            if (l != "help") out += " --" + l;
        for (const auto& s : o->get_snames())
            if (s != "h") out += " -" + s;
    }
    return out;
}

/// The values an option takes, where the CLI knows them all (issue 55: --model, --gpu and --framework completed
/// nothing): the model presets, the GPU catalog, the frameworks, the precisions and the scheduling policies.
std::vector<std::pair<std::string, std::string>> option_values() {
    std::string models, gpus, precisions;
    for (const auto& p : frenzy::model_presets()) models += (models.empty() ? "" : " ") + p.spec.name;
    const frenzy::gpu_catalog catalog;  // named: types() is a view into it (a temporary's died before the loop)
    for (const auto& g : catalog.types()) gpus += (gpus.empty() ? "" : " ") + g.name;
    for (const auto& [v, name] : frenzy::enum_names<frenzy::precision>::table)
        precisions += (precisions.empty() ? "" : " ") + std::string(name);
    std::string policies;
    for (const auto& n : frenzy::policy_names()) policies += (policies.empty() ? "" : " ") + n;
    return {{"--model", models}, {"--gpu", gpus}, {"--framework", frenzy::framework_names(" ")},
            {"--precision", precisions}, {"--policy", policies}};
}

std::string sub_words(const CLI::App& app) {
    std::string out;
    for (const auto* s : app.get_subcommands({})) out += (out.empty() ? "" : " ") + s->get_name();
    return out;
}

/// The bash function: walking the words typed so far, a word that names a subcommand of the one reached descends
/// into it (`trace synth`); then an option-like word completes that subcommand's options, any other word its
/// subcommands, or files.
std::string bash_script(const CLI::App& app) {
    std::string values;
    for (const auto& [opt, words] : option_values())
        values += fmt::format("    {}) COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return ;;\n", opt, words);
    std::string cases;
    for (const auto* s : app.get_subcommands({})) {
        cases += fmt::format("      {}) opts=\"{}\"; subs=\"{}\" ;;\n", s->get_name(), option_words(*s), sub_words(*s));
        for (const auto* n : s->get_subcommands({}))
            cases += fmt::format("      {}/{}) opts=\"{}\"; subs=\"\" ;;\n", s->get_name(), n->get_name(), option_words(*n));
    }
    return fmt::format(R"(# bash completion of frenzy (frenzy completion bash); load it with: source <(frenzy completion bash)
_frenzy() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" path="" i w opts="--help --version" subs="{1}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${{COMP_WORDS[i]}}"
    case " $subs " in *" $w "*) ;; *) continue ;; esac
    path="${{path:+$path/}}$w"
    case "$path" in
{0}      *) opts=""; subs="" ;;
    esac
  done
  case "${{COMP_WORDS[COMP_CWORD-1]}}" in
{2}  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [ -n "$subs" ]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -o bashdefault -F _frenzy frenzy
)",
                       cases, sub_words(app), values);
}

std::string fish_script(const CLI::App& app) {
    std::string out = "# fish completion of frenzy (frenzy completion fish); load it with: frenzy completion fish | source\n"
                      "complete -c frenzy -f\n";
    auto quoted = [](std::string s) {  // fish single quotes: \\ and \' escaped; one line
        std::string q;
        for (char c : s) {
            if (c == '\n') break;
            if (c == '\\' || c == '\'') q += '\\';
            q += c;
        }
        return "'" + q + "'";
    };
    const auto values = option_values();
    for (const auto* s : app.get_subcommands({})) {
        out += fmt::format("complete -c frenzy -n __fish_use_subcommand -a {} -d {}\n", s->get_name(), quoted(s->get_description()));
        for (const auto* o : s->get_options())
            for (const auto& l : o->get_lnames()) {
                if (l == "help") continue;
                std::string takes;  // -x -a 'WORDS': the option's values where the CLI knows them
                for (const auto& [opt, words] : values)
                    if (opt == "--" + l) takes = " -x -a " + quoted(words);
                out += fmt::format("complete -c frenzy -n '__fish_seen_subcommand_from {}' -l {}{} -d {}\n", s->get_name(), l,
                                   takes, quoted(o->get_description()));
            }
        for (const auto* n : s->get_subcommands({}))
            out += fmt::format("complete -c frenzy -n '__fish_seen_subcommand_from {}' -a {} -d {}\n", s->get_name(),
                               n->get_name(), quoted(n->get_description()));
    }
    return out + "complete -c frenzy -n 'not __fish_use_subcommand' -F\n";
}

}  // namespace

void frenzy_cli::add_completion(CLI::App& app) {
    auto shell = std::make_shared<std::string>();
    auto* c = app.add_subcommand("completion", "Print a shell completion script: bash, zsh or fish");
    c->footer("bash: source <(frenzy completion bash)   (or save it under /etc/bash_completion.d/frenzy)\n"
              "zsh:  source <(frenzy completion zsh)    (bash's script through zsh's bashcompinit)\n"
              "fish: frenzy completion fish | source");
    c->add_option("shell", *shell, "bash | zsh | fish")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
    c->callback([&app, shell] {
        if (*shell == "fish") fmt::print("{}", fish_script(app));
        else if (*shell == "zsh") fmt::print("# zsh completion of frenzy: bash's, through bashcompinit\nautoload -U +X bashcompinit && bashcompinit\n{}", bash_script(app));
        else fmt::print("{}", bash_script(app));
    });
}
