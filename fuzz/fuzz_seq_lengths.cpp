// libFuzzer target: a dataset's token counts (io/seq_lengths.hpp), as `frenzy estimate --seq-lengths` reads them.
#include <string>

#include "frenzy/io/seq_lengths.hpp"
#include "fuzz_common.hpp"

FRENZY_FUZZ_TARGET({
    const std::string text(input);
    (void)frenzy::parse_seq_lengths(text, "lengths.csv");
    (void)frenzy::parse_seq_lengths(text, "lengths.jsonl");
})
