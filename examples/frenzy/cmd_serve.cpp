// `frenzy serve`: the long-running service in front of Slurm (HAS, or the policy --policy names, decides; Slurm runs;
// SQLite remembers), and its clients `frenzy submit`, `frenzy status`, `frenzy cancel`. Built only when frenzy::service is (SQLite, httplib).
#ifdef FRENZY_HAS_SERVICE
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <regex>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/service/http.hpp"

namespace {

std::atomic<bool> g_stop{false};
httplib::Server* g_server = nullptr;

extern "C" void on_signal(int) {
    g_stop = true;
    if (g_server) g_server->stop();
}

std::string read_text_file(const std::string& path, const std::string& field) {
    try {
        return frenzy::read_file_limited(path, frenzy::bounds::request_bytes);  // regular files only (/dev/zero hung), 1 MiB at most
    } catch (const frenzy::error& e) {
        throw frenzy::config_error(field + ": " + e.what());
    }
}

/// --server must be http(s)://HOST[:PORT][/...] with a port in 1..65535 (cpp-httplib's own parse of a bad port threw
/// "a value that should be a number is not a number", naming nothing).
std::string checked_server(const std::string& url) {
    static const std::regex pat(R"(^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:([0-9]{1,5}))?(/[!-~]*)?$)");
    std::smatch m;
    if (!std::regex_match(url, m, pat) || (m[3].matched && !frenzy::within(frenzy::parse_int64(m[3].str(), "--server port"), frenzy::bounds::port)))
        throw frenzy::config_error("--server=\"" + frenzy::printable(url) +
                                   "\" must be http://HOST:PORT (or https://), port in " +
                                   std::to_string(frenzy::bounds::port.min) + ".." + std::to_string(frenzy::bounds::port.max));
    return url;
}

std::string read_token(const std::string& path) {
    auto t = read_text_file(path, "--token-file");
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
    if (t.size() < 16) throw frenzy::config_error("--token-file=" + path + ": the token must be at least 16 characters");
    return t;
}

struct serve_args {
    bool slurm = false, mixed = false;
    std::string state, listen = "127.0.0.1:8470", token_file, gres_map, run_command, partition, decision_log, output_dir;
    std::string policy = "has";
    double tick_s = 1.0, slurm_timeout_s = 20, slurm_wait_s = 0;
    std::size_t max_body = frenzy::bounds::request_bytes;
};

/// Starts the engine, asking Slurm again every second until it answers, a signal arrives or `limit_s` passes (0 = no
/// limit). The log is rate-limited: a line when the reason changes and one a minute while it stays the same.
template <class Note>
void wait_for_slurm(frenzy::serve_engine& eng, double limit_s, const std::string& host, int port, Note note) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string last;
    auto last_print = t0;
    for (;;) {
        try {
            eng.start();
            return;
        } catch (const frenzy::io_error& e) {
            const auto now = std::chrono::steady_clock::now();
            const double waited = std::chrono::duration<double>(now - t0).count();
            if (g_stop || (limit_s > 0 && waited >= limit_s)) throw;
            note(e.what());
            if (e.what() != last || now - last_print >= std::chrono::seconds(60)) {
                fmt::print(stderr, "frenzy serve: waiting for Slurm ({:.0f} s so far; http://{}:{} answers 503 meanwhile): {}\n",
                           waited, host, port, e.what());
                last = e.what();
                last_print = now;
            }
            std::this_thread::sleep_for(std::chrono::seconds(1));
        }
    }
}

/// --listen and --token-file, checked: a non-loopback address needs a token.
frenzy::http_options http_options_of(const serve_args& a) {
    auto [host, port] = frenzy::parse_listen(a.listen, "--listen");
    frenzy::http_options ho{host, port, {}, a.max_body, {}};
    if (!a.token_file.empty()) ho.token = read_token(a.token_file);
    if (!frenzy::is_loopback(host) && ho.token.empty())
        throw frenzy::config_error("--listen=" + a.listen + " is not a loopback address: binding there requires --token-file");
    return ho;
}

frenzy::slurm_options slurm_options_of(const serve_args& a) {
    frenzy::slurm_options so;
    so.timeout_s = a.slurm_timeout_s;
    so.partition = a.partition;
    so.run_command = a.run_command;
    so.output_dir = a.output_dir;
    return so;
}

frenzy::engine_options engine_options_of(const serve_args& a) {
    frenzy::engine_options eo;
    eo.tick_s = a.tick_s;
    eo.policy = frenzy::checked_policy_name(a.policy, "--policy", false);  // the registry's names, no "all"
    eo.planning.mixed = a.mixed;
    eo.decision_log = a.decision_log.empty() ? a.state + ".decisions.jsonl" : a.decision_log;
    return eo;
}

