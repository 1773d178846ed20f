#pragma once
// Strong unit types: bytes, flops, seconds. Binary (_GiB) and decimal (_GB) literals are distinct.
#include <compare>
#include <cstdint>

namespace frenzy {

/// A quantity of one physical unit, stored as double (memory formulas divide by parallel degrees).
template <class Tag>
struct quantity {
    double value = 0.0;

    constexpr quantity() = default;
    constexpr explicit quantity(double v) : value(v) {}

    constexpr auto operator<=>(const quantity&) const = default;
    constexpr quantity& operator+=(quantity o) { value += o.value; return *this; }
    constexpr quantity& operator-=(quantity o) { value -= o.value; return *this; }
    constexpr quantity& operator*=(double k) { value *= k; return *this; }
    constexpr quantity& operator/=(double k) { value /= k; return *this; }
    friend constexpr quantity operator+(quantity a, quantity b) { return quantity{a.value + b.value}; }
    friend constexpr quantity operator-(quantity a, quantity b) { return quantity{a.value - b.value}; }
    friend constexpr quantity operator*(quantity a, double k) { return quantity{a.value * k}; }
    friend constexpr quantity operator*(double k, quantity a) { return quantity{a.value * k}; }
    friend constexpr quantity operator/(quantity a, double k) { return quantity{a.value / k}; }
    /// Ratio of two quantities of the same unit.
    friend constexpr double operator/(quantity a, quantity b) { return a.value / b.value; }
};

struct bytes_tag {};
struct flops_tag {};
struct seconds_tag {};

using bytes = quantity<bytes_tag>;      ///< memory size
using flops = quantity<flops_tag>;      ///< floating-point operations (a count, not a rate)
using seconds = quantity<seconds_tag>;  ///< wall-clock duration

inline constexpr double KiB = 1024.0, MiB = KiB * 1024.0, GiB = MiB * 1024.0, TiB = GiB * 1024.0;
inline constexpr double KB = 1e3, MB = 1e6, GB = 1e9, TB = 1e12;

constexpr double to_GiB(bytes b) { return b.value / GiB; }
constexpr double to_GB(bytes b) { return b.value / GB; }

namespace literals {
constexpr bytes operator""_B(unsigned long long v) { return bytes{static_cast<double>(v)}; }
constexpr bytes operator""_KiB(unsigned long long v) { return bytes{static_cast<double>(v) * KiB}; }
constexpr bytes operator""_MiB(unsigned long long v) { return bytes{static_cast<double>(v) * MiB}; }
constexpr bytes operator""_GiB(unsigned long long v) { return bytes{static_cast<double>(v) * GiB}; }
constexpr bytes operator""_GiB(long double v) { return bytes{static_cast<double>(v) * GiB}; }
constexpr bytes operator""_TiB(unsigned long long v) { return bytes{static_cast<double>(v) * TiB}; }
constexpr bytes operator""_KB(unsigned long long v) { return bytes{static_cast<double>(v) * KB}; }
constexpr bytes operator""_MB(unsigned long long v) { return bytes{static_cast<double>(v) * MB}; }
constexpr bytes operator""_GB(unsigned long long v) { return bytes{static_cast<double>(v) * GB}; }
constexpr bytes operator""_GB(long double v) { return bytes{static_cast<double>(v) * GB}; }
constexpr bytes operator""_TB(unsigned long long v) { return bytes{static_cast<double>(v) * TB}; }
constexpr flops operator""_TFLOP(unsigned long long v) { return flops{static_cast<double>(v) * 1e12}; }
constexpr flops operator""_TFLOP(long double v) { return flops{static_cast<double>(v) * 1e12}; }
constexpr seconds operator""_s(unsigned long long v) { return seconds{static_cast<double>(v)}; }
constexpr seconds operator""_s(long double v) { return seconds{static_cast<double>(v)}; }
}  // namespace literals

}  // namespace frenzy
