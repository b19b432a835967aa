#include "panels/study_view.h"

#include "charts/image_export.h"
#include "common/status_palette.h"
#include "store/run_store.h"
#include "common/value_format.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace autocomp {

namespace {

constexpr int RunIdRole = Qt::UserRole + 1;

QString stateWord(const StudyRunResult &r)
{
    return r.runId ? QStringLiteral("#%1 %2").arg(r.runId).arg(r.state) : r.state;
}

// Axis range with a margin, never empty.
void fitAxis(QValueAxis *axis, double low, double high)
{
    if (!(high > low)) {
        const double pad = std::abs(low) > 0 ? std::abs(low) * 0.1 : 1;
        low -= pad;
        high += pad;
    }
    const double margin = (high - low) * 0.08;
    axis->setRange(low - margin, high + margin);
    axis->applyNiceNumbers(); // round ticks (0.5, 0.6, ...) rather than fractions of the data's range
}

} // namespace

StudyView::StudyView(QWidget *parent)
    : QWidget(parent)
    , m_studies(new QComboBox)
    , m_problems(new QComboBox)
    , m_summary(new QLabel)
    , m_grid(new QTableWidget)
    , m_curves(new QChart)
    , m_scatter(new QChart)
    , m_follow(new QTimer(this))
{
    setObjectName(QStringLiteral("studyView"));
    m_studies->setObjectName(QStringLiteral("studyChoice"));
    m_studies->setToolTip(tr("Studies with runs in this store (autocomp study labels each run with its study)"));
    m_problems->setObjectName(QStringLiteral("studyProblem"));
    m_problems->setToolTip(tr("The charts show one problem: latencies of different problems do not compare"));
    m_summary->setObjectName(QStringLiteral("studySummary"));
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Study:")));
    bar->addWidget(m_studies);
    bar->addSpacing(12);
    bar->addWidget(new QLabel(tr("Problem:")));
    bar->addWidget(m_problems);
    bar->addSpacing(12);
    bar->addWidget(m_summary, 1);
    auto *reloadButton = new QToolButton;
    reloadButton->setText(tr("Reload"));
    reloadButton->setToolTip(tr("Read the study's runs from the store again"));
    connect(reloadButton, &QToolButton::clicked, this, &StudyView::reload);
    bar->addWidget(reloadButton);

    m_grid->setObjectName(QStringLiteral("studyGrid"));
    m_grid->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_grid->setSelectionBehavior(QAbstractItemView::SelectItems);
    m_grid->setWordWrap(false);
    m_grid->verticalHeader()->hide();
    m_grid->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_grid->setToolTip(tr("Double-click a seed's run to open it"));
    connect(m_grid, &QTableWidget::cellDoubleClicked, this, [this](int row, int column) {
        if (const QTableWidgetItem *item = m_grid->item(row, column))
            if (const qint64 id = item->data(RunIdRole).toLongLong())
                Q_EMIT runActivated(id);
    });

    const auto chartBox = [this](QChart *chart, QChartView **view, const QString &name, const QString &suggested) {
        chart->legend()->setAlignment(Qt::AlignBottom);
        *view = new QChartView(chart);
        (*view)->setObjectName(name);
        (*view)->setRenderHint(QPainter::Antialiasing);
        (*view)->setMinimumSize(280, 220);
        auto *box = new QWidget;
        auto *layout = new QVBoxLayout(box);
        layout->setContentsMargins(0, 0, 0, 0);
        layout->setSpacing(2);
        layout->addWidget(*view, 1);
        auto *exportButton = new QToolButton;
        exportButton->setObjectName(name + QStringLiteral("Export"));
        exportButton->setText(tr("Export…"));
        exportButton->setToolTip(tr("Save the chart as PNG or SVG"));
        QChartView *v = *view;
        connect(exportButton, &QToolButton::clicked, this, [this, v, suggested] {
            ImageExport::saveWithDialog(this, v->scene(), v->sceneRect(), suggested, palette().color(QPalette::Base));
        });
        auto *row = new QHBoxLayout;
        row->addStretch(1);
        row->addWidget(exportButton);
        layout->addLayout(row);
        return box;
    };
    m_curves->setObjectName(QStringLiteral("studyCurves"));
    m_scatter->setObjectName(QStringLiteral("studyScatter"));
    QWidget *curvesBox = chartBox(m_curves, &m_curvesView, QStringLiteral("studyCurvesView"),
                                  QStringLiteral("study-curves.png"));
    QWidget *scatterBox = chartBox(m_scatter, &m_scatterView, QStringLiteral("studyScatterView"),
                                   QStringLiteral("study-quality-cost.png"));

    auto *charts = new QSplitter(Qt::Horizontal);
    charts->addWidget(curvesBox);
    charts->addWidget(scatterBox);
    auto *split = new QSplitter(Qt::Vertical);
    split->addWidget(m_grid);
    split->addWidget(charts);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    split->setSizes({200, 600}); // the charts take most of the height; the grid scrolls
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(split, 1);

    connect(m_studies, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_filling)
            reload();
    });
    connect(m_problems, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_filling)
            rebuild();
    });
    // Runs under way in another process (autocomp study): follow the store's writes.
    m_follow->setInterval(1500);
    connect(m_follow, &QTimer::timeout, this, [this] {
        if (!m_store || !isVisible())
            return;
        const auto version = m_store->dataVersion();
        if (version && version != m_dataVersion) {
            m_dataVersion = version;
            reload();
        }
    });
    m_follow->start();
}

