#pragma once
// Parsing of Slurm's command output: `sinfo --json` (nodes, states, typed GPU GRES and what is allocated),
// `squeue --json` (jobs), `scontrol show job -o` / `scontrol show node -o` (one-line key=value records; Slurm
// 22.05's scontrol has no --json, that came with 23.02) and `sbatch --parsable`. Every error names the command and
// the field. Field names follow Slurm 22.05's data_parser openapi/v0.0.38 (SchedMD/slurm, tag slurm-22-05-8-1,
// src/plugins/openapi/v0.0.38/nodes.c and jobs.c).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/text.hpp"

namespace frenzy {

/// One typed GRES entry, e.g. `gpu:a100:8` -> {name "gpu", type "a100", count 8}; type is "" when untyped.
struct slurm_gres {
    std::string name;
    std::string type;
    int count = 0;
    bool operator==(const slurm_gres&) const = default;
};

/// One node as sinfo reports it.
struct slurm_node {
    std::string name;
    std::string state;                ///< base state, lowercase: idle | mixed | allocated | down | ...
    std::vector<std::string> flags;   ///< state flags, uppercase: DRAIN, NOT_RESPONDING, ...
    std::vector<slurm_gres> gres;     ///< configured
    std::vector<slurm_gres> gres_used;
    std::string reason;
    std::vector<std::string> partitions;

    bool has_flag(std::string_view f) const { return std::find(flags.begin(), flags.end(), f) != flags.end(); }
    /// Can take new work: up and neither drained nor failing.
    bool usable() const {
        static constexpr std::string_view ok[] = {"idle", "mixed", "allocated", "completing"};
        if (std::find(std::begin(ok), std::end(ok), state) == std::end(ok)) return false;
        for (std::string_view f : {"DRAIN", "DRAINING", "DRAINED", "NOT_RESPONDING", "FAIL", "MAINT", "POWERED_DOWN",
                                   "POWER_DOWN", "REBOOT_REQUESTED", "REBOOT_ISSUED"})
            if (has_flag(f)) return false;
        return true;
    }
    /// GPUs of the node: (type, count) of its first `gpu` GRES with the largest count; {"", 0} when none.
    slurm_gres gpus() const {
        slurm_gres best{"gpu", "", 0};
        for (const auto& g : gres)
            if (g.name == "gpu" && g.count > best.count) best = g;
        return best;
    }
    int gpus_used() const {
        int n = 0;
        for (const auto& g : gres_used)
            if (g.name == "gpu") n += g.count;
        return n;
    }
};

/// One job as squeue or scontrol reports it.
struct slurm_job {
    std::int64_t job_id = 0;
    std::string name;
    std::string comment;
    std::string state;                 ///< uppercase: PENDING | RUNNING | COMPLETED | FAILED | NODE_FAIL | ...
    std::string reason;
    std::vector<std::string> nodes;    ///< expanded node list ("a100-[1-2]" -> a100-1, a100-2)
    int node_count = 0;
    int exit_code = 0;
    std::string tres_per_node;         ///< e.g. "gres:gpu:a100:6"
    std::string tres_per_job;          ///< e.g. "gres:gpu:a100:12"
    /// A heterogeneous job's id (its first component's job id; 0 = not one) and this component's offset in it.
    /// Every component is its own squeue entry, with the job's comment (slurm.schedmd.com/heterogeneous_jobs.html).
    std::int64_t het_job_id = 0;
    std::int64_t het_job_offset = 0;

    /// A later component of a heterogeneous job (the first one stands for the whole job: its id is the job's).
    bool het_follower() const { return het_job_id > 0 && job_id != het_job_id; }

    /// The job ended (it will not run again by itself).
    bool finished() const {
        static constexpr std::string_view done[] = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                                                    "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY",
                                                    "SPECIAL_EXIT", "REVOKED"};
        return std::find(std::begin(done), std::end(done), state) != std::end(done);
    }
};

namespace detail {

[[noreturn]] inline void slurm_fail(std::string_view command, const std::string& field, const std::string& what) {
    throw io_error(std::string(command) + ": " + field + ": " + what);
}

inline int slurm_parse_int(std::string_view s, std::string_view command, const std::string& field) {
    if (s.empty() || s.size() > 9) slurm_fail(command, field, "\"" + std::string(s) + "\" is not a count");
    int v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') slurm_fail(command, field, "\"" + std::string(s) + "\" is not a count");
        v = v * 10 + (c - '0');
    }
    return v;
}

