#pragma once

#include <QString>
#include <QStringList>

namespace autocomp::DataPaths {

// Where the data lives: the targets (backends/), problems (sols/), agents (agents/), prices and
// resources. Lower layers (the price table) read them without loading any target.

// $XDG_DATA_HOME/autocomp-workbench: the user's own copies, which shadow the shipped ones.
QString userDataDir();
// Where the shipped agents/, backends/, sols/ and resources/ are: <bin>/../share/autocomp-workbench
// next to the running executable when it exists (an installed or relocated copy), else the source
// tree for a program in the build tree (or with no QCoreApplication), else the configured prefix.
QString shippedDataDir();
// The search order: $AUTOCOMP_DATA_DIR, userDataDir(), shippedDataDir(), without repeats.
QStringList searchDirs();
// The judge kit, {kit_dir} in a backend.yaml: backends/common of the first search directory that has
// one (normally the shipped copy; a data directory may bring its own), so a target in the user's data
// directory reaches the same kit as the shipped targets beside it.
QString kitDir();

} // namespace autocomp::DataPaths