void StudyView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && m_curves)
        rebuild(); // the charts take the new palette's theme
}

void StudyView::setStore(RunStore *store)
{
    m_store = store;
    m_dataVersion = store ? store->dataVersion() : std::nullopt;
    fillStudies();
    reload();
}

void StudyView::fillStudies()
{
    const QString current = m_studies->currentText();
    m_filling = true;
    m_studies->clear();
    if (m_store)
        m_studies->addItems(StudyReport::studyNames(*m_store));
    if (const int index = m_studies->findText(current); index >= 0)
        m_studies->setCurrentIndex(index);
    m_filling = false;
}

void StudyView::setStudy(const QString &name)
{
    fillStudies();
    if (const int index = m_studies->findText(name); index >= 0 && !name.isEmpty())
        m_studies->setCurrentIndex(index);
    reload();
}

QString StudyView::study() const { return m_studies->currentText(); }

QString StudyView::problem() const { return m_problems->currentText(); }

void StudyView::setProblem(const QString &problem)
{
    if (const int index = m_problems->findText(problem); index >= 0)
        m_problems->setCurrentIndex(index);
}

void StudyView::reload()
{
    if (m_studies->count() == 0 || (m_store && m_studies->findText(study()) < 0))
        fillStudies();
    m_results = m_store && !study().isEmpty() ? StudyReport::results(*m_store, study()) : QList<StudyRunResult>{};
    m_points = StudyReport::summarize(m_results);
    const QString current = problem();
    m_filling = true;
    m_problems->clear();
    QStringList problems;
    for (const StudyRunResult &r : std::as_const(m_results))
        if (!problems.contains(r.problem))
            problems << r.problem;
    m_problems->addItems(problems);
    if (const int index = m_problems->findText(current); index >= 0)
        m_problems->setCurrentIndex(index);
    m_filling = false;
    rebuild();
}

bool StudyView::costInTokens() const { return StudyReport::costInTokens(m_results, problem()); }

double StudyView::costOf(const StudyRunResult &run) const { return costInTokens() ? double(run.tokens()) : run.usd; }

double StudyView::costOf(const StudyPointSummary &point) const
{
    return costInTokens() ? point.meanTokens : point.meanUsd;
}

qint64 StudyView::bestRunOf(const StudyPointSummary &point) const
{
    qint64 best = 0;
    double score = std::numeric_limits<double>::infinity();
    for (const StudyRunResult &r : m_results)
        if (r.problem == point.problem && r.point == point.point && r.runId
            && (best == 0 || (!std::isnan(r.bestScore) && r.bestScore < score))) {
            best = r.runId;
            if (!std::isnan(r.bestScore))
                score = r.bestScore;
        }
    return best;
}

