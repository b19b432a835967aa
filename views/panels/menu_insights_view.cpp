#include "panels/menu_insights_view.h"
#include "common/status_palette.h"

#include "agents/prompt_builder.h"
#include "models/menu_insights_model.h"
#include "store/run_store.h"
#include "common/value_format.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTreeWidget>
#include <QValueAxis>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <cmath>

namespace autocomp {

namespace {

constexpr int s_chartRows = 8; // more would not leave a label room to be read

struct Computed
{
    QList<StrategyRecord> records;
    QList<qint64> runs;
    QHash<qint64, QStringList> candidateRows;
    QString error;
};

Computed computeIn(const QString &path, qint64 runId, const QString &target, MenuInsightsView::Scope scope,
                   MenuInsights::Grouping grouping)
{
    Computed out;
    RunStore::OpenOptions options;
    options.create = false;
    options.check = false;
    options.allowReadOnly = true;
    std::unique_ptr<RunStore> store = RunStore::open(path, options, &out.error);
    if (!store)
        return out;
    out.runs = scope == MenuInsightsView::Scope::Target ? MenuInsights::runsOfTarget(*store, target)
                                                        : QList<qint64>{runId};
    out.records = MenuInsights::compute(*store, out.runs, grouping, &out.error);
    QSet<qint64> wanted;
    for (const StrategyRecord &r : out.records)
        for (qint64 id : r.candidateIds)
            wanted.insert(id);
    for (qint64 run : out.runs) {
        const QList<Candidate> candidates = store->candidates(run);
        QHash<qint64, double> scores;
        for (const Candidate &c : candidates)
            scores.insert(c.id, c.score);
        for (const Candidate &c : candidates) {
            if (!wanted.contains(c.id))
                continue;
            const double parent = scores.value(c.parentId, std::nan(""));
            const QString gain = c.status == CandidateStatus::Correct && parent > 0 && c.score > 0
                ? ValueFormat::speedup(parent / c.score)
                : QString();
            out.candidateRows.insert(
                c.id, {QString::number(run), QString::number(c.iteration), statusWord(c), gain, c.codeModel});
        }
    }
    return out;
}

} // namespace

MenuInsightsView::MenuInsightsView(QWidget *parent)
    : QWidget(parent)
    , m_model(new MenuInsightsModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
{
    setObjectName(QStringLiteral("menuInsightsView"));
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(MenuInsightsModel::SortRole);

    m_scopeCombo = new QComboBox;
    m_scopeCombo->setObjectName(QStringLiteral("insightsScope"));
    m_scopeCombo->addItem(tr("This run"));
    m_scopeCombo->addItem(tr("All runs of the target"));
    m_groupingCombo = new QComboBox;
    m_groupingCombo->setObjectName(QStringLiteral("insightsGrouping"));
    m_groupingCombo->addItem(tr("By strategy"));
    m_groupingCombo->addItem(tr("By strategy and plan model"));
    m_groupingCombo->addItem(tr("By strategy and code model"));
    m_measureCombo = new QComboBox;
    m_measureCombo->setObjectName(QStringLiteral("insightsMeasure"));
    m_measureCombo->addItem(tr("Chart: counts"));
    m_measureCombo->addItem(tr("Chart: gains"));
    auto *refreshButton = new QPushButton(tr("Refresh"));
    refreshButton->setObjectName(QStringLiteral("insightsRefresh"));
    refreshButton->setToolTip(tr("Reads the store again (a live run adds candidates)"));
    connect(refreshButton, &QPushButton::clicked, this, &MenuInsightsView::refresh);
    auto *exportButton = new QPushButton(tr("Export CSV…"));
    exportButton->setObjectName(QStringLiteral("insightsExportCsv"));
    m_summary = new QLabel;
    m_summary->setObjectName(QStringLiteral("insightsSummary"));
    // The bar must not make the middle pane wide: the combos shrink to a few characters, the summary elides.
    m_summary->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    for (QComboBox *combo : {m_scopeCombo, m_groupingCombo, m_measureCombo}) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(8);
    }

    auto *bar = new QHBoxLayout;
    bar->addWidget(m_scopeCombo, 2);
    bar->addWidget(m_groupingCombo, 2);
    bar->addWidget(m_measureCombo, 1);
    auto *secondRow = new QHBoxLayout;
    secondRow->addWidget(m_summary, 1);
    secondRow->addWidget(refreshButton);
    secondRow->addWidget(exportButton);

    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("insightsTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(MenuInsightsModel::ChosenColumn, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->setWordWrap(false);
    m_table->setAlternatingRowColors(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(MenuInsightsModel::StrategyColumn, QHeaderView::Interactive);
    m_table->setColumnWidth(MenuInsightsModel::StrategyColumn, 220);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);

    m_chart = new QChart;
    m_chart->setObjectName(QStringLiteral("insightsChart"));
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_chartView = new QChartView(m_chart);
    m_chartView->setObjectName(QStringLiteral("insightsChartView"));
    m_chartView->setRenderHint(QPainter::Antialiasing);
    m_chartView->setMinimumHeight(300);

    m_candidates = new QTreeWidget;
    m_candidates->setObjectName(QStringLiteral("insightsCandidates"));
    m_candidates->setHeaderLabels(
        {tr("Candidate"), tr("Run"), tr("Iteration"), tr("Status"), tr("Gain"), tr("Code model")});
    m_candidates->setRootIsDecorated(false);
    m_candidates->setUniformRowHeights(true);
    m_candidates->setSortingEnabled(true);
    m_candidates->setToolTip(tr("The candidates of the selected strategy; double-click one to show it"));

    // Table, chart and candidates one above the other, each as wide as the pane.
    auto *split = new QSplitter(Qt::Vertical);
    split->setObjectName(QStringLiteral("insightsSplitter"));
    split->addWidget(m_table);
    split->addWidget(m_chartView);
    split->addWidget(m_candidates);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 4);
    split->setStretchFactor(2, 2);
    split->setSizes({250, 400, 150});

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(bar);
    layout->addLayout(secondRow);
    layout->addWidget(split, 1);

    connect(m_scopeCombo, &QComboBox::currentIndexChanged, this, [this](int i) { setScope(Scope(i)); });
    connect(m_groupingCombo, &QComboBox::currentIndexChanged, this,
            [this](int i) { setGrouping(MenuInsights::Grouping(i)); });
    connect(m_measureCombo, &QComboBox::currentIndexChanged, this, [this](int i) { setMeasure(Measure(i)); });
    connect(exportButton, &QPushButton::clicked, this, &MenuInsightsView::exportClicked);
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, &MenuInsightsView::rebuildChart);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &MenuInsightsView::showCandidatesOfCurrent);
    auto activate = [this](QTreeWidgetItem *item) {
        if (item)
            Q_EMIT candidateActivated(item->data(1, Qt::UserRole).toLongLong(),
                                      item->data(0, Qt::UserRole).toLongLong());
    };
    connect(m_table, &QTableView::activated, this, [this](const QModelIndex &index) {
        Q_EMIT strategyActivated(index.data(MenuInsightsModel::StrategyRole).toString());
    });
    connect(m_candidates, &QTreeWidget::itemDoubleClicked, this, activate);
    connect(m_candidates, &QTreeWidget::itemActivated, this, activate);
}

