#pragma once

#include <QPalette>
#include <QString>

namespace autocomp {

// The application's light/dark appearance (Settings::theme()).
namespace Theme {
// "light" and "dark": the Fusion style with a light or dark palette. "system" (or anything else): the
// style and palette the platform gave the application at the first call. Needs a QApplication.
void apply(const QString &theme);
QPalette lightPalette();
QPalette darkPalette();
} // namespace Theme

} // namespace autocomp
