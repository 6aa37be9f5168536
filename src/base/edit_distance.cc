#include "base/edit_distance.h"

#include <algorithm>
#include <numeric>

namespace trainflops {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  std::iota(previous.begin(), previous.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string> nearest_name(std::string_view name, const std::vector<std::string_view>& candidates,
                                        std::size_t max_distance) {
  std::size_t nearest_distance = max_distance + 1;
  std::optional<std::string> nearest;
  for (const std::string_view candidate : candidates) {
    // The distance is at least the difference in length: most candidates are
    // out of reach without aligning them.
    const std::size_t length_gap =
        name.size() > candidate.size() ? name.size() - candidate.size() : candidate.size() - name.size();
    if (length_gap >= nearest_distance) continue;
    const std::size_t distance = edit_distance(name, candidate);
    if (distance < nearest_distance) {
      nearest_distance = distance;
      nearest = std::string(candidate);
    }
  }
  return nearest;
}

}  // namespace trainflops