MenuInsightsView::~MenuInsightsView() = default;

void MenuInsightsView::setStorePath(const QString &path)
{
    if (path == m_storePath)
        return;
    m_storePath = path;
    clear();
}

void MenuInsightsView::setRun(qint64 runId, const QString &target)
{
    m_runId = runId;
    m_target = target;
    m_scopeCombo->setItemText(1, target.isEmpty() ? tr("All runs of the target") : tr("All runs of %1").arg(target));
    if (isVisible()) {
        refresh();
    } else {
        ++m_generation; // what is computing is for another run
        m_stale = true;
    }
}

void MenuInsightsView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        rebuildChart(); // a theme switch repaints the chart in the new palette, no restart
}

void MenuInsightsView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_stale)
        refresh();
}

void MenuInsightsView::clear()
{
    ++m_generation;
    m_runId = 0;
    m_coveredRuns.clear();
    m_candidateRows.clear();
    m_model->setRecords({});
    m_candidates->clear();
    m_summary->clear();
    rebuildChart();
}

void MenuInsightsView::setScope(Scope scope)
{
    m_scope = scope;
    m_scopeCombo->setCurrentIndex(int(scope));
    refresh();
}

void MenuInsightsView::setGrouping(MenuInsights::Grouping grouping)
{
    m_grouping = grouping;
    m_groupingCombo->setCurrentIndex(int(grouping));
    refresh();
}

void MenuInsightsView::setMeasure(Measure measure)
{
    m_measure = measure;
    m_measureCombo->setCurrentIndex(int(measure));
    rebuildChart();
}