/// Splits on `sep` outside brackets and parentheses ("a[1-2],b" -> "a[1-2]", "b").
inline std::vector<std::string_view> split_top(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i) {
        if (i < s.size() && (s[i] == '[' || s[i] == '(')) ++depth;
        if (i < s.size() && (s[i] == ']' || s[i] == ')')) --depth;
        if (i == s.size() || (s[i] == sep && depth == 0)) {
            out.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    }
    return out;
}

inline const nlohmann::json& slurm_member(const nlohmann::json& o, const char* key, std::string_view command,
                                          const std::string& path) {
    if (!o.is_object()) slurm_fail(command, path, "expected an object");
    auto it = o.find(key);
    if (it == o.end()) slurm_fail(command, path + "." + key, "missing");
    return *it;
}

inline std::string slurm_string(const nlohmann::json& o, const char* key, std::string_view command, const std::string& path,
                                bool required = true) {
    if (!required && (!o.contains(key) || o.at(key).is_null())) return {};
    const auto& v = slurm_member(o, key, command, path);
    if (!v.is_string()) slurm_fail(command, path + "." + key, "expected a string, got " + std::string(v.type_name()));
    return v.get<std::string>();
}

inline std::int64_t slurm_integer(const nlohmann::json& o, const char* key, std::string_view command, const std::string& path,
                                  bool required = true) {
    if (!required && (!o.contains(key) || o.at(key).is_null())) return 0;
    const auto& v = slurm_member(o, key, command, path);
    if (!v.is_number_integer()) slurm_fail(command, path + "." + key, "expected an integer, got " + std::string(v.type_name()));
    return v.get<std::int64_t>();
}

/// Parses the whole document and checks Slurm's own `errors` array.
inline nlohmann::json slurm_document(std::string_view text, std::string_view command, const char* list) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::parse_error& e) {
        slurm_fail(command, "output", std::string("is not valid JSON (") + e.what() + ")");
    }
    if (!j.is_object()) slurm_fail(command, "output", "expected a JSON object");
    if (j.contains("errors")) {
        const auto& errs = j.at("errors");
        if (!errs.is_array()) slurm_fail(command, "errors", "expected an array");
        if (!errs.empty()) {
            std::string msg;
            for (const auto& e : errs) {
                if (!msg.empty()) msg += "; ";
                if (e.is_object() && e.contains("description") && e.at("description").is_string())
                    msg += e.at("description").get<std::string>();
                else if (e.is_object() && e.contains("error") && e.at("error").is_string())
                    msg += e.at("error").get<std::string>();
                else msg += e.dump();
            }
            slurm_fail(command, "errors", "Slurm reported: " + msg);
        }
    }
    const auto& l = slurm_member(j, list, command, "output");
    if (!l.is_array()) slurm_fail(command, list, "expected an array");
    return j;
}

}  // namespace detail

/// Expands a Slurm host list: "a100-[1-2,5],t4-1" -> a100-1, a100-2, a100-5, t4-1 (zero padding kept).
inline std::vector<std::string> expand_hostlist(std::string_view list, std::string_view command = "hostlist",
                                                const std::string& field = "nodes") {
    std::vector<std::string> out;
    if (list.empty() || list == "(null)" || list == "None assigned") return out;
    for (auto item : detail::split_top(list, ',')) {
        if (item.empty()) detail::slurm_fail(command, field, "empty host name in \"" + std::string(list) + "\"");
        const auto lb = item.find('[');
        if (lb == std::string_view::npos) {
            out.emplace_back(item);
            continue;
        }
        const auto rb = item.find(']', lb);
        if (rb == std::string_view::npos) detail::slurm_fail(command, field, "unbalanced '[' in \"" + std::string(list) + "\"");
        const std::string prefix(item.substr(0, lb)), suffix(item.substr(rb + 1));
        for (auto range : frenzy::split(item.substr(lb + 1, rb - lb - 1), ',')) {
            const auto dash = range.find('-');
            const auto a = range.substr(0, dash);
            const auto b = dash == std::string_view::npos ? a : range.substr(dash + 1);
            const int lo = detail::slurm_parse_int(a, command, field), hi = detail::slurm_parse_int(b, command, field);
            if (hi < lo || hi - lo > bounds::hostlist_range) detail::slurm_fail(command, field, "bad range \"" + std::string(range) + "\"");
            for (int k = lo; k <= hi; ++k) {
                std::string num = std::to_string(k);
                if (num.size() < a.size()) num.insert(0, a.size() - num.size(), '0');
                out.push_back(prefix + num + suffix);
            }
        }
    }
    return out;
}

