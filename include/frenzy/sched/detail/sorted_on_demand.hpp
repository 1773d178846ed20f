#pragma once
// A sequence read in ascending order that sorts only as far as it is read: HAS walks its queue of waiting jobs in
// order but stops once the free GPUs or its scan budgets run out (has.hpp place_waiting), so a full sort of every
// waiting job at every decision paid for positions it never reached. Here the items wait in a binary heap (made in
// O(n)) and each position read takes the next smallest (O(log n)): the same order as std::sort for distinct items
// compared by operator< (ties, which distinct pairs never have, may come in another order).
#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace frenzy::detail {

template <class T>
class sorted_on_demand {
public:
    void clear() {
        heap_.clear();
        sorted_.clear();
    }
    void push_back(const T& v) { heap_.push_back(v); }
    /// Call once all items are in, before reading them.
    void ready() { std::make_heap(heap_.begin(), heap_.end(), std::greater<T>{}); }
    std::size_t size() const { return heap_.size() + sorted_.size(); }
    /// The k-th smallest item (k < size()); items before it are sorted as a side effect.
    const T& operator[](std::size_t k) {
        while (sorted_.size() <= k) {
            std::pop_heap(heap_.begin(), heap_.end(), std::greater<T>{});
            sorted_.push_back(heap_.back());
            heap_.pop_back();
        }
        return sorted_[k];
    }

private:
    std::vector<T> heap_;    ///< the items not yet read, a min-heap
    std::vector<T> sorted_;  ///< the smallest items, ascending
};

}  // namespace frenzy::detail
