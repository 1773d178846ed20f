// Trace CSV in io/ (io/trace_csv.hpp): read and written without the simulator; the CSV cell readers it uses.
#include <sstream>

#include <catch2/catch.hpp>

#include "frenzy/io/trace_csv.hpp"

using namespace frenzy;

TEST_CASE("trace_csv: rows parse through io's CSV readers, quoted fields included, and write back") {
    std::istringstream in(std::string(trace_header) + "\n\"j,1\", 3 ,gpt3-125m,2048,8,1e9,2,a100-80g\nj2,1,gpt2,1024,1,5,,\n");
    const auto t = read_trace(in, "t.csv");
    REQUIRE(t.size() == 2);
    CHECK(t[0].job_id == "j2");  // sorted by submit time
    CHECK(t[1].job_id == "j,1");
    CHECK(t[1].submit_s == 3);
    CHECK(t[1].requested_gpus == 2);
    std::ostringstream out;
    write_trace(out, {t[0]});
    CHECK(out.str() == std::string(trace_header) + "\nj2,1,gpt2,1024,1,5,,\n");
}

TEST_CASE("trace_csv: the cell readers name the place, the column and the text") {
    CHECK(split_csv_trimmed(" a , \"b,c\" ,") == std::vector<std::string>{"a", "b,c", ""});
    CHECK(csv_number<int>("42", "f line 2", "n") == 42);
    CHECK_THROWS_WITH(csv_number<int>("+4", "f line 2", "n"), "f line 2: n=\"+4\" is not a number");
    CHECK_THROWS_WITH(csv_number<double>("", "f line 3", "x"), "f line 3: x=\"\" is not a number");
    CHECK_THROWS_WITH(csv_number<double>("1e400", "f line 3", "x"), "f line 3: x=\"1e400\" is not a number");
    CHECK(csv_decimal(5.5) == "5.5");
    CHECK(csv_decimal(1e9) == "1000000000");
    CHECK(csv_decimal(0.1 + 0.2) == "0.3");
}