/// Parses a GRES string: "gpu:a100:8,gpu:v100:2(S:0)", "gpu:a100:6(IDX:0-5)", "gres:gpu:t4:4" (squeue's
/// tres_per_node), "gpu:4" (untyped). "(null)", "N/A" and "" give no entries.
inline std::vector<slurm_gres> parse_gres(std::string_view s, std::string_view command = "gres", const std::string& field = "gres") {
    std::vector<slurm_gres> out;
    if (s.empty() || s == "(null)" || s == "N/A") return out;
    for (auto item : detail::split_top(s, ',')) {
        if (auto p = item.find('('); p != std::string_view::npos) item = item.substr(0, p);
        if (item.rfind("gres:", 0) == 0) item = item.substr(5);
        if (item.rfind("gres/", 0) == 0) item = item.substr(5);
        auto parts = frenzy::split(item, ':');
        slurm_gres g;
        if (parts.empty() || parts[0].empty()) detail::slurm_fail(command, field, "empty GRES entry in \"" + std::string(s) + "\"");
        g.name = std::string(parts[0]);
        if (parts.size() == 1) g.count = 1;
        else if (parts.size() == 2) {
            // "gpu:4" (count) or "gpu:a100" (type, count 1)
            const bool digits = !parts[1].empty() && std::all_of(parts[1].begin(), parts[1].end(), [](char c) { return c >= '0' && c <= '9'; });
            if (digits) g.count = detail::slurm_parse_int(parts[1], command, field);
            else {
                g.type = std::string(parts[1]);
                g.count = 1;
            }
        } else if (parts.size() == 3) {
            g.type = std::string(parts[1]);
            g.count = detail::slurm_parse_int(parts[2], command, field);
        } else detail::slurm_fail(command, field, "\"" + std::string(item) + "\" is not name[:type][:count]");
        out.push_back(std::move(g));
    }
    return out;
}

/// Nodes of `sinfo --json` (Slurm 22.05: a top-level "nodes" array).
inline std::vector<slurm_node> parse_sinfo_json(std::string_view text, std::string_view command = "sinfo --json") {
    const auto j = detail::slurm_document(text, command, "nodes");
    std::vector<slurm_node> out;
    const auto& arr = j.at("nodes");
    for (std::size_t i = 0; i < arr.size(); ++i) {
        const std::string path = "nodes[" + std::to_string(i) + "]";
        const auto& n = arr[i];
        slurm_node s;
        s.name = detail::slurm_string(n, "name", command, path);
        if (s.name.empty()) detail::slurm_fail(command, path + ".name", "empty");
        const std::string p = path + " (" + s.name + ")";
        s.state = detail::slurm_string(n, "state", command, p);
        std::transform(s.state.begin(), s.state.end(), s.state.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (n.contains("state_flags")) {
            const auto& f = n.at("state_flags");
            if (!f.is_array()) detail::slurm_fail(command, p + ".state_flags", "expected an array");
            for (const auto& x : f) {
                if (!x.is_string()) detail::slurm_fail(command, p + ".state_flags", "expected strings");
                s.flags.push_back(x.get<std::string>());
            }
        }
        s.gres = parse_gres(detail::slurm_string(n, "gres", command, p), command, p + ".gres");
        s.gres_used = parse_gres(detail::slurm_string(n, "gres_used", command, p, false), command, p + ".gres_used");
        s.reason = detail::slurm_string(n, "reason", command, p, false);
        if (n.contains("partitions") && n.at("partitions").is_array())
            for (const auto& x : n.at("partitions"))
                if (x.is_string()) s.partitions.push_back(x.get<std::string>());
        out.push_back(std::move(s));
    }
    return out;
}

/// Jobs of `squeue --json` (Slurm 22.05: a top-level "jobs" array).
inline std::vector<slurm_job> parse_squeue_json(std::string_view text, std::string_view command = "squeue --json") {
    const auto j = detail::slurm_document(text, command, "jobs");
    std::vector<slurm_job> out;
    const auto& arr = j.at("jobs");
    for (std::size_t i = 0; i < arr.size(); ++i) {
        const std::string path = "jobs[" + std::to_string(i) + "]";
        const auto& o = arr[i];
        slurm_job s;
        s.job_id = detail::slurm_integer(o, "job_id", command, path);
        if (s.job_id <= 0) detail::slurm_fail(command, path + ".job_id", std::to_string(s.job_id) + " is not a job id");
        const std::string p = path + " (job " + std::to_string(s.job_id) + ")";
        s.name = detail::slurm_string(o, "name", command, p);
        s.comment = detail::slurm_string(o, "comment", command, p, false);
        s.state = detail::slurm_string(o, "job_state", command, p);
        if (s.state.empty()) detail::slurm_fail(command, p + ".job_state", "empty");
        s.reason = detail::slurm_string(o, "state_reason", command, p, false);
        s.nodes = expand_hostlist(detail::slurm_string(o, "nodes", command, p, false), command, p + ".nodes");
        s.node_count = static_cast<int>(detail::slurm_integer(o, "node_count", command, p, false));
        if (o.contains("exit_code") && o.at("exit_code").is_number_integer()) s.exit_code = o.at("exit_code").get<int>();
        s.tres_per_node = detail::slurm_string(o, "tres_per_node", command, p, false);
        s.tres_per_job = detail::slurm_string(o, "tres_per_job", command, p, false);
        s.het_job_id = detail::slurm_integer(o, "het_job_id", command, p, false);
        s.het_job_offset = detail::slurm_integer(o, "het_job_offset", command, p, false);
        if (s.het_job_id < 0 || s.het_job_offset < 0)
            detail::slurm_fail(command, p + ".het_job_id", "negative heterogeneous job id or offset");
        out.push_back(std::move(s));
    }
    return out;
}

/// Splits one record of `scontrol show ... -o` into key=value pairs. Values run to the next " Key=" (values such
/// as Comment may hold spaces; keys are [A-Za-z/:_]+ directly followed by '=').
inline std::map<std::string, std::string> parse_scontrol_record(std::string_view line, std::string_view command = "scontrol show -o") {
    std::map<std::string, std::string> kv;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) detail::slurm_fail(command, "output", "empty");
    auto is_key_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == ':' || c == '_'; };
    // Positions where a key starts: line start or after a space, then key chars, then '='.
    std::vector<std::pair<std::size_t, std::size_t>> keys;  // (key start, '=' position)
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (i != 0 && line[i - 1] != ' ') continue;
        std::size_t k = i;
        while (k < line.size() && is_key_char(line[k])) ++k;
        if (k > i && k < line.size() && line[k] == '=') keys.push_back({i, k});
    }
    if (keys.empty() || keys.front().first != 0)
        detail::slurm_fail(command, "output", "expected Key=Value pairs, got \"" + std::string(line.substr(0, 60)) + "\"");
    for (std::size_t n = 0; n < keys.size(); ++n) {
        const auto [ks, eq] = keys[n];
        std::size_t end = n + 1 < keys.size() ? keys[n + 1].first : line.size();
        while (end > eq + 1 && line[end - 1] == ' ') --end;
        kv[std::string(line.substr(ks, eq - ks))] = std::string(line.substr(eq + 1, end - eq - 1));
    }
    return kv;
}

