#include "models/candidate_filter_proxy.h"

#include "models/candidate_tree_model.h"

#include <functional>

namespace autocomp {

CandidateFilterProxy::CandidateFilterProxy(QObject *parent) : QSortFilterProxyModel(parent)
{
    setRecursiveFilteringEnabled(true);
}

void CandidateFilterProxy::setSearchText(const QString &text)
{
    if (text == m_text)
        return;
    m_text = text;
    changed();
}

void CandidateFilterProxy::setStatusFilter(const QString &word)
{
    if (word == m_status)
        return;
    m_status = word;
    changed();
}

void CandidateFilterProxy::setStrategyFilter(const QString &strategy)
{
    if (strategy == m_strategy)
        return;
    m_strategy = strategy;
    changed();
}

void CandidateFilterProxy::clearSearch()
{
    m_text.clear();
    m_status.clear();
    m_strategy.clear();
    changed();
}

bool CandidateFilterProxy::isSearching() const
{
    return !m_text.trimmed().isEmpty() || !m_status.isEmpty() || !m_strategy.isEmpty();
}

void CandidateFilterProxy::changed()
{
    invalidateRowsFilter();
    Q_EMIT searchChanged();
}

bool CandidateFilterProxy::matches(const Candidate &c) const
{
    if (!m_status.isEmpty() && statusWord(c) != m_status)
        return false;
    if (!m_strategy.isEmpty() && c.menuItem != m_strategy)
        return false;
    const QString text = m_text.trimmed();
    return text.isEmpty() || c.plan.contains(text, Qt::CaseInsensitive) || c.code.contains(text, Qt::CaseInsensitive);
}

QList<qint64> CandidateFilterProxy::matchingIds() const
{
    QList<qint64> out;
    const auto *model = qobject_cast<const CandidateTreeModel *>(sourceModel());
    if (!model)
        return out;
    const std::function<void(const QModelIndex &)> walk = [&](const QModelIndex &parent) {
        for (int row = 0; row < model->rowCount(parent); ++row) {
            const QModelIndex index = model->index(row, 0, parent);
            if (const Candidate *c = model->candidate(index); c && matches(*c))
                out << c->id;
            walk(index);
        }
    };
    walk({});
    return out;
}

bool CandidateFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    if (!isSearching())
        return QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent);
    const auto *model = qobject_cast<const CandidateTreeModel *>(sourceModel());
    if (!model)
        return true;
    const Candidate *c = model->candidate(model->index(sourceRow, 0, sourceParent));
    return c && matches(*c);
}

} // namespace autocomp
