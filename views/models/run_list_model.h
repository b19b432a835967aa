#pragma once

#include "model/run_info.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QList>

namespace autocomp {

// The runs of a store, one row each.
class RunListModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Columns {
        IdColumn,
        TargetColumn,
        ProblemColumn,
        StateColumn,
        DriverColumn,
        SpeedupColumn,
        DollarsColumn,
        StartedColumn,
        ColumnCount
    };
    enum Roles { SortRole = Qt::UserRole, RunIdRole, LabelRole };

    explicit RunListModel(QObject *parent = nullptr);

    void setRuns(const QList<RunInfo> &runs);
    // Inserts a new run or refreshes the row of a known one.
    void upsertRun(const RunInfo &run);
    // What the state column says instead of the stored state, per run id: "interrupted" for a run recorded
    // as running whose driving process is gone (RunStore::displayState). Set anew by each reload of the list.
    void setDisplayStates(const QHash<qint64, QString> &states);
    // One run's state as shown (empty: its stored state) and who drives it ("this workbench", "pid 1234 on this
    // host", ...; empty: nobody), with a tooltip; kept across reloads of the list.
    void setLiveState(qint64 runId, const QString &displayState, const QString &driver, const QString &driverTip);
    void removeRun(qint64 runId);

    const RunInfo &run(int row) const { return m_runs.at(row); }
    // Whether some run is driven by a process (the Driven by column has something to say).
    bool hasDrivers() const { return !m_drivers.isEmpty(); }
    int rowOfRun(qint64 runId) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    void hasDriversChanged(bool hasDrivers);

private:
    QList<RunInfo> m_runs;
    QHash<qint64, QString> m_displayStates;
    QHash<qint64, std::pair<QString, QString>> m_drivers; // run id -> driver, its tooltip
};

} // namespace autocomp
