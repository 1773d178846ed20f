// Linked into each benchmark of a build configured with FRENZY_UNOPTIMIZED_EXTRAS=ON (the test suite's build, which
// compiles the benchmarks at -O0 only to keep them building): their times would mean nothing, so they say so first.
#include <cstdio>

namespace {
[[maybe_unused]] const bool warned = [] {
    std::fputs("warning: this benchmark was compiled at -O0 (FRENZY_UNOPTIMIZED_EXTRAS=ON, the test suite's build): "
               "its times are not the library's; build it in a Release folder without that option\n",
               stderr);
    return true;
}();
}  // namespace
