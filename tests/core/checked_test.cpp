// The validated-number layer (core/checked.hpp): overflow-detecting parsing, finite checks, bounds, checked
// products, printable error values, O(sqrt n) divisors.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "frenzy/core/checked.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace {
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("integers from text: exact, or an error naming the field, never clamped") {
    CHECK(parse_int64("42", "x") == 42);
    CHECK(parse_int64(" -7 ", "x") == -7);
    CHECK(parse_int64("+9223372036854775807", "x") == std::numeric_limits<std::int64_t>::max());
    // 2^64 and 2^64-1 are outside int64: the reproducers were clamped to INT64_MAX or wrapped to -1.
    CHECK_THAT(error_of([] { parse_int64("18446744073709551616", "training.seq_len"); }),
               Contains("training.seq_len=18446744073709551616 is outside the 64-bit integer range"));
    CHECK_THAT(error_of([] { parse_int64("18446744073709551615", "parallel.dp"); }),
               Contains("parallel.dp=18446744073709551615 is outside"));
    CHECK_THAT(error_of([] { parse_int64("12abc", "dp"); }), Contains("dp=12abc is not an integer"));
    CHECK_THAT(error_of([] { parse_int64("", "dp"); }), Contains("dp= is empty"));
    CHECK_THAT(error_of([] { parse_int64("0x10", "dp"); }), Contains("is not an integer"));
    CHECK_THAT(error_of([] { parse_int64("2000000", "parallel.tp", bounds::degree); }),
               Contains("parallel.tp=2000000 must be in 1..1048576"));
}

TEST_CASE("floats from text are finite") {
    CHECK(parse_double("1.5e3", "x") == 1500.0);
    for (const char* bad : {"nan", "NaN", "inf", "-inf", "infinity"})
        CHECK_THAT(error_of([&] { parse_double(bad, "--margin"); }), Contains("--margin=") && Contains("finite"));
    CHECK_THAT(error_of([] { parse_double("1e400", "price"); }), Contains("price=1e400 is outside the range"));
    CHECK_THAT(error_of([] { parse_double("1.0x", "price"); }), Contains("price=1.0x is not a number"));
    CHECK_THAT(error_of([] { parse_double("2e6", "price", bounds::price); }), Contains("price=2000000 must be in [0, 1000000]"));
    // NaN passes `v < 0` checks; check_finite and check_bound reject it.
    CHECK_THAT(error_of([] { check_finite("validate --tolerance", std::nan("")); }),
               Contains("--tolerance=nan must be a finite number"));
    CHECK_THAT(error_of([] { check_bound("startup", std::numeric_limits<double>::infinity(), bounds::seconds); }),
               Contains("startup=inf must be a finite number"));
}

TEST_CASE("integers held in doubles: exact integers up to 2^53 only") {
    CHECK(integer_from_double(1e3, "f", "1e3") == 1000);
    CHECK(integer_from_double(9007199254740992.0, "f", "2^53") == 9007199254740992LL);
    CHECK_THAT(error_of([] { integer_from_double(1.5, "f", "1.5"); }), Contains("f=1.5 must be an integer"));
    CHECK_THAT(error_of([] { integer_from_double(1e19, "f", "1e19"); }), Contains("too large"));
    CHECK_THAT(error_of([] { integer_from_double(std::nan(""), "f", "nan"); }), Contains("finite"));
}

TEST_CASE("products are checked before use") {
    // 2^32 x 2^32 = 2^64 wraps to 0 in int64 arithmetic: the SIGFPE.
    CHECK_THAT(error_of([] { checked_mul(4294967296LL, 4294967296LL, "training.micro_batch x parallel.dp"); }),
               Contains("training.micro_batch x parallel.dp = 4294967296 x 4294967296 overflows"));
    CHECK(checked_mul(-3, 7, "x") == -21);
    CHECK_THAT(error_of([] { checked_product({1024, 1024, 1024}, "dp x tp x pp", bounds::gpus); }),
               Contains("dp x tp x pp = 1073741824 must be in 1..16777216"));
    CHECK(checked_product({8, 4, 2}, "dp x tp x pp", bounds::gpus) == 64);
    CHECK_THAT(error_of([] { checked_add(std::numeric_limits<std::int64_t>::max(), 1, "sum"); }), Contains("overflows"));
}

TEST_CASE("error values are printable and bounded") {
    // Invalid UTF-8 (a lone continuation byte, an overlong '/') and control characters become \xNN.
    CHECK(printable("a\x80z") == "a\\x80z");
    CHECK(printable("\xC0\xAF") == "\\xC0\\xAF");
    CHECK(printable("tab\there") == "tab\\x09here");
    // C1 controls (U+0080-U+009F, valid UTF-8) are escaped too (issue 57: names carried them raw into scripts);
    // U+00A0 and above stay
    CHECK(printable("a\xC2\x85z") == "a\\xC2\\x85z");
    CHECK(printable("\xC2\x9F\xC2\xA0") == "\\xC2\\x9F\xC2\xA0");
    CHECK(!valid_utf8("job\xC2\x85name"));
    CHECK_THROWS_WITH(check_label("name", "job\xC2\x85x"), Catch::Matchers::Contains("name=job\\xC2\\x85x must be"));
    CHECK(printable("caf\xC3\xA9") == "caf\xC3\xA9");  // valid 2-byte UTF-8 kept
    CHECK(printable(std::string(1000, 'x')).size() == 83);  // 80 characters + "..."
    CHECK(valid_utf8("\xE2\x82\xAC"));
    CHECK_FALSE(valid_utf8("\xED\xA0\x80"));  // a UTF-16 surrogate encoded in UTF-8
    CHECK(field_message("model.name", "a\xFF", "is bad") == "model.name=a\\xFF is bad");
}

TEST_CASE("divisors in O(sqrt n)") {
    CHECK(divisors_of(12) == std::vector<std::int64_t>{1, 2, 3, 4, 6, 12});
    CHECK(divisors_of(36, 9) == std::vector<std::int64_t>{1, 2, 3, 4, 6, 9});
    CHECK(divisors_of(1) == std::vector<std::int64_t>{1});
    CHECK(divisors_of(0).empty());
    // 10^15 (the global_batch that never finished): 2^15 x 5^15 has 16 x 16 = 256 divisors; the loop runs
    // to sqrt(10^15) ~ 3.2e7, well under a second (the linear loop would take ~10^15 steps).
    const auto t0 = std::chrono::steady_clock::now();
    const auto d = divisors_of(1'000'000'000'000'000LL);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(d.size() == 256);
    CHECK(d.back() == 1'000'000'000'000'000LL);
    CHECK(s < 2.0);
}

TEST_CASE("checked: public names, bound_text and within (front ends print bounds with them)") {
    CHECK(frenzy::bound_text(1e6) == "1e6");
    CHECK(frenzy::bound_text(1e18) == "1e18");
    CHECK(frenzy::bound_text(0) == "0");
    CHECK(frenzy::bound_text(4096) == "4096");
    CHECK(frenzy::bound_text(2e6) == "2000000");
    CHECK(frenzy::within(std::int64_t{65535}, frenzy::bounds::port));
    CHECK_FALSE(frenzy::within(std::int64_t{65536}, frenzy::bounds::port));
    CHECK(frenzy::within(1e6, frenzy::bounds::price));
    CHECK_FALSE(frenzy::within(1e6 + 1, frenzy::bounds::price));
    CHECK(frenzy::bounds::seq_len.max == std::int64_t{1} << 26);
}