void run_serve(const serve_args& a) {
    if (!a.slurm) throw frenzy::config_error("--slurm is required (Slurm is the only backend of frenzy serve)");
    if (a.state.empty()) throw frenzy::config_error("--state PATH is required (the SQLite job store)");
    if (!(a.tick_s > 0)) throw frenzy::config_error("--tick must be positive");
    if (!(a.slurm_wait_s >= 0 && a.slurm_wait_s <= 1e9))
        throw frenzy::config_error("--slurm-wait=" + std::to_string(a.slurm_wait_s) + " must be 0..1e9 seconds (0: no limit)");
    const auto eo = engine_options_of(a);
    auto ho = http_options_of(a);
    const std::string host = ho.host;
    const int port = ho.port;
    frenzy::gpu_catalog catalog;
    frenzy::gres_map map;
    if (!a.gres_map.empty())
        map = a.gres_map.find('=') != std::string::npos ? frenzy::gres_map::parse(a.gres_map, catalog, "--gres-map") : frenzy::gres_map::load(a.gres_map, catalog, "--gres-map");
    frenzy::slurm_client client(slurm_options_of(a));
    frenzy::job_store store(a.state);
    frenzy::serve_engine eng(client, store, map, eo, catalog);
    // The port is bound first: while Slurm does not answer (not started yet, or not installed), the live page is
    // served and the API answers 503 with the reason, so the service can be looked at before Slurm runs.
    std::mutex wait_mu;
    std::string wait_reason = "waiting for Slurm: not asked yet";
    std::atomic<bool> ready{false};
    ho.waiting = [&]() -> std::string {
        if (ready) return "";
        std::lock_guard lk(wait_mu);
        return wait_reason;
    };
    httplib::Server svr;
    frenzy::install_routes(svr, eng, ho);
    g_server = &svr;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (!svr.bind_to_port(host.c_str(), port)) throw frenzy::config_error("--listen=" + a.listen + ": cannot bind (in use or not a local address)");
    std::thread http([&svr] { svr.listen_after_bind(); });
    const auto stop_http = [&] {
        svr.stop();
        http.join();
        g_server = nullptr;
    };
    try {
        wait_for_slurm(eng, a.slurm_wait_s, host, port, [&](const std::string& why) {
            std::lock_guard lk(wait_mu);
            wait_reason = "waiting for Slurm: " + why;
        });
    } catch (...) {
        stop_http();
        throw;
    }
    ready = true;
    const auto& inv = eng.inventory();
    for (const auto& s : inv.skipped) fmt::print(stderr, "frenzy serve: skipping node {}\n", s);
    std::thread loop([&eng] { eng.run(g_stop); });
    fmt::print("frenzy serve: {} nodes ({} GPUs), listening on http://{}:{}, state {}\n", inv.spec.nodes.size(), inv.spec.total_gpus(),
               host, port, a.state);
    std::fflush(stdout);
    http.join();  // until a signal stops the server
    g_stop = true;
    loop.join();
    g_server = nullptr;
}

struct client_args {
    std::string server = "http://127.0.0.1:8470", token_file;
    std::string job_file, id, gpu_types, deadline;
    std::int64_t max_gpus = 0;
    int priority = 0;
    bool priority_set = false;
};

httplib::Headers client_headers(const client_args& c) {
    httplib::Headers h;
    if (!c.token_file.empty()) h.emplace("Authorization", "Bearer " + read_token(c.token_file));
    return h;
}

/// Prints the server's answer; exit code 0 for 2xx, 1 otherwise (2 for 4xx: the request was wrong).
void print_reply(const httplib::Result& r, const std::string& server) {
    if (!r) throw frenzy::error("cannot reach frenzy serve at --server=" + frenzy::printable(server) + " (" + httplib::to_string(r.error()) + ")");
    fmt::print("{}", r->body);
    if (!r->body.empty() && r->body.back() != '\n') fmt::print("\n");
    if (r->status >= 400) frenzy_cli::exit_code() = r->status < 500 ? 2 : 1;
}

void run_submit(const client_args& c) {
    // strict reader (duplicate keys, depth, 1e400 named; no library text)
    auto body = frenzy::parse_json_text(read_text_file(c.job_file, "--job"), "--job=" + c.job_file);
    if (!body.is_object()) throw frenzy::config_error("--job=" + frenzy::printable(c.job_file) + ": not a JSON object");
    for (const auto& [flag, v] : {std::pair{"--deadline", &c.deadline}, {"--gpu-types", &c.gpu_types}})
        if (!frenzy::valid_utf8(*v))  // it goes into the request's JSON
            throw frenzy::config_error(std::string(flag) + "=" + frenzy::printable(*v) + " is not valid UTF-8");
    nlohmann::json& lim = body["limits"];
    if (lim.is_null()) lim = nlohmann::json::object();
    if (!c.gpu_types.empty()) {
        lim["gpu_types"] = nlohmann::json::array();
        for (auto t : frenzy::split(c.gpu_types, ','))
            if (!t.empty()) lim["gpu_types"].push_back(std::string(t));
    }
    if (c.max_gpus > 0) lim["max_gpus"] = c.max_gpus;
    if (!c.deadline.empty()) lim["deadline"] = c.deadline;
    if (c.priority_set) lim["priority"] = c.priority;
    if (lim.empty()) body.erase("limits");
    httplib::Client cli(checked_server(c.server));
    cli.set_read_timeout(120);
    print_reply(cli.Post("/v1/jobs", client_headers(c), body.dump(), "application/json"), c.server);
}

