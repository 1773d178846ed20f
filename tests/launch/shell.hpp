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

}  // namespace launch_shell
