#include "charts/runs_comparison_view.h"
#include "common/status_palette.h"

#include "model/run_config.h"
#include "store/run_store.h"
#include "common/value_format.h"

#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QListWidget>
#include <QSplitter>
#include <QTableWidget>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <map>

namespace autocomp {

RunsComparisonView::RunsComparisonView(QWidget *parent)
    : QWidget(parent)
    , m_runs(new QListWidget)
    , m_chart(new QChart)
    , m_table(new QTableWidget)
{
    setObjectName(QStringLiteral("runsComparison"));
    m_runs->setObjectName(QStringLiteral("compareRunList"));
    m_runs->setToolTip(tr("Tick the runs to compare"));
    m_chart->setObjectName(QStringLiteral("compareChart"));
    m_chart->setTitle(tr("Best so far, as speedup over each run's own starting code"));
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chartView = new QChartView(m_chart);
    m_chartView->setObjectName(QStringLiteral("compareChartView"));
    m_chartView->setRenderHint(QPainter::Antialiasing);
    m_chartView->setMinimumHeight(260);
    // Qt Charts elides a title wider than the chart: the whole title stays one hover away.
    m_chartView->setToolTip(m_chart->title());
    m_table->setObjectName(QStringLiteral("compareTable"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

    auto *right = new QSplitter(Qt::Vertical);
    right->addWidget(m_chartView);
    right->addWidget(m_table);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 2);
    // The chart takes about two thirds of the height from the start (the table's size hint would otherwise
    // leave it a strip); the table scrolls.
    right->setSizes({640, 320});
    auto *split = new QSplitter(Qt::Horizontal);
    auto *left = new QWidget;
    auto *leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(new QLabel(tr("Runs:")));
    leftLayout->addWidget(m_runs, 1);
    split->addWidget(left);
    split->addWidget(right);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 4);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(split);

    connect(m_runs, &QListWidget::itemChanged, this, [this] {
        if (!m_filling)
            rebuild();
    });
}

void RunsComparisonView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && m_chart)
        rebuild(); // a theme switch repaints the chart in the new palette, no restart
}

void RunsComparisonView::setStore(RunStore *store)
{
    m_store = store;
    reloadRuns();
}

void RunsComparisonView::reloadRuns()
{
    const QList<qint64> ticked = comparedRuns();
    m_filling = true;
    m_runs->clear();
    m_allRuns = m_store ? m_store->runs() : QList<RunInfo>{};
    for (const RunInfo &run : std::as_const(m_allRuns)) {
        auto *item = new QListWidgetItem(tr("%1 · %2 on %3").arg(run.id).arg(run.problem, run.target), m_runs);
        item->setData(Qt::UserRole, run.id);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(ticked.contains(run.id) ? Qt::Checked : Qt::Unchecked);
        item->setToolTip(run.label.isEmpty() ? run.agent : run.label);
    }
    m_filling = false;
    rebuild();
}

void RunsComparisonView::setComparedRuns(const QList<qint64> &runIds)
{
    m_filling = true;
    for (int row = 0; row < m_runs->count(); ++row) {
        QListWidgetItem *item = m_runs->item(row);
        item->setCheckState(runIds.contains(item->data(Qt::UserRole).toLongLong()) ? Qt::Checked : Qt::Unchecked);
    }
    m_filling = false;
    rebuild();
}

QList<qint64> RunsComparisonView::comparedRuns() const
{
    QList<qint64> out;
    for (int row = 0; row < m_runs->count(); ++row)
        if (m_runs->item(row)->checkState() == Qt::Checked)
            out << m_runs->item(row)->data(Qt::UserRole).toLongLong();
    return out;
}

QList<QPointF> RunsComparisonView::bestSoFarCurve(const QList<Candidate> &candidates, double baselineScore)
{
    double baseline = baselineScore;
    int last = 0;
    std::map<int, double> bestOf; // iteration -> lowest correct score in it
    for (const Candidate &c : candidates) {
        last = std::max(last, c.iteration);
        if (c.origin == CandidateOrigin::Root && baseline <= 0 && c.hasScore())
            baseline = c.score;
        if (c.status != CandidateStatus::Correct || !c.hasScore() || c.score <= 0)
            continue;
        auto it = bestOf.find(c.iteration);
        if (it == bestOf.end() || c.score < it->second)
            bestOf[c.iteration] = c.score;
    }
    if (baseline <= 0)
        return {};
    QList<QPointF> out;
    double best = baseline;
    for (int iteration = 0; iteration <= last; ++iteration) {
        if (const auto it = bestOf.find(iteration); it != bestOf.end())
            best = std::min(best, it->second);
        out << QPointF(iteration, baseline / best);
    }
    return out;
}

