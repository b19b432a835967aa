#include "search/run_schedule.h"

#include "platform/yaml_reader.h"
#include "store/run_store.h"

#include <QFile>
#include <QSet>

namespace autocomp {

QStringList RunSchedule::of(const QHash<qint64, Candidate> &candidates, qint64 candidateId)
{
    QStringList items;
    QSet<qint64> seen;
    for (qint64 id = candidateId; id > 0 && !seen.contains(id); id = candidates.value(id).parentId) {
        seen.insert(id);
        const Candidate c = candidates.value(id);
        if (c.origin != CandidateOrigin::Root && !c.menuItem.isEmpty())
            items.prepend(c.menuItem);
    }
    return items;
}

std::optional<QStringList> RunSchedule::load(const QString &source, RunStore *store, QString *error)
{
    bool isId = false;
    const qint64 runId = source.toLongLong(&isId);
    if (isId) {
        const auto run = store ? store->run(runId) : std::nullopt;
        if (!run) {
            *error = QStringLiteral("search.schedule: no run %1 in the store").arg(runId);
            return std::nullopt;
        }
        if (run->schedule.isEmpty()) {
            *error = QStringLiteral("search.schedule: run %1 has no schedule (it has not finished with an improvement)")
                         .arg(runId);
            return std::nullopt;
        }
        return run->schedule;
    }
    QFile file(source);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("search.schedule: %1: cannot read: %2").arg(source, file.errorString());
        return std::nullopt;
    }
    YamlReader r(source);
    const auto root = r.parse(file.readAll());
    std::optional<QStringList> items;
    if (root) {
        const YAML::Node list = root->IsMap() ? (*root)["schedule"] : *root;
        if (!list || !list.IsSequence())
            r.error(*root,
                    QStringLiteral("a schedule file is a list of menu items, or a mapping with 'schedule: [...]'"));
        else
            items = r.stringList(list, QStringLiteral("schedule"));
    }
    if (!r.ok()) {
        *error = r.errors().join(QLatin1Char('\n'));
        return std::nullopt;
    }
    return items;
}

} // namespace autocomp
