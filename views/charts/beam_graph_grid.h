#pragma once

// The beam graph's grid in scene units, shared by the view (hit tests, scrolling), its layout (edges, bounds) and
// its painting (boxes): a node of iteration c in row r is centred at (c * s_columnPitch, r * s_rowPitch).
namespace autocomp::beam_graph {

inline constexpr double s_nodeWidth = 150;
inline constexpr double s_nodeHeight = 40;
inline constexpr double s_columnPitch = 230;
inline constexpr double s_rowPitch = 52;

} // namespace autocomp::beam_graph
