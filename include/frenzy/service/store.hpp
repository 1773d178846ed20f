#pragma once
// The durable job store of `frenzy serve`: SQLite (WAL journal, synchronous=FULL), one transaction per state
// change, each writing the job row and its event together. A job is acknowledged to its submitter only after
// add_job() has committed. The intent to submit (state "submitting", the attempt number and the tag that travels
// in the Slurm job's comment) is committed before sbatch runs, so that a restart can reconcile it against Slurm.
#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frenzy/core/error.hpp"

namespace frenzy {

/// Job states. "submitting" is internal (intent recorded, sbatch not yet confirmed); the API shows it as submitted.
namespace job_states {
inline constexpr const char* queued = "queued";
inline constexpr const char* submitting = "submitting";
inline constexpr const char* submitted = "submitted";
inline constexpr const char* running = "running";
inline constexpr const char* completed = "completed";
inline constexpr const char* failed = "failed";
inline constexpr const char* cancelled = "cancelled";
inline bool terminal(const std::string& s) { return s == completed || s == failed || s == cancelled; }
}  // namespace job_states

struct stored_job {
    std::int64_t id = 0;
    std::string spec;          ///< the posted body (job spec + limits), JSON text
    std::string state;
    double submit_s = 0;       ///< unix time of acceptance
    int attempt = 0;           ///< submissions to Slurm so far (the current one included)
    std::int64_t slurm_id = 0; ///< 0 = none
    std::string plan;          ///< chosen plan, JSON text ("" = none yet)
    std::string alloc;         ///< [[node name, gpus], ...] JSON text
    std::string reason;        ///< why it failed / was requeued last
    bool cancel_requested = false;
};

struct stored_event {
    double t = 0;
    std::string kind;
    std::string detail;
};

/// Tag carried in the Slurm job's comment: "frenzy:<id>:<attempt>".
inline std::string slurm_tag(std::int64_t id, int attempt) { return "frenzy:" + std::to_string(id) + ":" + std::to_string(attempt); }
/// Parses a tag; {0, 0} when the comment is not one of ours.
inline std::pair<std::int64_t, int> parse_slurm_tag(const std::string& c) {
    if (c.rfind("frenzy:", 0) != 0) return {0, 0};
    const auto colon = c.find(':', 7);
    if (colon == std::string::npos) return {0, 0};
    try {
        std::size_t a = 0, b = 0;
        const long long id = std::stoll(c.substr(7, colon - 7), &a);
        const int att = std::stoi(c.substr(colon + 1), &b);
        if (a != colon - 7 || b != c.size() - colon - 1 || id <= 0 || att <= 0) return {0, 0};
        return {id, att};
    } catch (const std::exception&) {
        return {0, 0};
    }
}

inline double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class job_store {
public:
    explicit job_store(const std::string& path) : path_(path) {
        if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
            std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
            sqlite3_close(db_);
            db_ = nullptr;
            throw io_error("state database " + path + ": cannot open SQLite database (" + msg + ")");
        }
        sqlite3_busy_timeout(db_, 5000);
        exec("PRAGMA journal_mode=WAL");
        exec("PRAGMA synchronous=FULL");
        exec("CREATE TABLE IF NOT EXISTS jobs(id INTEGER PRIMARY KEY AUTOINCREMENT, spec TEXT NOT NULL, state TEXT NOT NULL,"
             " submit_s REAL NOT NULL, attempt INTEGER NOT NULL DEFAULT 0, slurm_id INTEGER NOT NULL DEFAULT 0,"
             " plan TEXT NOT NULL DEFAULT '', alloc TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '',"
             " cancel_requested INTEGER NOT NULL DEFAULT 0)");
        exec("CREATE TABLE IF NOT EXISTS events(seq INTEGER PRIMARY KEY AUTOINCREMENT, job INTEGER NOT NULL, t REAL NOT NULL,"
             " kind TEXT NOT NULL, detail TEXT NOT NULL)");
        exec("CREATE INDEX IF NOT EXISTS events_job ON events(job)");
    }
    job_store(const job_store&) = delete;
    job_store& operator=(const job_store&) = delete;
    ~job_store() { sqlite3_close(db_); }

    const std::string& path() const { return path_; }

    /// Records a newly accepted job (state queued) with its first event; returns its id once committed.
    std::int64_t add_job(const std::string& spec, double now) {
        txn t(*this);
        stmt s(*this, "INSERT INTO jobs(spec, state, submit_s) VALUES(?, 'queued', ?)");
        s.bind(1, spec).bind(2, now).run();
        const std::int64_t id = sqlite3_last_insert_rowid(db_);
        add_event(id, now, "accepted", "");
        t.commit();
        return id;
    }

