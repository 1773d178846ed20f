// The libFuzzer entry points of the one fuzzing binary: every fuzz/fuzz_*.cpp is included by the translation unit
// scripts/fuzz.sh writes (build-fuzz/all_targets.cpp) after this file, and FRENZY_FUZZ_TARGET picks the one that runs.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    frenzy_fuzz::select_from_environment();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    frenzy_fuzz::selected()(frenzy_fuzz::text(data, size));
    return 0;
}
