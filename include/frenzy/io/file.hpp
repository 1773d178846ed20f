#pragma once
// Reading an input file with limits: regular files only (devices such as /dev/zero, directories and FIFOs are
// refused before anything is read, so nothing blocks or runs out of memory), at most a size limit; and opening an
// output that cannot block (no FIFO).
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"

namespace frenzy {

/// The whole content of the regular file `path`; io_error naming the file when it is missing, not a regular file,
/// or larger than `limit` bytes.
inline std::string read_file_limited(const std::string& path, std::uint64_t limit = bounds::input_bytes) {
    const std::string shown = printable(path, 200);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw io_error("cannot open " + shown + ": " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw io_error(shown + " is a directory, not a file");
    if (!S_ISREG(st.st_mode)) throw io_error(shown + " is not a regular file (devices, FIFOs and sockets are refused)");
    if (static_cast<std::uint64_t>(st.st_size) > limit)
        throw io_error(shown + " is " + std::to_string(st.st_size) + " bytes, more than the limit of " +
                       std::to_string(limit));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw io_error("cannot open " + shown);
    std::string out;
    out.resize(static_cast<std::size_t>(st.st_size));
    in.read(out.data(), static_cast<std::streamsize>(out.size()));
    out.resize(static_cast<std::size_t>(in.gcount()));
    if (in.peek() != std::ifstream::traits_type::eof())  // the file grew while being read
        throw io_error(shown + " changed while being read");
    return out;
}

/// Checks that `path` may be written without blocking: missing (it is created), a regular file, or a character
/// device such as /dev/null; a FIFO (whose open waits for a reader for ever), a socket, a block device or a
/// directory is refused with io_error naming `field` (issue 57: `-o` and `--html` on a FIFO blocked).
inline void check_output_path(const std::string& path, const std::string& field) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return;  // created by the writer (which reports what fails then)
    const std::string shown = field + "=" + printable(path, 200);
    if (S_ISDIR(st.st_mode)) throw io_error(shown + " is a directory, not a file");
    if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
        throw io_error(shown + " is not a regular file (FIFOs, sockets and block devices are refused: writing one "
                               "could wait for ever)");
}

/// Opens `path` for writing after check_output_path; io_error naming `field` when it cannot.
inline std::ofstream open_output(const std::string& path, const std::string& field,
                                 std::ios::openmode mode = std::ios::out | std::ios::binary) {
    check_output_path(path, field);
    std::ofstream f(path, mode);
    if (!f) throw io_error(field + ": cannot write " + printable(path, 200));
    return f;
}

}  // namespace frenzy