void MenuInsightsView::refresh()
{
    const quint64 generation = ++m_generation;
    m_stale = false;
    if (m_storePath.isEmpty() || m_runId == 0)
        return;
    m_summary->setText(tr("Reading the store…"));
    auto *watcher = new QFutureWatcher<Computed>(this);
    connect(watcher, &QFutureWatcher<Computed>::finished, this, [this, watcher, generation] {
        const Computed c = watcher->result();
        watcher->deleteLater();
        applyRecords(generation, c.records, c.runs, c.candidateRows, c.error);
    });
    watcher->setFuture(QtConcurrent::run(computeIn, m_storePath, m_runId, m_target, m_scope, m_grouping));
}

void MenuInsightsView::applyRecords(quint64 generation, const QList<StrategyRecord> &records, const QList<qint64> &runs,
                                    const QHash<qint64, QStringList> &candidateRows, const QString &error)
{
    if (generation != m_generation) // settings changed while it was computed
        return;
    m_coveredRuns = runs;
    m_candidateRows = candidateRows;
    m_model->setRecords(records);
    m_table->setColumnHidden(MenuInsightsModel::ModelColumn, m_grouping == MenuInsights::Grouping::Strategy);
    const bool codeModel = m_grouping == MenuInsights::Grouping::CodeModel;
    for (int column : {int(MenuInsightsModel::OfferedColumn), int(MenuInsightsModel::ChosenColumn),
                       int(MenuInsightsModel::ChosenRateColumn)})
        m_table->setColumnHidden(column, codeModel);
    int plans = 0;
    QSet<QString> proposed;
    for (const StrategyRecord &r : records) {
        plans += r.chosen;
        if (r.proposed)
            proposed.insert(r.strategy);
    }
    // Strategies a model proposed (one-shot menu) are listed apart from the agent's own: the Source column,
    // shown when there are any, and sorted by it at once.
    m_table->setColumnHidden(MenuInsightsModel::SourceColumn, proposed.isEmpty());
    if (!proposed.isEmpty() && m_table->horizontalHeader()->sortIndicatorSection() == MenuInsightsModel::ChosenColumn) {
        m_proxy->sort(MenuInsightsModel::ChosenColumn, Qt::DescendingOrder);
        m_proxy->sort(MenuInsightsModel::SourceColumn, Qt::AscendingOrder); // stable: chosen order within each source
        m_table->horizontalHeader()->setSortIndicator(MenuInsightsModel::SourceColumn, Qt::AscendingOrder);
    }
    QString summary = runs.size() == 1 ? tr("Run %1: %n plan(s)", nullptr, plans).arg(runs.first())
                                       : tr("%1 runs of %2: %n plan(s)", nullptr, plans).arg(runs.size()).arg(m_target);
    if (!proposed.isEmpty())
        summary += tr(" · %n strateg(y/ies) proposed by a model (one-shot menu), listed after the agent's own", nullptr,
                      int(proposed.size()));
    if (!error.isEmpty())
        summary += QStringLiteral(" · ") + error;
    m_summary->setText(summary);
    if (m_proxy->rowCount() > 0)
        m_table->selectRow(0);
    rebuildChart();
    Q_EMIT updated();
}

