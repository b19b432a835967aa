#pragma once

#include "model/candidate.h"

#include <QHash>
#include <QString>
#include <QStringList>

#include <optional>

namespace autocomp {

class RunStore;

// Schedules (search.schedule): the ordered menu items that led a run to its best candidate. A finished run
// stores its schedule; a later run seeded with it forces those items, one an iteration after translation,
// and plans freely afterwards. Pure apart from loading.
class RunSchedule
{
public:
    // The ordered menu items along the trajectory from the root to `candidateId`.
    static QStringList of(const QHash<qint64, Candidate> &candidates, qint64 candidateId);
    // Reads a schedule given as a run id (from the store) or a YAML file (`schedule: [...]` or a list).
    // nullopt with `error` set when the run has none, or the file cannot be read or is not such a list.
    static std::optional<QStringList> load(const QString &source, RunStore *store, QString *error);
};

} // namespace autocomp
