#pragma once
// Reading an input file with limits: regular files only (devices such as /dev/zero, directories and FIFOs are
// refused before anything is read, so nothing blocks or runs out of memory), at most a size limit.
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

}  // namespace frenzy
