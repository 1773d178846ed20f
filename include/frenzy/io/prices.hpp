#pragma once
// Prices per GPU-hour (docs/formats.md "Prices"): the one reader behind the CLI's `--price TYPE=USD` / `--price
// example` and Python's `prices={type: USD}` / `prices="example"`. Every price names a catalog GPU type and is a
// finite number of USD in bounds::price; each front end keeps its own wording of where the price came from.
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/plan/prices.hpp"

namespace frenzy {

/// USD per GPU-hour by GPU type name (plan_options::price_per_gpu_hour).
using price_table = std::map<std::string, double>;

/// The name that stands for the built-in example prices (plan/prices.hpp) in both front ends.
inline constexpr std::string_view example_prices_name = "example";

/// Checks one price and returns it: finite and in bounds::price, else config_error
/// "ENTRY must be a finite number of USD in [0, 1e6]" (`entry` names the price: `prices["a100-80g"]`).
inline double check_price(std::string_view entry, double usd) {
    if (!std::isfinite(usd) || usd < bounds::price.min || usd > bounds::price.max)
        throw config_error(std::string(entry) + " must be a finite number of USD in [" + bound_text(bounds::price.min) +
                           ", " + bound_text(bounds::price.max) + "]");
    return usd;
}

/// Adds the price of `type` to `out`: the type must be in `catalog` (its error names `field`), the price checked
/// by check_price under `entry`. A later price of the same type replaces an earlier one.
inline void add_price(price_table& out, const gpu_catalog& catalog, const std::string& type, double usd,
                      std::string_view field, std::string_view entry) {
    catalog.at(type, field);
    out[type] = check_price(entry, usd);
}

/// Adds the built-in example prices to `out`, keeping prices already there.
inline void add_example_prices(price_table& out) {
    for (const auto& [type, usd] : example_prices()) out.emplace(type, usd);
}

/// Prices from text items, as the CLI's repeatable `--price` gives them: `TYPE=USD` (USD a decimal number, as
/// std::stod reads it, filling the rest of the item) or `example`. `flag` names the option in every error:
/// `--price "a100=x": the price is not a number`.
inline price_table prices_from_text(const std::vector<std::string>& items, const gpu_catalog& catalog,
                                    std::string_view flag = "--price") {
    price_table out;
    const std::string f(flag);
    for (const auto& p : items) {
        if (p == example_prices_name) {
            add_example_prices(out);
            continue;
        }
        const auto eq = p.find('=');
        if (eq == std::string::npos || eq == 0)
            throw config_error(f + " \"" + p + "\" must be TYPE=USD_PER_HOUR or " + std::string(example_prices_name));
        const auto type = p.substr(0, eq);
        catalog.at(type, f);
        double usd = 0;
        try {
            std::size_t used = 0;
            usd = std::stod(p.substr(eq + 1), &used);
            if (used != p.size() - eq - 1) throw std::invalid_argument(p);
        } catch (const std::exception&) {
            throw config_error(f + " \"" + p + "\": the price is not a number");
        }
        add_price(out, catalog, type, usd, f, f + " \"" + p + "\": the price");
    }
    return out;
}

}  // namespace frenzy
