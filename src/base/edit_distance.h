// Internal: did-you-mean suggestions for misspelt names (flags, config fields).
#ifndef TRAINFLOPS_SRC_BASE_EDIT_DISTANCE_H_
#define TRAINFLOPS_SRC_BASE_EDIT_DISTANCE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainflops {

// Optimal string alignment distance: insertions, deletions, substitutions and
// swaps of neighbours, each one edit.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `name` within `max_distance` edits, the first of
// equals; nullopt when none is that near.
std::optional<std::string> nearest_name(std::string_view name, const std::vector<std::string_view>& candidates,
                                        std::size_t max_distance);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_BASE_EDIT_DISTANCE_H_
