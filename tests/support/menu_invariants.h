#pragma once

#include <QStringList>

namespace autocomp {
class RunStore;
}

namespace autocomp::test {

// Checks MenuInsights on every run of `store`, in every grouping: chosen <= offered, correct <= compiled
// <= candidates, duplicates <= candidates, entered beam <= correct. Returns the violations, one line each.
QStringList menuInsightViolations(RunStore &store);

} // namespace autocomp::test
