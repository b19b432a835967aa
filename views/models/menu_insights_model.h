#pragma once

#include "model/strategy_record.h"

#include <QAbstractTableModel>
#include <QList>

namespace autocomp {

// Menu insights as a table: one row per strategy (or strategy and model). Raw values under SortRole,
// formatted text under DisplayRole.
class MenuInsightsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Columns {
        StrategyColumn,
        ModelColumn,
        OfferedColumn,
        ChosenColumn,
        ChosenRateColumn, // chosen / offered
        CandidatesColumn,
        CompiledColumn,
        CorrectColumn,
        BeamColumn,
        MedianGainColumn,
        BestGainColumn,
        SourceColumn, // the agent's menu, a model's proposal (one-shot menu) or the planner's own idea
        ColumnCount
    };
    enum Roles { SortRole = Qt::UserRole, StrategyRole, RecordRowRole };

    explicit MenuInsightsModel(QObject *parent = nullptr);

    void setRecords(const QList<StrategyRecord> &records);
    const QList<StrategyRecord> &records() const { return m_records; }
    const StrategyRecord &record(int row) const { return m_records.at(row); }
    // The row of a strategy (and model, when grouped by model); -1 when none.
    int rowOf(const QString &strategy, const QString &model = QString()) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QList<StrategyRecord> m_records;
};

} // namespace autocomp
