#pragma once
// HTTP + JSON API of `frenzy serve` over serve_engine, with cpp-httplib (Debian's libcpp-httplib-dev):
//   POST /v1/jobs, GET /v1/jobs, GET /v1/jobs/ID, DELETE /v1/jobs/ID, GET /v1/cluster, GET /v1/decisions,
//   GET /healthz, GET /metrics, and the live page at GET / (service/live_page.hpp).
// Bodies over `max_body` bytes get 413 before any handler runs. With a token, every request must carry
// "Authorization: Bearer TOKEN" (401 otherwise, compared in constant time), but for the live page itself: it holds
// no data, and reads everything it shows from the endpoints above with the token.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

// The engine first: it may include Eigen (the GLPK policies of the registry), whose headers break when read after
// httplib.h's.
#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/service/engine.hpp"
#include "frenzy/service/live_page.hpp"

#include <httplib.h>

namespace frenzy {

struct http_options {
    std::string host = "127.0.0.1";
    int port = 8470;
    std::string token;                 ///< "" = no token
    std::size_t max_body = 1 << 20;    ///< bytes
    /// While it returns a reason (the engine has not started: Slurm does not answer yet), every route but the live
    /// page answers 503 with it, and /healthz says so; the engine is not touched. Unset: always ready.
    std::function<std::string()> waiting;
};

/// "127.0.0.1:8470" -> host, port. Throws config_error naming `field`.
inline std::pair<std::string, int> parse_listen(const std::string& s, const std::string& field = "listen") {
    const auto colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == s.size())
        throw config_error(field + "=\"" + s + "\" must be HOST:PORT");
    const std::string host = s.substr(0, colon), ps = s.substr(colon + 1);
    const auto bad = [&] {
        return config_error(field + "=\"" + s + "\": port must be " + std::to_string(bounds::port.min) + ".." +
                            std::to_string(bounds::port.max));
    };
    std::int64_t port = 0;
    for (char c : ps) {
        if (c < '0' || c > '9' || port > bounds::port.max) throw bad();
        port = port * 10 + (c - '0');
    }
    if (!within(port, bounds::port)) throw bad();
    return {host, static_cast<int>(port)};
}

inline bool is_loopback(const std::string& host) {
    return host == "127.0.0.1" || host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

namespace detail {
inline bool same_token(std::string_view a, std::string_view b) {
    unsigned char d = a.size() == b.size() ? 0 : 1;
    for (std::size_t i = 0; i < a.size(); ++i) d |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
    return d == 0;
}
inline void reply(httplib::Response& res, const api_reply& r) {
    res.status = r.status;
    res.set_content(r.body.dump(2) + "\n", "application/json");
}
inline std::optional<std::int64_t> path_id(const std::string& s) {
    if (s.empty() || s.size() > 15) return std::nullopt;
    std::int64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return v;
}
}  // namespace detail

/// Configures `svr` with the API routes over `eng`.
inline void install_routes(httplib::Server& svr, serve_engine& eng, const http_options& o) {
    svr.set_payload_max_length(o.max_body);
    const std::string token = o.token;
    svr.set_pre_routing_handler([token, waiting = o.waiting](const httplib::Request& req, httplib::Response& res) {
        const bool page = req.path == "/" && req.method == "GET";
        if (!token.empty() && !page) {
            const auto h = req.get_header_value("Authorization");
            const std::string_view pre = "Bearer ";
            if (!(h.size() > pre.size() && h.compare(0, pre.size(), pre) == 0 &&
                  detail::same_token(std::string_view(h).substr(pre.size()), token))) {
                detail::reply(res, {401, {{"error", "missing or wrong bearer token (Authorization: Bearer TOKEN)"}}});
                return httplib::Server::HandlerResponse::Handled;
            }
        }
        if (!page && waiting) {
            if (auto why = waiting(); !why.empty()) {
                if (req.path == "/healthz") res.status = 503, res.set_content(why + "\n", "text/plain");
                else detail::reply(res, {503, {{"error", why}}});
                return httplib::Server::HandlerResponse::Handled;
            }
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
    svr.Post("/v1/jobs", [&eng](const httplib::Request& req, httplib::Response& res) { detail::reply(res, eng.submit(req.body)); });
    svr.Get("/v1/jobs", [&eng](const httplib::Request&, httplib::Response& res) { detail::reply(res, eng.list()); });
    svr.Get(R"(/v1/jobs/([^/]+))", [&eng](const httplib::Request& req, httplib::Response& res) {
        auto id = detail::path_id(req.matches[1]);
        if (!id) return detail::reply(res, {400, {{"error", "job id \"" + std::string(req.matches[1]) + "\" is not a number"}}});
        detail::reply(res, eng.job(*id));
    });
    svr.Delete(R"(/v1/jobs/([^/]+))", [&eng](const httplib::Request& req, httplib::Response& res) {
        auto id = detail::path_id(req.matches[1]);
        if (!id) return detail::reply(res, {400, {{"error", "job id \"" + std::string(req.matches[1]) + "\" is not a number"}}});
        detail::reply(res, eng.cancel(*id));
    });
    svr.Get("/v1/cluster", [&eng](const httplib::Request&, httplib::Response& res) { detail::reply(res, eng.cluster()); });
    svr.Get("/v1/decisions", [&eng](const httplib::Request&, httplib::Response& res) { detail::reply(res, eng.decisions()); });
    svr.Get("/", [](const httplib::Request&, httplib::Response& res) {
        res.set_header("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'");
        res.set_content(std::string(live_page_html), "text/html; charset=utf-8");
    });
    svr.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
    svr.Get("/metrics", [&eng](const httplib::Request&, httplib::Response& res) {
        res.set_content(eng.metrics(), "text/plain; version=0.0.4");
    });
    svr.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
            if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        detail::reply(res, {500, {{"error", what}}});
    });
}

}  // namespace frenzy
