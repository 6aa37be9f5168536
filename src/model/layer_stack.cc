#include <algorithm>

#include "trainflops/model.h"

namespace trainflops {

LayerStack::LayerStack(std::initializer_list<Layer> layers) {
  for (const Layer& layer : layers) append(layer);
}

LayerStack::LayerStack(const std::vector<Layer>& layers) {
  for (const Layer& layer : layers) append(layer);
}

std::size_t LayerStack::append(const Layer& layer, std::int64_t count) {
  // The previous run's layer first: consecutive layers are most often equal.
  if (!runs_.empty() && distinct_[runs_.back().layer] == layer) {
    const std::size_t index = runs_.back().layer;
    append_again(index, count);
    return index;
  }
  const auto held = std::find(distinct_.begin(), distinct_.end(), layer);
  const auto index = static_cast<std::size_t>(held - distinct_.begin());
  if (held == distinct_.end()) distinct_.push_back(layer);
  append_again(index, count);
  return index;
}

void LayerStack::set(std::size_t position, const Layer& layer) {
  LayerStack rebuilt;
  std::int64_t start = 0;
  const auto at = static_cast<std::int64_t>(position);
  for (const Run& run : runs_) {
    const Layer& held = distinct_[run.layer];
    if (at < start || at >= start + run.count) {
      rebuilt.append(held, run.count);
    } else {
      if (at > start) rebuilt.append(held, at - start);
      rebuilt.append(layer);
      if (start + run.count > at + 1) rebuilt.append(held, start + run.count - at - 1);
    }
    start += run.count;
  }
  *this = std::move(rebuilt);
}

const Layer& LayerStack::operator[](std::size_t position) const {
  const auto after = std::upper_bound(runs_.begin(), runs_.end(), static_cast<std::int64_t>(position),
                                      [](std::int64_t at, const Run& run) { return at < run.start; });
  return distinct_[std::prev(after)->layer];
}

LayerStack::Iterator& LayerStack::Iterator::operator++() {
  if (++within_ == stack_->runs_[run_].count) {
    ++run_;
    within_ = 0;
  }
  return *this;
}

bool LayerStack::operator==(const LayerStack& other) const {
  if (size_ != other.size_) return false;
  // Walk both run lists together, comparing each stretch where neither changes layer.
  std::size_t mine = 0, theirs = 0;
  std::int64_t position = 0;
  while (position < size_) {
    const Run& a = runs_[mine];
    const Run& b = other.runs_[theirs];
    if (!(distinct_[a.layer] == other.distinct_[b.layer])) return false;
    position = std::min(a.start + a.count, b.start + b.count);
    if (a.start + a.count == position) ++mine;
    if (b.start + b.count == position) ++theirs;
  }
  return true;
}

}  // namespace trainflops
