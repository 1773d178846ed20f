#pragma once
// Runs one external command with an argument vector (fork + execvp, never a shell), optional stdin, captured
// stdout/stderr and a timeout after which the child is killed by its PID. POSIX only.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "frenzy/core/error.hpp"

namespace frenzy {

struct command_result {
    int exit_code = -1;      ///< exit status; -1 when killed by a signal or not started
    bool timed_out = false;
    std::string out, err;
    bool ok() const { return exit_code == 0 && !timed_out; }
};

namespace detail {

/// Opens the child's stdin, stdout and stderr pipes (close-on-exec); on a failure closes those already open.
inline void open_command_pipes(int (&in)[2], int (&out)[2], int (&err)[2]) {
    if (pipe2(in, O_CLOEXEC) != 0) throw error(std::string("run_command: pipe: ") + std::strerror(errno));
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]); close(in[1]);
        throw error(std::string("run_command: pipe: ") + std::strerror(errno));
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(in[0]); close(in[1]); close(out[0]); close(out[1]);
        throw error(std::string("run_command: pipe: ") + std::strerror(errno));
    }
}

/// Forks and execs argv[0] with the pipes as its stdin/stdout/stderr (exit code 127 when it cannot be run); the
/// parent closes the child's ends and gets the child's PID.
inline pid_t spawn_command(const std::vector<std::string>& argv, int (&in)[2], int (&out)[2], int (&err)[2]) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
        throw error(std::string("run_command: fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        execvp(args[0], args.data());
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    return pid;
}

/// Feeds `input` on the child's stdin (small inputs: batch scripts) then closes it.
inline void feed_command_input(int fd, const std::string& input) {
    if (!input.empty()) {
        signal(SIGPIPE, SIG_IGN);
        std::size_t off = 0;
        while (off < input.size()) {
            const ssize_t w = write(fd, input.data() + off, input.size() - off);
            if (w <= 0) break;
            off += static_cast<std::size_t>(w);
        }
    }
    close(fd);
}

/// Reads the child's stdout and stderr into r until both close or `timeout_s` passes (then kills the child and
/// sets r.timed_out); closes both descriptors.
inline void collect_command_output(pid_t pid, int out_fd, int err_fd, double timeout_s, command_result& r) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    int open_fds = 2;
    char buf[65536];
    while (open_fds > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            r.timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        const int n = poll(fds, 2, static_cast<int>(left));
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int k = 0; k < 2; ++k) {
            if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const ssize_t got = read(fds[k].fd, buf, sizeof buf);
            if (got > 0) (k == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(got));
            else {
                close(fds[k].fd);
                fds[k].fd = -1;
                --open_fds;
            }
        }
    }
    for (auto& f : fds)
        if (f.fd >= 0) close(f.fd);
}

}  // namespace detail

/// Runs argv[0] (searched in PATH) with argv, feeding `input` on stdin; kills it after `timeout_s` seconds.
/// Throws frenzy::error only when the process cannot be created; a missing program gives exit code 127.
inline command_result run_command(const std::vector<std::string>& argv, double timeout_s, const std::string& input = {}) {
    if (argv.empty()) throw error("run_command: empty argument vector");
    int in[2], out[2], err[2];
    detail::open_command_pipes(in, out, err);
    const pid_t pid = detail::spawn_command(argv, in, out, err);
    command_result r;
    detail::feed_command_input(in[1], input);
    detail::collect_command_output(pid, out[0], err[0], timeout_s, r);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!r.timed_out && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    return r;
}

}  // namespace frenzy
