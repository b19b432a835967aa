#include "model/code_identity.h"

#include <QHash>

#include <algorithm>

namespace autocomp {

QString normalizedCode(const QString &code)
{
    QString out;
    out.reserve(code.size());
    for (QChar c : code)
        if (!c.isSpace())
            out += c;
    return out;
}

QList<Candidate> flagIdenticalCode(QList<Candidate> candidates)
{
    std::sort(candidates.begin(), candidates.end(), [](const Candidate &a, const Candidate &b) { return a.id < b.id; });
    QHash<QString, qint64> firstWith;
    QList<Candidate> changed;
    for (Candidate &c : candidates) {
        if (c.code.isEmpty() || c.status == CandidateStatus::Duplicate)
            continue;
        const QString key = normalizedCode(c.code);
        const auto it = firstWith.constFind(key);
        if (it == firstWith.cend()) {
            firstWith.insert(key, c.id);
            continue;
        }
        if (c.metrics.value(QStringLiteral("duplicate_of")).toInteger() == *it)
            continue;
        c.metrics.insert(QStringLiteral("duplicate_of"), *it);
        c.flags << QStringLiteral(
                       "duplicate of #%1: the same code, whitespace aside; its result is another measurement of #%1, "
                       "not the effect of a change")
                       .arg(*it);
        changed << c;
    }
    return changed;
}

} // namespace autocomp
