#pragma once

#include "model/candidate.h"

#include <QAbstractItemModel>
#include <QHash>
#include <QList>

namespace autocomp {

class ShownRun;

// A run's candidates as their search tree: each candidate under the one it was derived from.
class CandidateTreeModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Columns {
        // The figures before the long texts (strategy, model): they stay in sight in a narrow pane.
        IdColumn,
        StatusColumn,
        ScoreColumn,
        SpeedupColumn,
        IterationColumn,
        OriginColumn,
        MenuItemColumn,
        ModelColumn,
        ColumnCount
    };
    enum Roles { SortRole = Qt::UserRole, CandidateIdRole, ParentIdRole, StatusRole, InBeamRole };

    explicit CandidateTreeModel(QObject *parent = nullptr);

    // The target's metric (e.g. latency_ms): its unit is shown with the scores.
    // `unit`: the run's stored unit (RunInfo::metricUnit); empty: the one the metric's name implies.
    void setMetric(const QString &metric, const QString &unit = {});
    QString metric() const { return m_metric; }

    void setCandidates(const QList<Candidate> &candidates);
    // Follows `run`: its candidates and metric when it is shown, each batch of changes as it comes.
    void setShownRun(const ShownRun *run);
    // Adds a candidate or refreshes a known one. A child that arrives before its parent sits at the top
    // level and moves under the parent once the parent arrives.
    void upsertCandidate(const Candidate &candidate);
    void upsertCandidates(const QList<Candidate> &candidates);
    void clear();

    QModelIndex indexOfCandidate(qint64 candidateId, int column = 0) const;
    // Null when the index is invalid.
    const Candidate *candidate(const QModelIndex &index) const;
    // The run's root (0 before it is known): the candidate the speedups are measured against.
    qint64 rootCandidateId() const;
    int candidateCount() const { return m_nodes.size(); }
    // The candidates held that are in the beam.
    QList<qint64> beamIds() const;
    // Candidates still planned, coded or evaluated.
    QList<qint64> inFlightIds() const;
    // The highest candidate id held (0: none).
    qint64 lastCandidateId() const;

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Node
    {
        Candidate candidate;
        int parent = -1; // position in m_nodes, -1 for the top level
        QList<int> children;
        int row = 0; // position among its parent's children, kept so parent() is O(1) on big runs
    };

    const QList<int> &childrenOf(int node) const;
    QList<int> &childrenOf(int node);
    int rowOf(int node) const;
    int parentNodeOf(const Candidate &candidate) const;
    double rootScore() const;
    void adoptOrphans(int node);
    void emitSpeedupChanged(int node);

    QString m_metric;
    QString m_metricUnit;
    QList<Node> m_nodes; // in arrival order; positions are stable (internalId)
    QList<int> m_topLevel;
    QHash<qint64, int> m_nodeOfId; // candidate id -> position in m_nodes
    int m_rootNode = -1;
};

} // namespace autocomp
