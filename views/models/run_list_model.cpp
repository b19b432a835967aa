#include "models/run_list_model.h"

#include <QDate>

#include "common/value_format.h"

#include <QApplication>
#include <QLocale>
#include <QStyle>

namespace autocomp {

RunListModel::RunListModel(QObject *parent) : QAbstractTableModel(parent) {}

void RunListModel::setRuns(const QList<RunInfo> &runs)
{
    beginResetModel();
    m_runs = runs;
    endResetModel();
}

void RunListModel::setDisplayStates(const QHash<qint64, QString> &states)
{
    m_displayStates = states;
    if (!m_runs.isEmpty())
        Q_EMIT dataChanged(index(0, StateColumn), index(int(m_runs.size()) - 1, StateColumn));
}

void RunListModel::setLiveState(qint64 runId, const QString &displayState, const QString &driver,
                                const QString &driverTip)
{
    const std::pair<QString, QString> shownDriver{driver, driverTip};
    const bool same = m_displayStates.value(runId) == displayState && m_drivers.value(runId) == shownDriver;
    const bool hadDrivers = hasDrivers();
    if (displayState.isEmpty())
        m_displayStates.remove(runId);
    else
        m_displayStates.insert(runId, displayState);
    if (driver.isEmpty())
        m_drivers.remove(runId);
    else
        m_drivers.insert(runId, shownDriver);
    const int row = rowOfRun(runId);
    if (!same && row >= 0)
        Q_EMIT dataChanged(index(row, StateColumn), index(row, DriverColumn));
    if (hadDrivers != hasDrivers())
        Q_EMIT hasDriversChanged(hasDrivers());
}

void RunListModel::upsertRun(const RunInfo &run)
{
    const int row = rowOfRun(run.id);
    if (row >= 0) {
        m_runs[row] = run;
        Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
        return;
    }
    beginInsertRows({}, m_runs.size(), m_runs.size());
    m_runs.append(run);
    endInsertRows();
}

void RunListModel::removeRun(qint64 runId)
{
    const int row = rowOfRun(runId);
    if (row < 0)
        return;
    beginRemoveRows({}, row, row);
    m_runs.removeAt(row);
    endRemoveRows();
    if (m_drivers.remove(runId) > 0 && !hasDrivers())
        Q_EMIT hasDriversChanged(false);
}

int RunListModel::rowOfRun(qint64 runId) const
{
    for (int row = 0; row < m_runs.size(); ++row)
        if (m_runs.at(row).id == runId)
            return row;
    return -1;
}

int RunListModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : m_runs.size(); }

int RunListModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RunListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const RunInfo &run = m_runs.at(index.row());
    const bool hasBest = run.bestScore > 0 && run.baselineScore > 0;

    switch (role) {
    case RunIdRole: return run.id;
    case LabelRole: return run.label;
    case SortRole:
        switch (index.column()) {
        case IdColumn: return run.id;
        case TargetColumn: return run.target;
        case ProblemColumn: return run.problem;
        case StateColumn: return m_displayStates.value(run.id, toString(run.state));
        case DriverColumn: return m_drivers.value(run.id).first;
        case SpeedupColumn: return hasBest ? run.speedup() : 0.0;
        case DollarsColumn: return run.usd;
        case StartedColumn: return run.createdAt;
        }
        break;
    case Qt::DisplayRole:
        switch (index.column()) {
        case IdColumn: return run.id;
        case TargetColumn: return run.target;
        case ProblemColumn: return run.problem;
        case StateColumn: return m_displayStates.value(run.id, toString(run.state));
        case DriverColumn: return m_drivers.value(run.id).first;
        case SpeedupColumn: return hasBest ? ValueFormat::speedup(run.speedup()) : QStringLiteral("—");
        case DollarsColumn: return ValueFormat::dollars(run.usd);
        case StartedColumn:
            // Compact, so the runs pane shows every column without being wide.
            // This year's runs without the year (the tooltip has the whole date).
            if (!run.createdAt.isValid())
                return QString();
            return run.createdAt.toLocalTime().toString(run.createdAt.toLocalTime().date().year()
                                                                == QDate::currentDate().year()
                                                            ? QStringLiteral("MM-dd HH:mm")
                                                            : QStringLiteral("yyyy-MM-dd HH:mm"));
        }
        break;
    case Qt::ToolTipRole: {
        if (index.column() == DriverColumn && m_drivers.contains(run.id))
            return m_drivers.value(run.id).second;
        QString tip = tr("Run %1: %2 on %3, agent %4").arg(run.id).arg(run.problem, run.target, run.agent);
        if (run.createdAt.isValid())
            tip += QLatin1Char('\n')
                + tr("Started %1").arg(run.createdAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
        if (hasBest)
            tip += QLatin1Char('\n')
                + tr("Baseline %1, best %2 (candidate %3)")
                      .arg(ValueFormat::score(run.baselineScore, run.metric, run.metricUnit),
                           ValueFormat::score(run.bestScore, run.metric, run.metricUnit))
                      .arg(run.bestCandidateId);
        tip += QLatin1Char('\n')
            + tr("%1 LLM calls, %2 tokens in, %3 tokens out").arg(run.llmCalls).arg(run.tokensIn).arg(run.tokensOut);
        if (!run.stopReason.isEmpty())
            tip += QLatin1Char('\n') + tr("Reason: %1").arg(run.stopReason);
        if (!run.label.isEmpty())
            tip += QLatin1Char('\n') + run.label;
        return tip;
    }
    case Qt::DecorationRole:
        // Labelled runs (e.g. the bundled example) are marked so they are not mistaken for real results.
        if (index.column() == IdColumn && !run.label.isEmpty())
            return QApplication::style()->standardIcon(QStyle::SP_MessageBoxInformation);
        break;
    case Qt::TextAlignmentRole:
        switch (index.column()) {
        case IdColumn:
        case SpeedupColumn:
        case DollarsColumn: return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
        }
        break;
    }
    return {};
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IdColumn: return tr("Run");
    case TargetColumn: return tr("Target");
    case ProblemColumn: return tr("Problem");
    case StateColumn: return tr("State");
    case DriverColumn: return tr("Driven by");
    case SpeedupColumn: return tr("Speedup");
    case DollarsColumn: return tr("Cost");
    case StartedColumn: return tr("Started");
    }
    return {};
}

} // namespace autocomp