void StudyView::rebuild()
{
    rebuildGrid();
    rebuildCurves();
    rebuildScatter();
    int ended = 0;
    double usd = 0;
    qint64 tokens = 0;
    for (const StudyRunResult &r : std::as_const(m_results)) {
        ended += r.ended() ? 1 : 0;
        usd += r.usd;
        tokens += r.tokens();
    }
    m_summary->setText(m_results.isEmpty() ? tr("No study in this store: `autocomp study STUDY.yaml` makes one")
                                           : tr("%1 of %2 runs ended · %3 · %4 tokens")
                                                 .arg(ended)
                                                 .arg(m_results.size())
                                                 .arg(ValueFormat::dollars(usd))
                                                 .arg(tokens));
    Q_EMIT updated();
}

void StudyView::rebuildGrid()
{
    QList<quint64> seeds;
    for (const StudyRunResult &r : std::as_const(m_results))
        if (!seeds.contains(r.seed))
            seeds << r.seed;
    std::sort(seeds.begin(), seeds.end());
    QStringList headers{tr("Problem"), tr("Point")};
    for (quint64 seed : std::as_const(seeds))
        headers << tr("Seed %1").arg(seed);
    headers << tr("Best (mean)") << tr("Best per iteration (mean)") << tr("Tokens") << tr("Cost") << tr("LLM calls")
            << tr("Wall (mean)") << tr("Correct") << tr("Strategies in a beam") << tr("Pareto front");
    m_grid->clear();
    m_grid->setColumnCount(int(headers.size()));
    m_grid->setHorizontalHeaderLabels(headers);
    m_grid->setRowCount(int(m_points.size()));
    const QString none = QStringLiteral("—");
    for (int row = 0; row < m_points.size(); ++row) {
        const StudyPointSummary &p = m_points.at(row);
        int column = 0;
        m_grid->setItem(row, column++, new QTableWidgetItem(p.problem));
        m_grid->setItem(row, column++, new QTableWidgetItem(p.point.name()));
        for (quint64 seed : std::as_const(seeds)) {
            auto *item = new QTableWidgetItem(none);
            for (const StudyRunResult &r : std::as_const(m_results))
                if (r.problem == p.problem && r.point == p.point && r.seed == seed) {
                    item->setText(stateWord(r));
                    item->setData(RunIdRole, r.runId);
                    item->setToolTip(r.runId ? tr("Run %1: double-click to open it").arg(r.runId)
                                             : tr("Not started yet"));
                    if (r.state == QLatin1String("finished"))
                        item->setForeground(StatusPalette::foreground(CandidateStatus::Correct, palette()));
                    else if (r.state == QLatin1String("failed") || r.state == QLatin1String("interrupted"))
                        item->setForeground(StatusPalette::foreground(CandidateStatus::Failed, palette()));
                }
            m_grid->setItem(row, column++, item);
        }
        QStringList perIteration;
        for (double v : p.meanBestPerIteration)
            perIteration << (std::isnan(v) ? none : QString::number(v, 'g', 4));
        m_grid->setItem(row, column++,
                        new QTableWidgetItem(std::isnan(p.meanBest) ? none : QString::number(p.meanBest, 'g', 5)));
        m_grid->setItem(row, column++, new QTableWidgetItem(perIteration.join(QStringLiteral(" → "))));
        m_grid->setItem(row, column++, new QTableWidgetItem(QString::number(p.tokens)));
        m_grid->setItem(row, column++, new QTableWidgetItem(ValueFormat::dollars(p.usd)));
        m_grid->setItem(row, column++, new QTableWidgetItem(QString::number(p.llmCalls)));
        m_grid->setItem(row, column++, new QTableWidgetItem(tr("%1 s").arg(p.meanWallSeconds, 0, 'f', 1)));
        m_grid->setItem(row, column++,
                        new QTableWidgetItem(std::isnan(p.correctRate)
                                                 ? none
                                                 : QStringLiteral("%1 %").arg(qRound(p.correctRate * 100))));
        m_grid->setItem(row, column++, new QTableWidgetItem(QString::number(p.meanBeamStrategies, 'f', 1)));
        m_grid->setItem(row, column++, new QTableWidgetItem(p.onFront ? tr("on the front") : QString()));
    }
}