/// One job of `scontrol show job -o ID`.
inline slurm_job parse_scontrol_job(std::string_view text, std::string_view command = "scontrol show job -o") {
    const auto kv = parse_scontrol_record(text, command);
    auto need = [&](const char* k) -> const std::string& {
        auto it = kv.find(k);
        if (it == kv.end()) detail::slurm_fail(command, k, "missing");
        return it->second;
    };
    auto opt = [&](const char* k) -> std::string {
        auto it = kv.find(k);
        return it == kv.end() || it->second == "(null)" ? std::string{} : it->second;
    };
    slurm_job s;
    const auto& id = need("JobId");
    s.job_id = detail::slurm_parse_int(id, command, "JobId");
    s.name = need("JobName");
    s.state = need("JobState");
    s.reason = opt("Reason");
    s.comment = opt("Comment");
    s.nodes = expand_hostlist(opt("NodeList"), command, "NodeList");
    if (auto n = opt("NumNodes"); !n.empty()) {
        // "2" or "1-2" while pending
        s.node_count = detail::slurm_parse_int(n.substr(0, n.find('-')), command, "NumNodes");
    }
    if (auto e = opt("ExitCode"); !e.empty()) s.exit_code = detail::slurm_parse_int(e.substr(0, e.find(':')), command, "ExitCode");
    s.tres_per_node = opt("TresPerNode");
    s.tres_per_job = opt("TresPerJob");
    return s;
}

/// The job id of `sbatch --parsable` ("123" or "123;cluster").
inline std::int64_t parse_sbatch_parsable(std::string_view text, std::string_view command = "sbatch --parsable") {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
    // sbatch may print warnings before the id on earlier lines; the id is the last line.
    if (auto nl = text.rfind('\n'); nl != std::string_view::npos) text = text.substr(nl + 1);
    const auto id = text.substr(0, text.find(';'));
    if (id.empty()) detail::slurm_fail(command, "job id", "output is empty");
    const int v = detail::slurm_parse_int(id, command, "job id");
    if (v <= 0) detail::slurm_fail(command, "job id", "\"" + std::string(id) + "\" is not a job id");
    return v;
}

}  // namespace frenzy
