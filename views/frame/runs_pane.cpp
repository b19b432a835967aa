#include "frame/runs_pane.h"

#include "live/store_session.h"
#include "models/run_list_model.h"
#include "store/run_store.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace autocomp {

RunsPane::RunsPane(StoreSession *session, std::function<bool(qint64)> drivenHere,
                   std::function<QString(qint64)> driverText, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_drivenHere(std::move(drivenHere))
    , m_driverText(std::move(driverText))
    , m_model(new RunListModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(RunListModel::SortRole);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_proxy->setFilterKeyColumn(-1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);

    m_filter = new QLineEdit;
    m_filter->setObjectName(QStringLiteral("runFilter"));
    m_filter->setPlaceholderText(tr("Filter runs (Ctrl+F)"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    layout->addWidget(m_filter);

    m_view = new QTableView;
    m_view->setObjectName(QStringLiteral("runsView"));
    m_view->setModel(m_proxy);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Several runs can be selected (Ctrl, Shift): Compare Runs ticks them; the current one is shown.
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(RunListModel::IdColumn, Qt::DescendingOrder);
    m_view->verticalHeader()->hide();
    m_view->setWordWrap(false);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->horizontalHeader()->setMinimumSectionSize(36);
    m_view->setColumnWidth(RunListModel::IdColumn, 52);
    m_view->setColumnWidth(RunListModel::TargetColumn, 54);
    m_view->setColumnWidth(RunListModel::ProblemColumn, 96);
    m_view->setColumnWidth(RunListModel::StateColumn, 66);
    m_view->setColumnWidth(RunListModel::SpeedupColumn, 64);
    m_view->setColumnWidth(RunListModel::DollarsColumn, 56);
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 8);
    // "Driven by" only while some run has a driver: empty, it would only take room from the others.
    m_view->setColumnHidden(RunListModel::DriverColumn, !m_model->hasDrivers());
    connect(m_model, &RunListModel::hasDriversChanged, this, [this](bool shown) {
        m_view->setColumnHidden(RunListModel::DriverColumn, !shown);
        if (shown) {
            m_view->resizeColumnToContents(RunListModel::DriverColumn);
            m_view->setColumnWidth(RunListModel::DriverColumn, m_view->columnWidth(RunListModel::DriverColumn) + 6);
        }
        Q_EMIT driverColumnChanged();
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                if (current.isValid())
                    Q_EMIT runActivated(current.data(RunListModel::RunIdRole).toLongLong());
            });
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    layout->addWidget(m_view);
}

void RunsPane::reload()
{
    RunStore *store = m_session->store();
    const QList<RunInfo> runs = store->runs();
    m_model->setRuns(runs);
    // A run recorded as running whose process is gone (killed) says so, and can be resumed.
    QHash<qint64, QString> shown;
    for (const RunInfo &run : runs)
        if (run.state == RunState::Running && !m_drivenHere(run.id) && store->isInterrupted(run))
            shown.insert(run.id, store->displayState(run));
    m_model->setDisplayStates(shown);
    const QList<qint64> live = m_session->snapshots().keys();
    for (qint64 id : live)
        updateLiveState(id);
}

void RunsPane::updateLiveState(qint64 runId)
{
    const auto it = m_session->snapshots().constFind(runId);
    if (it == m_session->snapshots().constEnd())
        return;
    const bool driving = m_drivenHere(runId);
    const QString state = !driving && it->interrupted() ? QStringLiteral("interrupted") : QString();
    QString driver = m_driverText(runId);
    // A lease left by a process that ended cleanly is not news once the run has ended.
    if (!driving && it->lease && !it->lease->alive && it->run.state != RunState::Running)
        driver.clear();
    const QString tip = it->lease && !driver.isEmpty() ? tr("Driven by %1 (%2)").arg(driver, it->lease->describe())
                                                       : QString();
    // The runs pane is narrow: the column says who in a few characters, the tooltip says the rest.
    QString compact;
    if (driving || (it->lease && it->lease->isThisProcess()))
        compact = tr("this workbench");
    else if (it->lease && !driver.isEmpty())
        compact = it->lease->onThisHost() ? tr("pid %1").arg(it->lease->pid)
                                          : tr("pid %1 @ %2").arg(it->lease->pid).arg(it->lease->host);
    if (!compact.isEmpty() && it->lease && !it->lease->alive && !driving)
        compact = tr("gone: %1").arg(compact);
    m_model->setLiveState(runId, state, driver.isEmpty() ? QString() : compact, tip);
}

bool RunsPane::select(qint64 runId)
{
    const int row = m_model->rowOfRun(runId);
    if (row < 0)
        return false;
    const QModelIndex index = m_proxy->mapFromSource(m_model->index(row, 0));
    if (!index.isValid()) {
        if (m_filter->text().isEmpty())
            return false;
        m_filter->clear(); // the filter hid the run
        return select(runId);
    }
    m_view->setCurrentIndex(index);
    return true;
}

void RunsPane::selectFirst() { m_view->setCurrentIndex(m_proxy->index(0, 0)); }

QList<qint64> RunsPane::selectedRunIds(qint64 shownRunId) const
{
    QList<qint64> ids;
    if (shownRunId != 0)
        ids << shownRunId;
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    QList<QModelIndex> sorted(rows.cbegin(), rows.cend());
    std::sort(sorted.begin(), sorted.end(),
              [](const QModelIndex &a, const QModelIndex &b) { return a.row() < b.row(); });
    for (const QModelIndex &row : std::as_const(sorted))
        if (const qint64 id = row.data(RunListModel::RunIdRole).toLongLong(); id != 0 && !ids.contains(id))
            ids << id;
    return ids;
}

void RunsPane::clearFilter() { m_filter->clear(); }

void RunsPane::focusFilter()
{
    m_filter->setFocus(Qt::ShortcutFocusReason);
    m_filter->selectAll();
}

qint64 RunsPane::runBesideCurrent(int offset) const
{
    const QModelIndex index = m_proxy->index(m_view->currentIndex().row() + offset, 0);
    return index.isValid() ? index.data(RunListModel::RunIdRole).toLongLong() : 0;
}

int RunsPane::fitToRows()
{
    // Every column readable without scrolling (sized to its contents and header, the last one stretched).
    QHeaderView *header = m_view->horizontalHeader();
    header->setStretchLastSection(false);
    m_view->resizeColumnsToContents();
    for (int column = 0; column < RunListModel::ColumnCount; ++column)
        if (!m_view->isColumnHidden(column))
            m_view->setColumnWidth(column, m_view->columnWidth(column) + 6);
    header->setStretchLastSection(true);
    const int rows = std::max(1, m_proxy->rowCount());
    const int rowsHeight = rows * m_view->verticalHeader()->defaultSectionSize();
    // The filter line, the table's header and frame, a horizontal scroll bar should it appear, and a little air.
    const int chrome = m_filter->sizeHint().height() + header->sizeHint().height() + 2 * m_view->frameWidth()
        + m_view->horizontalScrollBar()->sizeHint().height() + 6;
    return rowsHeight + chrome;
}

} // namespace autocomp