void RunsComparisonView::rebuild()
{
    m_chart->removeAllSeries();
    for (QAbstractAxis *axis : m_chart->axes())
        m_chart->removeAxis(axis);
    // The chart follows the palette (light or dark), set before the series so they take the theme's colours.
    m_chart->setTheme(StatusPalette::isDark(palette()) ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    const QList<qint64> ids = comparedRuns();
    QList<RunInfo> runs;
    for (const RunInfo &run : std::as_const(m_allRuns))
        if (ids.contains(run.id))
            runs << run;

    auto *x = new QValueAxis;
    x->setTitleText(tr("iteration"));
    x->setLabelFormat(QStringLiteral("%d"));
    auto *y = new QValueAxis;
    y->setTitleText(tr("speedup (×)"));
    m_chart->addAxis(x, Qt::AlignBottom);
    m_chart->addAxis(y, Qt::AlignLeft);
    double maxX = 1;
    double maxY = 1;
    QList<QStringList> columns;
    for (const RunInfo &run : std::as_const(runs)) {
        const QList<QPointF> curve = m_store ? bestSoFarCurve(m_store->candidates(run.id), run.baselineScore)
                                             : QList<QPointF>{};
        auto *series = new QLineSeries;
        series->setName(tr("run %1 · %2/%3").arg(run.id).arg(run.target, run.problem));
        series->setPointsVisible(true);
        series->replace(curve);
        m_chart->addSeries(series);
        series->attachAxis(x);
        series->attachAxis(y);
        for (const QPointF &p : curve) {
            maxX = std::max(maxX, p.x());
            maxY = std::max(maxY, p.y());
        }

        QStringList errors;
        const std::optional<RunConfig> config = RunConfig::fromYaml(run.configYaml.toUtf8(),
                                                                    QStringLiteral("run %1").arg(run.id), &errors);
        const QString none = QStringLiteral("—");
        QStringList column;
        column << run.target << run.problem << run.agent << toString(run.state);
        if (config) {
            column << config->planModels.join(QStringLiteral(", "))
                   << config->effectiveCodeModels().join(QStringLiteral(", "))
                   << QString::number(config->search.iterations) << QString::number(config->search.beamWidth)
                   << QString::number(config->search.plansPerParent) << QString::number(config->search.codePerPlan)
                   << QString::number(config->search.menuDropout) << QString::number(config->search.fixAttempts);
        } else {
            for (int i = 0; i < 8; ++i)
                column << none;
        }
        column << QString::number(run.iteration)
               << (run.baselineScore > 0 ? ValueFormat::score(run.baselineScore, run.metric, run.metricUnit) : none)
               << (run.bestScore > 0 ? ValueFormat::score(run.bestScore, run.metric, run.metricUnit) : none)
               << ValueFormat::speedup(run.speedup()) << ValueFormat::dollars(run.usd) << QString::number(run.llmCalls);
        columns << column;
    }
    x->setRange(0, maxX);
    x->setTickCount(std::min(int(maxX) + 1, 11));
    y->setRange(0, maxY * 1.1);
    y->applyNiceNumbers(); // 0, 10, 20, ... rather than fifths of the largest speedup
    y->setLabelFormat(y->max() >= 10 ? QStringLiteral("%.0f") : QStringLiteral("%.1f"));

    const QStringList rowNames{tr("Target"),          tr("Problem"),      tr("Agent"),
                               tr("State"),           tr("Plan models"),  tr("Code models"),
                               tr("Iterations"),      tr("Beam width"),   tr("Plans per parent"),
                               tr("Code per plan"),   tr("Menu dropout"), tr("Fix attempts"),
                               tr("Iterations done"), tr("Baseline"),     tr("Best"),
                               tr("Speedup"),         tr("Cost"),         tr("LLM calls")};
    m_table->clear();
    m_table->setRowCount(int(rowNames.size()));
    m_table->setColumnCount(int(columns.size()));
    m_table->setVerticalHeaderLabels(rowNames);
    QStringList headers;
    for (const RunInfo &run : std::as_const(runs))
        headers << tr("Run %1").arg(run.id);
    m_table->setHorizontalHeaderLabels(headers);
    for (int c = 0; c < columns.size(); ++c)
        for (int r = 0; r < columns.at(c).size(); ++r)
            m_table->setItem(r, c, new QTableWidgetItem(columns.at(c).at(r)));
    Q_EMIT updated();
}

} // namespace autocomp
