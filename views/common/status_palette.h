#pragma once

#include "model/candidate.h"

#include <QColor>
#include <QIcon>

class QPalette;

namespace autocomp {

// Colors for candidate states that stay readable on light and dark palettes.
class StatusPalette
{
public:
    // Text color for a status; invalid (use the palette's text color) for states in progress.
    static QColor foreground(CandidateStatus status, const QPalette &palette);
    // A small filled dot in the status color, for DecorationRole; in-progress states get a hollow dot.
    static QIcon icon(CandidateStatus status, const QPalette &palette);
    static bool isDark(const QPalette &palette);
};

} // namespace autocomp