void run_status(const client_args& c) {
    httplib::Client cli(checked_server(c.server));
    print_reply(cli.Get(c.id.empty() ? "/v1/jobs" : "/v1/jobs/" + c.id, client_headers(c)), c.server);
}

void run_cancel(const client_args& c) {
    httplib::Client cli(checked_server(c.server));
    print_reply(cli.Delete("/v1/jobs/" + c.id, client_headers(c)), c.server);
}

void add_client_options(CLI::App* c, client_args& a) {
    c->add_option("--server", a.server, "URL of frenzy serve")->capture_default_str();
    c->add_option("--token-file", a.token_file, "File holding the bearer token");
}

}  // namespace

void frenzy_cli::add_serve(CLI::App& app) {
    auto a = std::make_shared<serve_args>();
    auto* c = app.add_subcommand("serve", "Run the service that schedules jobs onto a Slurm cluster with HAS (or --policy)");
    c->add_flag("--slurm", a->slurm, "Drive the Slurm cluster whose commands are on PATH (SLURM_CONF as usual)");
    c->add_option("--state", a->state, "SQLite job store (created if missing)")->required();
    c->add_option("--policy", a->policy, "Scheduling policy: " + frenzy::policy_help(false));
    c->add_option("--listen", a->listen, "HOST:PORT (loopback unless --token-file)")->capture_default_str();
    c->add_option("--token-file", a->token_file, "Bearer token every request must carry (needed off loopback)");
    c->add_option("--gres-map", a->gres_map, "Slurm GRES type -> catalog GPU type: a100=a100-80g,v100=v100-32g or a file");
    c->add_option("--run-command", a->run_command, "Command the jobs run instead of training (tests, dry runs)");
    c->add_option("--partition", a->partition, "Slurm partition to submit to");
    c->add_flag("--mixed", a->mixed, "Also plan pipelines whose stages run on two GPU types (Megatron-LM; `plan --mixed`): "
                                     "HAS starts a job on one, as one Slurm heterogeneous job, when no single type starts "
                                     "it now and the pipeline ends it sooner than waiting; other policies do not use them");
    c->add_option("--decision-log", a->decision_log, "JSON-lines decision log (default STATE.decisions.jsonl)");
    c->add_option("--output-dir", a->output_dir, "Directory for the jobs' stdout (default /dev/null)");
    c->add_option("--tick", a->tick_s, "Seconds between polls of Slurm")->capture_default_str();
    c->add_option("--slurm-timeout", a->slurm_timeout_s, "Seconds a Slurm command may take")->capture_default_str();
    c->add_option("--slurm-wait", a->slurm_wait_s,
                  "Seconds to wait for Slurm to answer at start, serving the live page and answering 503 meanwhile "
                  "(0: until stopped)")->capture_default_str();
    c->add_option("--max-body", a->max_body, "Largest request body in bytes")->capture_default_str();
    c->callback([a] { run_serve(*a); });

    auto s = std::make_shared<client_args>();
    auto* sub = app.add_subcommand("submit", "Submit a job spec to frenzy serve");
    sub->add_option("job,--job", s->job_file, "Job spec JSON")->required();
    add_client_options(sub, *s);
    sub->add_option("--gpu-types", s->gpu_types, "Allowed GPU types, comma separated");
    sub->add_option("--max-gpus", s->max_gpus, "Most GPUs the job may use");
    sub->add_option("--deadline", s->deadline, "The plan must finish within this (seconds or 30m, 2h, 1d)");
    sub->add_option("--priority", s->priority, "Higher goes first")->each([s](const std::string&) { s->priority_set = true; });
    sub->callback([s] { run_submit(*s); });

    auto st = std::make_shared<client_args>();
    auto* stc = app.add_subcommand("status", "Show all jobs of frenzy serve, or one");
    stc->add_option("id", st->id, "Job id");
    add_client_options(stc, *st);
    stc->callback([st] { run_status(*st); });

    auto ca = std::make_shared<client_args>();
    auto* cac = app.add_subcommand("cancel", "Cancel a job of frenzy serve");
    cac->add_option("id", ca->id, "Job id")->required();
    add_client_options(cac, *ca);
    cac->callback([ca] { run_cancel(*ca); });
}
#endif
