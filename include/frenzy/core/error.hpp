#pragma once
// Error classes. Invalid input throws config_error naming the field and the rule;
// "does not fit" / "no feasible plan" are ordinary results, not exceptions.
#include <stdexcept>
#include <string>

namespace frenzy {

/// Base of every exception Frenzy throws.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Invalid input: a spec field with a bad value or a rule between fields that does not hold.
/// The message names the field(s) and the rule, e.g. "parallel.tp=3 does not divide model.heads=32".
class config_error : public error {
public:
    using error::error;
};

/// A file could not be read or parsed.
class io_error : public error {
public:
    using error::error;
};

/// A linear/integer program could not be solved (baseline schedulers).
class solver_error : public error {
public:
    using error::error;
};

}  // namespace frenzy