    /// Intent to submit: attempt and plan/alloc recorded, state submitting, before sbatch runs.
    void record_intent(std::int64_t id, int attempt, const std::string& plan, const std::string& alloc, double now) {
        txn t(*this);
        stmt(*this, "UPDATE jobs SET state='submitting', attempt=?, plan=?, alloc=?, slurm_id=0 WHERE id=?")
            .bind(1, attempt).bind(2, plan).bind(3, alloc).bind(4, id).run();
        add_event(id, now, "submitting", slurm_tag(id, attempt) + " " + alloc);
        t.commit();
    }
    void record_submitted(std::int64_t id, std::int64_t slurm_id, double now, const std::string& detail = "") {
        txn t(*this);
        stmt(*this, "UPDATE jobs SET state='submitted', slurm_id=? WHERE id=?").bind(1, slurm_id).bind(2, id).run();
        add_event(id, now, "submitted", "slurm job " + std::to_string(slurm_id) + (detail.empty() ? "" : " " + detail));
        t.commit();
    }
    /// Any other state change, with its event; `reason` is kept on the row ("" leaves it unchanged).
    void set_state(std::int64_t id, const std::string& state, double now, const std::string& detail = "", const std::string& reason = "") {
        txn t(*this);
        if (reason.empty()) stmt(*this, "UPDATE jobs SET state=? WHERE id=?").bind(1, state).bind(2, id).run();
        else stmt(*this, "UPDATE jobs SET state=?, reason=? WHERE id=?").bind(1, state).bind(2, reason).bind(3, id).run();
        add_event(id, now, state, detail);
        t.commit();
    }
    void request_cancel(std::int64_t id, double now) {
        txn t(*this);
        stmt(*this, "UPDATE jobs SET cancel_requested=1 WHERE id=?").bind(1, id).run();
        add_event(id, now, "cancel-requested", "");
        t.commit();
    }

    std::optional<stored_job> get(std::int64_t id) const {
        stmt s(*this, "SELECT " + columns() + " FROM jobs WHERE id=?");
        s.bind(1, id);
        if (!s.step()) return std::nullopt;
        return row(s);
    }
    std::vector<stored_job> all() const {
        std::vector<stored_job> v;
        stmt s(*this, "SELECT " + columns() + " FROM jobs ORDER BY id");
        while (s.step()) v.push_back(row(s));
        return v;
    }
    std::vector<stored_job> active() const {
        std::vector<stored_job> v;
        stmt s(*this, "SELECT " + columns() + " FROM jobs WHERE state NOT IN ('completed','failed','cancelled') ORDER BY id");
        while (s.step()) v.push_back(row(s));
        return v;
    }
    std::vector<stored_event> events(std::int64_t id) const {
        std::vector<stored_event> v;
        stmt s(*this, "SELECT t, kind, detail FROM events WHERE job=? ORDER BY seq");
        s.bind(1, id);
        while (s.step()) v.push_back({sqlite3_column_double(s.s, 0), s.text(1), s.text(2)});
        return v;
    }

private:
    struct stmt {
        sqlite3_stmt* s = nullptr;
        const job_store* db;
        stmt(const job_store& d, const std::string& sql) : db(&d) {
            if (sqlite3_prepare_v2(d.db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) d.fail("prepare " + sql);
        }
        ~stmt() { sqlite3_finalize(s); }
        stmt& bind(int i, const std::string& v) {
            sqlite3_bind_text(s, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
            return *this;
        }
        stmt& bind(int i, double v) {
            sqlite3_bind_double(s, i, v);
            return *this;
        }
        stmt& bind(int i, std::int64_t v) {
            sqlite3_bind_int64(s, i, v);
            return *this;
        }
        stmt& bind(int i, int v) {
            sqlite3_bind_int64(s, i, v);
            return *this;
        }
        bool step() {
            const int rc = sqlite3_step(s);
            if (rc == SQLITE_ROW) return true;
            if (rc == SQLITE_DONE) return false;
            db->fail("step");
        }
        void run() {
            while (step()) {
            }
        }
        std::string text(int c) const {
            const auto* p = sqlite3_column_text(s, c);
            return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(s, c))) : std::string{};
        }
    };
    struct txn {
        job_store& d;
        bool done = false;
        explicit txn(job_store& x) : d(x) { d.exec("BEGIN IMMEDIATE"); }
        void commit() {
            d.exec("COMMIT");
            done = true;
        }
        ~txn() {
            if (!done) sqlite3_exec(d.db_, "ROLLBACK", nullptr, nullptr, nullptr);
        }
    };
    static std::string columns() { return "id, spec, state, submit_s, attempt, slurm_id, plan, alloc, reason, cancel_requested"; }
    static stored_job row(const stmt& s) {
        stored_job j;
        j.id = sqlite3_column_int64(s.s, 0);
        j.spec = s.text(1);
        j.state = s.text(2);
        j.submit_s = sqlite3_column_double(s.s, 3);
        j.attempt = sqlite3_column_int(s.s, 4);
        j.slurm_id = sqlite3_column_int64(s.s, 5);
        j.plan = s.text(6);
        j.alloc = s.text(7);
        j.reason = s.text(8);
        j.cancel_requested = sqlite3_column_int(s.s, 9) != 0;
        return j;
    }
    void add_event(std::int64_t id, double t, const std::string& kind, const std::string& detail) {
        stmt(*this, "INSERT INTO events(job, t, kind, detail) VALUES(?, ?, ?, ?)").bind(1, id).bind(2, t).bind(3, kind).bind(4, detail).run();
    }
    void exec(const std::string& sql) {
        char* err = nullptr;
        if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
            std::string m = err ? err : "unknown";
            sqlite3_free(err);
            throw io_error("state database " + path_ + ": SQLite: " + sql + ": " + m);
        }
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw io_error("state database " + path_ + ": SQLite " + what + ": " + sqlite3_errmsg(db_));
    }

    std::string path_;
    sqlite3* db_ = nullptr;
};

}  // namespace frenzy