void StudyView::rebuildCurves()
{
    m_curves->removeAllSeries();
    for (QAbstractAxis *axis : m_curves->axes())
        m_curves->removeAxis(axis);
    m_curves->setTheme(StatusPalette::isDark(palette()) ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    m_curves->setTitle(tr("Best score by iteration, mean over seeds (lower is better)"));
    double low = std::numeric_limits<double>::infinity();
    double high = -low;
    int maxX = 1;
    QList<QLineSeries *> curves;
    for (const StudyPointSummary &p : std::as_const(m_points)) {
        if (p.problem != problem())
            continue;
        auto *series = new QLineSeries;
        series->setName(p.point.name());
        series->setPointsVisible(true);
        for (int i = 0; i < p.meanBestPerIteration.size(); ++i) {
            const double v = p.meanBestPerIteration.at(i);
            if (std::isnan(v))
                continue;
            series->append(i, v);
            low = std::min(low, v);
            high = std::max(high, v);
            maxX = std::max(maxX, i);
        }
        m_curves->addSeries(series);
        curves << series;
    }
    auto *x = new QValueAxis;
    x->setTitleText(tr("iteration"));
    x->setLabelFormat(QStringLiteral("%d"));
    x->setRange(0, maxX);
    x->setTickCount(std::min(maxX + 1, 11));
    m_curves->addAxis(x, Qt::AlignBottom);
    // The starting code is often many times slower than what the search finds: a log scale then keeps the
    // differences between points visible.
    QAbstractAxis *y = nullptr;
    if (std::isfinite(low) && low > 0 && high / low > 20) {
        auto *log = new QLogValueAxis;
        log->setBase(10);
        log->setLabelFormat(QStringLiteral("%g"));
        log->setRange(low / 1.5, high * 1.5);
        log->setTitleText(tr("best score (log scale)"));
        y = log;
    } else {
        auto *linear = new QValueAxis;
        linear->setTitleText(tr("best score"));
        if (std::isfinite(low))
            fitAxis(linear, low, high);
        y = linear;
    }
    m_curves->addAxis(y, Qt::AlignLeft);
    for (QLineSeries *series : std::as_const(curves)) {
        series->attachAxis(x);
        series->attachAxis(y);
    }
}

void StudyView::rebuildScatter()
{
    m_scatter->removeAllSeries();
    for (QAbstractAxis *axis : m_scatter->axes())
        m_scatter->removeAxis(axis);
    m_scatter->setTheme(StatusPalette::isDark(palette()) ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    const bool tokens = costInTokens();
    m_scatter->setTitle(tr("Quality against cost: runs (small), point means (large), Pareto front"));
    auto *x = new QValueAxis;
    x->setTitleText(tokens ? tr("tokens per run (every run cost $0)") : tr("dollars per run"));
    x->setLabelFormat(tokens ? QStringLiteral("%.0f") : QStringLiteral("%.3f"));
    auto *y = new QValueAxis;
    y->setTitleText(tr("best score (lower is better)"));
    m_scatter->addAxis(x, Qt::AlignBottom);
    m_scatter->addAxis(y, Qt::AlignLeft);
    double xLow = std::numeric_limits<double>::infinity(), xHigh = -xLow, yLow = xLow, yHigh = -xLow;
    const auto extend = [&](double cx, double cy) {
        xLow = std::min(xLow, cx);
        xHigh = std::max(xHigh, cx);
        yLow = std::min(yLow, cy);
        yHigh = std::max(yHigh, cy);
    };
    auto *means = new QScatterSeries;
    means->setName(tr("point means"));
    means->setMarkerSize(15);
    means->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    QList<QPointF> front;
    for (const StudyPointSummary &p : std::as_const(m_points)) {
        if (p.problem != problem())
            continue;
        auto *runs = new QScatterSeries;
        runs->setName(p.point.name());
        runs->setMarkerSize(8);
        for (const StudyRunResult &r : std::as_const(m_results))
            if (r.problem == p.problem && r.point == p.point && r.runId && !std::isnan(r.bestScore)) {
                runs->append(costOf(r), r.bestScore);
                extend(costOf(r), r.bestScore);
            }
        m_scatter->addSeries(runs);
        runs->attachAxis(x);
        runs->attachAxis(y);
        connect(runs, &QScatterSeries::clicked, this, [this](const QPointF &point) {
            if (const qint64 id = runAt(point))
                Q_EMIT runActivated(id);
        });
        if (!std::isnan(p.meanBest) && p.runs > 0) {
            means->append(costOf(p), p.meanBest);
            extend(costOf(p), p.meanBest);
            if (p.onFront)
                front << QPointF(costOf(p), p.meanBest);
        }
    }
    m_scatter->addSeries(means);
    means->attachAxis(x);
    means->attachAxis(y);
    connect(means, &QScatterSeries::clicked, this, [this](const QPointF &point) {
        if (const qint64 id = runAt(point))
            Q_EMIT runActivated(id);
    });
    std::sort(front.begin(), front.end(), [](const QPointF &a, const QPointF &b) { return a.x() < b.x(); });
    auto *frontLine = new QLineSeries;
    frontLine->setName(tr("Pareto front"));
    frontLine->replace(front);
    QPen pen = frontLine->pen();
    pen.setWidth(2);
    pen.setStyle(Qt::DashLine);
    pen.setColor(palette().color(QPalette::WindowText)); // seen on the light and the dark theme
    frontLine->setPen(pen);
    m_scatter->addSeries(frontLine);
    frontLine->attachAxis(x);
    frontLine->attachAxis(y);
    if (std::isfinite(xLow)) {
        fitAxis(x, xLow, xHigh);
        fitAxis(y, yLow, yHigh);
    }
}

qint64 StudyView::runAt(const QPointF &value) const
{
    // Nearest in the axes' own scale (tokens and latencies differ by orders of magnitude).
    const auto *x = m_scatter->axes(Qt::Horizontal).isEmpty()
        ? nullptr
        : qobject_cast<QValueAxis *>(m_scatter->axes(Qt::Horizontal).first());
    const auto *y = m_scatter->axes(Qt::Vertical).isEmpty()
        ? nullptr
        : qobject_cast<QValueAxis *>(m_scatter->axes(Qt::Vertical).first());
    const double sx = x && x->max() > x->min() ? x->max() - x->min() : 1;
    const double sy = y && y->max() > y->min() ? y->max() - y->min() : 1;
    const auto distance = [&](double cx, double cy) {
        return std::hypot((cx - value.x()) / sx, (cy - value.y()) / sy);
    };
    qint64 best = 0;
    double nearest = 0.05; // within 5 % of the axes
    for (const StudyRunResult &r : m_results)
        if (r.problem == problem() && r.runId && !std::isnan(r.bestScore))
            if (const double d = distance(costOf(r), r.bestScore); d < nearest) {
                nearest = d;
                best = r.runId;
            }
    for (const StudyPointSummary &p : m_points)
        if (p.problem == problem() && !std::isnan(p.meanBest) && p.runs > 0)
            if (const double d = distance(costOf(p), p.meanBest); d < nearest) {
                nearest = d;
                best = bestRunOf(p);
            }
    return best;
}

QChart *StudyView::chart(Chart which) const { return which == Chart::Curves ? m_curves : m_scatter; }

QChartView *StudyView::chartView(Chart which) const { return which == Chart::Curves ? m_curvesView : m_scatterView; }

bool StudyView::exportChart(Chart which, const QString &path, QString *error) const
{
    QChartView *view = chartView(which);
    return ImageExport::save(view->scene(), view->sceneRect(), path, palette().color(QPalette::Base), error);
}

} // namespace autocomp
