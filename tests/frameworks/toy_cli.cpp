// The frenzy CLI with the test-only framework "toy" (toy_framework.hpp): this file is the whole difference from
// the shipped CLI. Its one registry line runs before main; the CLI then finds "toy" through the catalogs.
#include "toy_framework.hpp"

namespace {
const bool toy_registered = (frenzy_test::toy::register_toy(), true);
}  // namespace
