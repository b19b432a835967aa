#pragma once

#include "model/candidate.h"

#include <QSortFilterProxyModel>

#include <optional>

namespace autocomp {

// Search in a run: keeps the candidates whose plan or code contains a text (case-insensitive), with a
// status and a strategy (menu item) when those are set, and their ancestors so the tree still reads.
// Sits on a CandidateTreeModel.
class CandidateFilterProxy : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    explicit CandidateFilterProxy(QObject *parent = nullptr);

    void setSearchText(const QString &text);
    // A status word (statusWord: "compile error", "crash", "cancelled"...); empty for any.
    void setStatusFilter(const QString &word);
    void setStrategyFilter(const QString &strategy); // empty: any
    void clearSearch();
    bool isSearching() const;

    bool matches(const Candidate &candidate) const;
    // Ids of the source model's candidates that match (not their ancestors).
    QList<qint64> matchingIds() const;

Q_SIGNALS:
    void searchChanged();

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    void changed();

    QString m_text;
    QString m_status;
    QString m_strategy;
};

} // namespace autocomp
