#pragma once
// What the launch tests share to run what `frenzy launch` writes: a shell command's exit status and output, a
// file's text, the lines of a text.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

namespace launch_shell {

/// Runs `cmd` with /bin/sh, returns its exit status (-1 when killed by a signal) and standard output.
inline std::pair<int, std::string> run(const std::string& cmd) {
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    while (auto n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int st = pclose(p);
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

/// The file's bytes ("" when it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline std::vector<std::string> lines_of(const std::string& s) {
    std::vector<std::string> v;
    std::istringstream in(s);
    std::string l;
    while (std::getline(in, l)) v.push_back(l);
    return v;
}

/// The dotted key paths of a YAML file as the launchers write it (two-space indents, one `key:` a line; comments and
/// list items skipped): "a:\n  b: 1" -> {"a", "a.b"}. `skip_section`'s keys below its top level are left out
/// (llm-foundry's `variables:` holds the run's own names, not TrainConfig fields).
inline std::vector<std::string> yaml_key_paths(const std::string& text, const std::string& skip_section = {}) {
    std::vector<std::string> out, stack;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const auto first = line.find_first_not_of(' ');
        if (first == std::string::npos || line[first] == '#' || line[first] == '-') continue;
        const auto colon = line.find(':', first);
        REQUIRE(colon != std::string::npos);
        stack.resize(first / 2);
        stack.push_back(line.substr(first, colon - first));
        std::string path;
        for (const auto& k : stack) path += (path.empty() ? "" : ".") + k;
        if (skip_section.empty() || stack.front() != skip_section || stack.size() == 1) out.push_back(path);
    }
    return out;
}

/// Runs what `frenzy launch` wrote as Slurm would, in `dir` (created; the files written into it): launch.sbatch by
/// bash with Slurm's variables (one node, job 7, submitted from /sub unless `env` says otherwise), scontrol stubbed
/// (one host), srun stubbed to run its command once, and the programs the launchers start stubbed to print what they
/// were given, one argument a line: torchrun and `tune run` without their own --options, `accelerate launch` and
/// python as called. `env` goes before bash ("NAME=value ..."). Exit status and output (stderr too).
/// `extra` defines more stubs (bash functions, exported), or replaces these.
template <class Files>
std::pair<int, std::string> run_launch_files(const Files& files, const std::string& env, const std::filesystem::path& dir,
                                             const std::string& extra = "") {
    std::filesystem::create_directories(dir);
    for (const auto& f : files) std::ofstream(dir / f.name, std::ios::binary) << f.content;
    const std::string stubs =
        "scontrol() { echo node1; }; srun() { while [[ $1 == --* ]]; do shift; done; \"$@\"; }; "
        "torchrun() { while [[ $1 == --* ]]; do shift 2; done; printf \"%s\\n\" \"$@\"; }; "
        "tune() { shift; while [[ $1 == --* ]]; do shift 2; done; printf \"%s\\n\" \"$@\"; }; "
        "accelerate() { printf \"%s\\n\" accelerate \"$@\"; }; python() { printf \"%s\\n\" python \"$@\"; }; " + extra +
        "export -f scontrol srun torchrun tune accelerate python; ";
    return run("cd '" + dir.string() + "' && env -i PATH=\"$PATH\" HOME=/home/u SLURM_JOB_NODELIST=node1 SLURM_JOB_ID=7 "
               "SLURM_SUBMIT_DIR=/sub " + env + " bash -c '" + stubs + "bash launch.sbatch' 2>&1");
}

/// The value after `flag` in the printed arguments of run_launch_files ("" when absent), or the value of a
/// `key=value` argument when `flag` ends with '='.
inline std::string printed_value(const std::string& printed, const std::string& flag) {
    std::istringstream in(printed);
    for (std::string l; std::getline(in, l);) {
        if (!flag.empty() && flag.back() == '=' && l.rfind(flag, 0) == 0) return l.substr(flag.size());
        if (l == flag) return std::getline(in, l) ? l : "";
    }
    return "";
}

}  // namespace launch_shell