void MenuInsightsView::rebuildChart()
{
    m_chart->removeAllSeries();
    for (QAbstractAxis *axis : m_chart->axes())
        m_chart->removeAxis(axis);
    // The chart follows the palette (light or dark), set before the series so they take the theme's colours.
    m_chart->setTheme(StatusPalette::isDark(palette()) ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    const int rows = std::min(m_proxy->rowCount(), s_chartRows);
    if (rows == 0) {
        m_chart->setTitle(tr("No plans yet"));
        return;
    }
    const bool counts = m_measure == Measure::Counts;
    m_chart->setTitle(counts ? tr("First %n strategies of the table: counts", nullptr, rows)
                             : tr("First %n strategies of the table: gain over the parent", nullptr, rows));
    QList<QBarSet *> sets;
    if (counts)
        sets = {new QBarSet(tr("offered")), new QBarSet(tr("chosen")), new QBarSet(tr("correct")),
                new QBarSet(tr("entered beam"))};
    else
        sets = {new QBarSet(tr("median gain")), new QBarSet(tr("best gain"))};
    if (counts && m_grouping == MenuInsights::Grouping::CodeModel) {
        delete sets.takeFirst(); // offered and chosen belong to plan models
        delete sets.takeFirst();
    }
    QStringList categories;
    double top = 0;
    // Horizontal bars are drawn bottom-up: the table's first row goes last so it is on top.
    for (int row = rows - 1; row >= 0; --row) {
        const StrategyRecord &r = m_model->record(m_proxy->mapToSource(m_proxy->index(row, 0)).row());
        QString name = PromptBuilder::shortName(r.strategy, 26);
        if (!r.model.isEmpty())
            name += QStringLiteral(" · ") + r.model.section(QStringLiteral("::"), -1);
        // Categories must be unique; two long names may shorten alike.
        while (categories.contains(name))
            name += QLatin1Char(' ');
        categories << name;
        QList<double> values;
        if (counts) {
            if (m_grouping != MenuInsights::Grouping::CodeModel)
                values << r.offered << r.chosen;
            values << r.correct << r.enteredBeam;
        } else {
            values << (std::isnan(r.medianGain) ? 0.0 : r.medianGain) << (std::isnan(r.bestGain) ? 0.0 : r.bestGain);
        }
        for (int i = 0; i < sets.size(); ++i) {
            *sets[i] << values.at(i);
            top = std::max(top, values.at(i));
        }
    }
    auto *series = new QHorizontalBarSeries;
    series->setObjectName(QStringLiteral("insightsSeries"));
    for (QBarSet *set : sets)
        series->append(set);
    m_chart->addSeries(series);
    auto *categoryAxis = new QBarCategoryAxis;
    categoryAxis->append(categories);
    auto *valueAxis = new QValueAxis;
    valueAxis->setRange(0, top > 0 ? top * 1.05 : 1);
    valueAxis->setLabelFormat(counts ? QStringLiteral("%d") : QStringLiteral("%.2f×"));
    if (counts) { // whole numbers only
        valueAxis->setTickType(QValueAxis::TicksDynamic);
        valueAxis->setTickAnchor(0);
        valueAxis->setTickInterval(std::max(1.0, std::ceil(top / 8)));
    }
    valueAxis->setTitleText(counts ? tr("count") : tr("parent score / own score"));
    m_chart->addAxis(categoryAxis, Qt::AlignLeft);
    m_chart->addAxis(valueAxis, Qt::AlignBottom);
    series->attachAxis(categoryAxis);
    series->attachAxis(valueAxis);
}

void MenuInsightsView::showCandidatesOfCurrent()
{
    m_candidates->clear();
    const QModelIndex current = m_table->currentIndex();
    if (!current.isValid())
        return;
    const StrategyRecord &r = m_model->record(m_proxy->mapToSource(current).row());
    QList<QTreeWidgetItem *> items;
    for (qint64 id : r.candidateIds) {
        const QStringList row = m_candidateRows.value(id);
        if (row.size() < 5)
            continue;
        auto *item = new QTreeWidgetItem(QStringList{QString::number(id)} + row);
        item->setData(0, Qt::UserRole, id);
        item->setData(1, Qt::UserRole, row.at(0).toLongLong());
        items << item;
    }
    m_candidates->addTopLevelItems(items);
    for (int column = 0; column < m_candidates->columnCount(); ++column)
        m_candidates->resizeColumnToContents(column);
}

bool MenuInsightsView::selectStrategy(const QString &strategy, const QString &model)
{
    const int row = m_model->rowOf(strategy, model);
    if (row < 0)
        return false;
    const QModelIndex index = m_proxy->mapFromSource(m_model->index(row, 0));
    m_table->setCurrentIndex(index);
    m_table->scrollTo(index);
    return true;
}

bool MenuInsightsView::exportCsv(const QString &path, QString *error) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error)
            *error = tr("%1: %2").arg(path, file.errorString());
        return false;
    }
    // The table's order, so the file reads like the screen.
    QList<StrategyRecord> ordered;
    for (int row = 0; row < m_proxy->rowCount(); ++row)
        ordered << m_model->record(m_proxy->mapToSource(m_proxy->index(row, 0)).row());
    file.write(MenuInsights::toCsv(ordered).toUtf8());
    if (!file.commit()) {
        if (error)
            *error = tr("%1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

void MenuInsightsView::exportClicked()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export Menu Insights"), QStringLiteral("menu-insights-run%1.csv").arg(m_runId), tr("CSV (*.csv)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!exportCsv(path, &error))
        QMessageBox::warning(this, tr("Export Menu Insights"), error);
}

} // namespace autocomp
