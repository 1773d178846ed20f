#pragma once
// LitGPT's measured LoRA / QLoRA resource table (data/memory/litgpt/resource_table.csv, with its source), read once
// for the tests that check it with the ddp profile (methods_test.cpp) and with the litgpt profile (litgpt_test.cpp).
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "frenzy/io/csv.hpp"
#include "frenzy/train/spec.hpp"

namespace litgpt_table {

struct row {
    std::string model;
    frenzy::finetune_method method = frenzy::finetune_method::lora;
    bool double_quant = true;
    std::int64_t micro_batch = 0;
    double measured_gb = 0;  ///< torch.cuda.max_memory_allocated() / 1e9
};

inline std::vector<row> rows() {
    const std::string path = std::string(FRENZY_DATA_DIR) + "/memory/litgpt/resource_table.csv";
    std::ifstream in(path);
    REQUIRE(in.good());
    std::vector<std::string> rec;
    std::size_t line = 0;
    REQUIRE(frenzy::detail::read_csv_record(in, rec, line));
    const auto cols = frenzy::detail::csv_columns_from_header(rec, path);
    cols.require({"model", "method", "double_quant", "micro_batch", "peak_GB"});
    std::vector<row> out;
    while (frenzy::detail::read_csv_record(in, rec, line)) {
        cols.check_width(rec, line);
        const auto& method = cols.cell(rec, "method");
        REQUIRE((method == "lora" || method == "qlora"));
        out.push_back({.model = cols.cell(rec, "model"),
                       .method = method == "lora" ? frenzy::finetune_method::lora : frenzy::finetune_method::qlora,
                       .double_quant = cols.cell(rec, "double_quant") == "yes",
                       .micro_batch = std::stoll(cols.cell(rec, "micro_batch")),
                       .measured_gb = std::stod(cols.cell(rec, "peak_GB"))});
    }
    REQUIRE(out.size() == 7);  // the table's seven rows: a truncated file would pass anything
    return out;
}

}  // namespace litgpt_table
