#pragma once

#include <QString>

namespace autocomp {

class Repository;

// A starting point for a new target: a copy of an existing target's evaluator (backends/<template>/, with
// backend.yaml renamed) and of its first problem (sols/<template>/<problem>/) under the user's data dir, to
// edit into the new hardware's. Nothing existing is overwritten.
class TargetScaffold
{
public:
    // Returns the new backend folder, or an empty string and *error naming what is in the way.
    static QString create(const Repository &repository, const QString &name, const QString &templateTarget,
                          QString *error);
};

} // namespace autocomp
