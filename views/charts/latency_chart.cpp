#include "charts/latency_chart.h"

#include "charts/chart_point_layer.h"

#include "charts/image_export.h"

#include "common/status_palette.h"
#include "common/value_format.h"
#include "live/shown_run.h"

#include <QCheckBox>
#include <QToolButton>
#include <QCursor>
#include <QHBoxLayout>
#include <QImage>
#include <QJsonObject>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <map>

namespace autocomp {

namespace {

constexpr int s_updateDelayMs = 50;
constexpr int s_bigRunUpdateDelayMs = 250;
constexpr qsizetype s_bigRunPoints = 2000;

QImage dotMarker(const QColor &fill, const QColor &border, int size)
{
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(border, 1));
    painter.setBrush(fill);
    painter.drawEllipse(QRectF(0.5, 0.5, size - 1, size - 1));
    return image;
}

QImage crossMarker(const QColor &color, int size)
{
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(color, 2.2, Qt::SolidLine, Qt::RoundCap));
    painter.drawLine(QPointF(2.5, 2.5), QPointF(size - 2.5, size - 2.5));
    painter.drawLine(QPointF(2.5, size - 2.5), QPointF(size - 2.5, 2.5));
    return image;
}

void hideFromLegend(QChart *chart, QAbstractSeries *series)
{
    for (QLegendMarker *marker : chart->legend()->markers(series))
        marker->setVisible(false);
}

} // namespace

double LatencyChart::vendorScoreOf(const Candidate &candidate, QString *name)
{
    const QJsonValue metric = candidate.metrics.value(QStringLiteral("vendor_latency_ms"));
    double value = metric.isObject() ? metric.toObject().value(QStringLiteral("median")).toDouble() : metric.toDouble();
    // The CPU evaluator names the library only in its feedback: "OpenBLAS sgemm: 3.1 ms at M=512,... on one core".
    static const QRegularExpression s_line(QStringLiteral("^([^:]{2,60}): ([0-9.]+(?:[eE][-+]?[0-9]+)?) ms at "));
    for (const QString &line : candidate.feedback) {
        const QRegularExpressionMatch match = s_line.match(line);
        if (!match.hasMatch())
            continue;
        if (name)
            *name = match.captured(1);
        if (value <= 0)
            value = match.captured(2).toDouble();
        break;
    }
    if (value > 0 && name && name->isEmpty())
        *name = tr("vendor library");
    return value > 0 ? value : 0;
}

LatencyChart::LatencyChart(QWidget *parent)
    : QWidget(parent)
    , m_view(new QChartView)
    , m_chart(new QChart)
    , m_logToggle(new QCheckBox(tr("Log scale")))
    , m_caption(new QLabel)
    , m_correct(new QScatterSeries)
    , m_failed(new QScatterSeries)
    , m_selectedMarker(new QScatterSeries)
    , m_best(new QLineSeries)
    , m_baseline(new QLineSeries)
    , m_vendor(new QLineSeries)
    , m_speedupAnchor(new QLineSeries)
    , m_logAnchor(new QLineSeries)
    , m_xAxis(new QValueAxis(this))
    , m_linearAxis(new QValueAxis(this))
    , m_logAxis(new QLogValueAxis(this))
    , m_failedAxis(new QValueAxis(this))
    , m_speedupLinearAxis(new QCategoryAxis(this))
    , m_logLabels(new QCategoryAxis(this))
    , m_speedupLogAxis(new QCategoryAxis(this))
    , m_updateTimer(new QTimer(this))
{
    setObjectName(QStringLiteral("latencyChart"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 0);
    m_caption->setObjectName(QStringLiteral("latencyCaption"));
    m_caption->setTextFormat(Qt::PlainText);
    m_logToggle->setObjectName(QStringLiteral("latencyLogScale"));
    m_logToggle->setToolTip(tr("Logarithmic score axis: equal steps are equal speedups"));
    bar->addWidget(m_caption, 1);
    bar->addWidget(m_logToggle);
    auto *exportButton = new QToolButton;
    exportButton->setObjectName(QStringLiteral("chartExport"));
    exportButton->setText(tr("Export…"));
    exportButton->setToolTip(tr("Save the chart as PNG or SVG"));
    connect(exportButton, &QToolButton::clicked, this, [this] {
        ImageExport::saveWithDialog(this, m_view->scene(), m_view->sceneRect(), QStringLiteral("latency-chart.png"),
                                    palette().color(QPalette::Base));
    });
    bar->addWidget(exportButton);
    layout->addLayout(bar);

    m_view->setObjectName(QStringLiteral("latencyChartView"));
    m_view->setChart(m_chart);
    m_view->setRenderHint(QPainter::Antialiasing);
    layout->addWidget(m_view, 1);

    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));

    m_correct->setName(tr("Correct"));
    m_correct->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    m_correct->setMarkerSize(9);
    m_failed->setName(tr("Failed / incorrect"));
    m_failed->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    m_failed->setMarkerSize(11);
    m_selectedMarker->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    m_selectedMarker->setMarkerSize(19);
    m_best->setName(tr("Best so far"));
    m_baseline->setName(tr("Baseline (root)"));
    m_vendor->setName(tr("Vendor library"));

    for (QAbstractSeries *series : std::initializer_list<QAbstractSeries *>{
             m_baseline, m_vendor, m_best, m_failed, m_correct, m_selectedMarker, m_speedupAnchor, m_logAnchor})
        m_chart->addSeries(series);
    hideFromLegend(m_chart, m_selectedMarker);
    hideFromLegend(m_chart, m_speedupAnchor);
    hideFromLegend(m_chart, m_logAnchor);

    m_xAxis->setTitleText(tr("Iteration"));
    m_xAxis->setLabelFormat(QStringLiteral("%d"));
    m_xAxis->setTickType(QValueAxis::TicksDynamic);
    m_xAxis->setTickAnchor(0);
    m_xAxis->setTickInterval(1);
    m_xAxis->setMinorTickCount(0);
    m_chart->addAxis(m_xAxis, Qt::AlignBottom);
    for (QAbstractSeries *series : m_chart->series())
        series->attachAxis(m_xAxis);
    m_failedAxis->setRange(0, 1);
    m_chart->addAxis(m_failedAxis, Qt::AlignLeft);
    m_failedAxis->setVisible(false);
    m_failed->attachAxis(m_failedAxis);
    m_logAxis->setBase(10);
    m_logAxis->setVisible(false); // maps the points; m_logLabels shows the scale
    m_logLabels->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_speedupLogAxis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_speedupLogAxis->setReverse(true);
    m_speedupLinearAxis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_speedupLogAxis->setTitleText(tr("Speedup over the root (×)"));
    m_speedupLinearAxis->setTitleText(tr("Speedup over the root"));
    m_speedupLinearAxis->setGridLineVisible(false);
    m_speedupLogAxis->setGridLineVisible(false);

    m_updateTimer->setSingleShot(true);
    m_updateTimer->setInterval(s_updateDelayMs);
    connect(m_updateTimer, &QTimer::timeout, this, &LatencyChart::applyQueued);
    connect(m_logToggle, &QCheckBox::toggled, this, &LatencyChart::setLogScale);
    connect(m_logToggle, &QCheckBox::clicked, this, [this] { m_userChoseScale = true; });
    m_points = new ChartPointLayer(m_chart);
    applyPalette();
    m_points->onHovered = [this](int set, qsizetype index, bool state) {
        onHovered(set == 0 ? m_correct : m_failed, (set == 0 ? m_correctPoints : m_failedPoints).at(index), state);
    };
    m_points->onClicked = [this](int set, qsizetype index) {
        onClicked(set == 0 ? m_correct : m_failed, (set == 0 ? m_correctPoints : m_failedPoints).at(index));
    };
    for (QValueAxis *axis : {m_xAxis, m_linearAxis, m_failedAxis})
        connect(axis, &QValueAxis::rangeChanged, this, [this] { m_points->invalidate(); });
    connect(m_logAxis, &QLogValueAxis::rangeChanged, this, [this] { m_points->invalidate(); });
    for (QXYSeries *series : {static_cast<QXYSeries *>(m_correct), static_cast<QXYSeries *>(m_failed)}) {
        connect(series, &QXYSeries::hovered, this,
                [this, series](const QPointF &point, bool state) { onHovered(series, point, state); });
        connect(series, &QXYSeries::clicked, this, [this, series](const QPointF &point) { onClicked(series, point); });
    }
    rebuild();
}

LatencyChart::~LatencyChart() = default;

void LatencyChart::applyPalette()
{
    // The theme first (it recolours every series), then our own colours over it.
    const bool dark = StatusPalette::isDark(palette());
    m_chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    m_correct->setColor(dark ? QColor(0x5e, 0xa8, 0xff) : QColor(0x1f, 0x6f, 0xd0));
    m_correct->setBorderColor(dark ? QColor(0x20, 0x30, 0x40) : QColor(Qt::white));
    const QColor failColor = dark ? QColor(0xff, 0x80, 0x80) : QColor(0xc6, 0x28, 0x28);
    m_failed->setBrush(QBrush(crossMarker(failColor, 11)));
    m_failed->setPen(QColor(Qt::transparent));
    // The legend's markers; the points are painted by m_points.
    m_correct->setLightMarker(dotMarker(m_correct->color(), m_correct->borderColor(), 9));
    m_failed->setLightMarker(crossMarker(failColor, 11));
    m_selectedMarker->setBrush(Qt::NoBrush);
    m_selectedMarker->setPen(QPen(QColor(0xff, 0x8f, 0x00), 2.5));
    m_best->setPen(QPen(dark ? QColor(0x6c, 0xd6, 0x7a) : QColor(0x1b, 0x7a, 0x2e), 2.5));
    m_baseline->setPen(QPen(dark ? QColor(0xb0, 0xb0, 0xb0) : QColor(0x60, 0x60, 0x60), 1.5, Qt::DashLine));
    m_vendor->setPen(QPen(dark ? QColor(0xce, 0x93, 0xd8) : QColor(0x9c, 0x27, 0xb0), 1.5, Qt::DashDotLine));
    m_speedupAnchor->setPen(Qt::NoPen);
    m_logAnchor->setPen(Qt::NoPen);
    m_points->setPointSets({{&m_correctPoints, m_correct, dotMarker(m_correct->color(), m_correct->borderColor(), 9)},
                            {&m_failedPoints, m_failed, crossMarker(failColor, 11)}});
    m_points->invalidate();
}

void LatencyChart::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && m_points)
        applyPalette(); // a theme switch repaints the chart, no restart
}

void LatencyChart::clear()
{
    m_updateTimer->stop();
    m_entries.clear();
    m_entryOfId.clear();
    m_queued.clear();
    m_explicitBaseline = 0;
    m_rootScore = 0;
    m_vendorScore = 0;
    m_vendorName.clear();
    m_selected = 0;
    rebuild();
}

void LatencyChart::setShownRun(const ShownRun *run)
{
    connect(run, &ShownRun::shown, this, [this, run](const QList<Candidate> &candidates) {
        if (run->id() == 0)
            clear();
        else
            setCandidates(candidates, run->run().metric, run->run().baselineScore, run->run().metricUnit);
    });
    connect(run, &ShownRun::candidatesChanged, this,
            [this](const QList<Candidate> &candidates) { upsertCandidates(candidates); });
    connect(run, &ShownRun::candidateSelected, this, [this](const Candidate &c) { selectCandidate(c.id); });
}

void LatencyChart::setCandidates(const QList<Candidate> &candidates, const QString &metric, double baselineScore,
                                 const QString &unit)
{
    clear();
    m_metric = metric;
    m_metricUnit = unit;
    m_explicitBaseline = baselineScore;
    m_entries.reserve(candidates.size());
    double low = 0;
    double high = 0;
    for (const Candidate &candidate : candidates) {
        store(candidate);
        if (candidate.status == CandidateStatus::Correct && candidate.hasScore() && candidate.score > 0) {
            low = low == 0 ? candidate.score : std::min(low, candidate.score);
            high = std::max(high, candidate.score);
        }
    }
    // Until the user picks a scale: a run that gained more than 10x reads better on a log axis.
    if (!m_userChoseScale) {
        m_log = low > 0 && high / low > 10;
        const QSignalBlocker blocker(m_logToggle);
        m_logToggle->setChecked(m_log);
    }
    const QString shownUnit = ValueFormat::unitOfMetric(m_metric, m_metricUnit);
    const QString title = m_metric.isEmpty() ? tr("Score") : m_metric;
    m_linearAxis->setTitleText(shownUnit.isEmpty() ? title : tr("%1 (%2, lower is better)").arg(title, shownUnit));
    m_logLabels->setTitleText(m_linearAxis->titleText());
    rebuild();
}

void LatencyChart::upsertCandidate(const Candidate &candidate)
{
    store(candidate);
    scheduleUpdate();
}

void LatencyChart::upsertCandidates(const QList<Candidate> &candidates)
{
    for (const Candidate &candidate : candidates)
        store(candidate);
    scheduleUpdate();
}

void LatencyChart::store(const Candidate &candidate)
{
    auto it = m_entryOfId.find(candidate.id);
    if (it == m_entryOfId.end()) {
        it = m_entryOfId.insert(candidate.id, int(m_entries.size()));
        m_entries.append(Entry{});
    }
    Entry &entry = m_entries[*it];
    const Entry before = entry;
    entry.id = candidate.id;
    entry.iteration = std::max(0, candidate.iteration);
    entry.status = candidate.status;
    entry.word = statusWord(candidate);
    entry.score = candidate.hasScore() ? candidate.score : 0;
    entry.menuItem = candidate.menuItem;
    entry.root = candidate.origin == CandidateOrigin::Root || (candidate.parentId == 0 && candidate.iteration == 0);
    if (entry.root && entry.score > 0 && m_rootScore <= 0)
        m_rootScore = entry.score;
    if (m_vendorScore <= 0) {
        QString name;
        const double vendor = vendorScoreOf(candidate, &name);
        if (vendor > 0) {
            m_vendorScore = vendor;
            m_vendorName = name;
        }
    }
    if (before.plot != Plot::None) {
        // Plotted points are final; one that changes anyway (a re-evaluation) is rare enough to replot for.
        if (entry.status != before.status || entry.score != before.score || entry.iteration != before.iteration)
            m_needsRebuild = true;
    } else if (isFinal(entry.status) && !entry.queued) {
        entry.queued = true;
        m_queued.append(*it);
    }
}

void LatencyChart::scheduleUpdate()
{
    // A hidden chart only collects: plotting markers nobody sees is wasted. It catches up when shown.
    if (isVisible() && !m_updateTimer->isActive())
        m_updateTimer->start();
}

void LatencyChart::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    applyQueued();
}

void LatencyChart::flushPendingUpdates()
{
    m_updateTimer->stop();
    applyQueued();
}

int LatencyChart::pointCount() const { return int(m_correctPoints.size() + m_failedPoints.size()); }

namespace {

// Points of one iteration spread across its column so that they do not hide each other. The offset comes from
// the id alone (golden-ratio steps spread consecutive ids evenly), so a point never moves once plotted.
double jitterOf(qint64 id)
{
    constexpr double s_goldenRatio = 0.6180339887498949;
    const double fraction = std::fmod(double(id) * s_goldenRatio, 1.0);
    return -0.3 + 0.6 * fraction;
}

// Failed and incorrect candidates sit along the bottom, on a hidden 0..1 axis of their own.
constexpr double s_failedY = 0.03;

} // namespace

void LatencyChart::plot(Entry &entry)
{
    const double x = entry.iteration + (entry.root ? 0.0 : jitterOf(entry.id));
    if (entry.status == CandidateStatus::Correct && entry.score > 0) {
        entry.plot = Plot::Correct;
        entry.pointIndex = m_correctPoints.size();
        m_correctPoints.append(QPointF(x, entry.score));
        m_correctIds.append(entry.id);
        extendRange(entry.score);
        double &best = m_iterationBest[entry.iteration];
        best = best == 0 ? entry.score : std::min(best, entry.score);
    } else {
        entry.plot = Plot::Failed;
        entry.pointIndex = m_failedPoints.size();
        m_failedPoints.append(QPointF(x, s_failedY));
        m_failedIds.append(entry.id);
    }
    m_lastIteration = std::max(m_lastIteration, entry.iteration);
}

void LatencyChart::extendRange(double score)
{
    if (score <= 0)
        return;
    m_low = m_low == 0 ? score : std::min(m_low, score);
    m_high = std::max(m_high, score);
}

void LatencyChart::applyQueued()
{
    // On big runs the lines are drawn without antialiasing and updates are gathered for longer, so streaming
    // results never holds the GUI thread for long (the points are drawn once each, by m_points).
    const qsizetype points = m_correctPoints.size() + m_failedPoints.size();
    const bool big = points >= s_bigRunPoints;
    if (m_view->renderHints().testFlag(QPainter::Antialiasing) == big)
        m_view->setRenderHint(QPainter::Antialiasing, !big);
    m_updateTimer->setInterval(big ? s_bigRunUpdateDelayMs : s_updateDelayMs);
    if (m_needsRebuild) {
        rebuild();
        return;
    }
    if (m_queued.isEmpty())
        return;
    const qsizetype correctBefore = m_correctPoints.size();
    const qsizetype failedBefore = m_failedPoints.size();
    for (int index : std::as_const(m_queued)) {
        Entry &entry = m_entries[index];
        entry.queued = false;
        if (entry.plot == Plot::None && isFinal(entry.status))
            plot(entry);
    }
    m_queued.clear();
    if (m_correctPoints.size() != correctBefore || m_failedPoints.size() != failedBefore)
        m_points->pointsAppended();
    updateBestLine();
    updateReferenceLines();
    updateAxes();
    updateCaption();
}

void LatencyChart::rebuild()
{
    m_updateTimer->stop();
    m_needsRebuild = false;
    m_correctIds.clear();
    m_failedIds.clear();
    m_correctPoints.clear();
    m_failedPoints.clear();
    m_iterationBest.clear();
    m_low = 0;
    m_high = 0;
    m_lastIteration = 0;
    m_queued.clear();
    for (Entry &entry : m_entries) {
        entry.plot = Plot::None;
        entry.pointIndex = -1;
        entry.queued = false;
        if (isFinal(entry.status))
            plot(entry);
    }
    if (m_points)
        m_points->invalidate();
    updateBestLine();
    updateReferenceLines();
    m_axes = {};
    updateAxes();
    updateCaption();
}

void LatencyChart::updateBestLine()
{
    // A step line over the iterations; a handful of points, redrawn from the per-iteration bests.
    QList<QPointF> best;
    m_bestSoFar = 0;
    for (const auto &[iteration, iterationBest] : m_iterationBest) {
        if (m_bestSoFar != 0 && iterationBest >= m_bestSoFar)
            continue;
        if (m_bestSoFar > 0)
            best.append(QPointF(iteration - 0.4, m_bestSoFar));
        m_bestSoFar = iterationBest;
        best.append(QPointF(iteration - 0.4, m_bestSoFar));
    }
    if (m_bestSoFar > 0)
        best.append(QPointF(m_lastIteration + 0.4, m_bestSoFar));
    if (best != m_best->points())
        m_best->replace(best);
}

void LatencyChart::updateReferenceLines()
{
    const double base = baseline();
    const auto line = [this](double y) {
        return y > 0 ? QList<QPointF>{{-0.5, y}, {m_lastIteration + 0.5, y}} : QList<QPointF>{};
    };
    if (const QList<QPointF> points = line(base); points != m_baseline->points())
        m_baseline->replace(points);
    if (const QList<QPointF> points = line(m_vendorScore); points != m_vendor->points()) {
        m_vendor->replace(points);
        m_vendor->setName(m_vendorName.isEmpty() ? tr("Vendor library") : m_vendorName);
    }
    for (QLegendMarker *marker : m_chart->legend()->markers(m_vendor))
        marker->setVisible(m_vendorScore > 0);
}

void LatencyChart::updateAxes()
{
    AxisState wanted;
    wanted.base = baseline();
    wanted.log = m_log;
    wanted.lastIteration = m_lastIteration;
    double low = m_low;
    double high = m_high;
    for (double reference : {wanted.base, m_vendorScore})
        if (reference > 0) {
            low = low == 0 ? reference : std::min(low, reference);
            high = std::max(high, reference);
        }
    if (high <= 0) {
        low = 1;
        high = 10;
    }
    wanted.low = m_log ? low / 1.6 : 0;
    wanted.high = m_log ? high * 1.6 : high * 1.1;
    if (wanted == m_axes)
        return;
    m_axes = wanted;
    applyAxes(wanted.low, wanted.high, wanted.lastIteration);
    selectCandidate(m_selected);
}

void LatencyChart::updateCaption()
{
    const double base = baseline();
    QString caption =
        tr("%1 evaluated, %2 failed").arg(m_correctIds.size() + m_failedIds.size()).arg(m_failedIds.size());
    if (base > 0 && m_bestSoFar > 0)
        caption += tr(" · root %1 · best %2 (%3)")
                       .arg(ValueFormat::score(base, m_metric, m_metricUnit),
                            ValueFormat::score(m_bestSoFar, m_metric, m_metricUnit),
                            ValueFormat::speedup(base / m_bestSoFar));
    if (m_vendorScore > 0)
        caption += tr(" · %1 %2").arg(m_vendorName, ValueFormat::score(m_vendorScore, m_metric, m_metricUnit));
    m_caption->setText(caption);
}

QList<double> LatencyChart::niceLogTicks(double low, double high)
{
    QList<double> ticks;
    if (!(low > 0) || !(high > low))
        return ticks;
    for (const QList<double> &steps : {QList<double>{1, 2, 5}, QList<double>{1, 1.5, 2, 3, 4, 5, 6, 8}}) {
        ticks.clear();
        for (int exponent = int(std::floor(std::log10(low))); exponent <= int(std::ceil(std::log10(high))); ++exponent)
            for (double step : steps)
                if (const double value = step * std::pow(10.0, exponent);
                    value >= low * (1 - 1e-9) && value <= high * (1 + 1e-9))
                    ticks.append(value);
        if (ticks.size() >= 3)
            break;
    }
    return ticks;
}

void LatencyChart::applyAxes(double low, double high, double lastIteration)
{
    const QList<QAbstractAxis *> logAxes{m_logAxis, m_logLabels};
    const QList<QAbstractAxis *> linearAxes{m_linearAxis};
    QAbstractAxis *right = m_log ? static_cast<QAbstractAxis *>(m_speedupLogAxis) : m_speedupLinearAxis;
    QAbstractAxis *oldRight = m_log ? static_cast<QAbstractAxis *>(m_speedupLinearAxis) : m_speedupLogAxis;
    const auto relabel = [](QCategoryAxis *axis, double from, double to,
                            const QList<std::pair<double, QString>> &labels) {
        for (const QString &label : axis->categoriesLabels())
            axis->remove(label);
        axis->setRange(from, to);
        axis->setStartValue(from);
        for (const auto &[value, label] : labels)
            axis->append(label, value);
    };
    // Ranges first: a log axis attached while its range holds zero would complain.
    if (m_log) {
        m_logAxis->setRange(low, high);
        QList<std::pair<double, QString>> labels;
        for (double value : niceLogTicks(low, high))
            labels.append({std::log10(value), QLocale::c().toString(value, 'g', 3)});
        relabel(m_logLabels, std::log10(low), std::log10(high), labels);
    } else {
        m_linearAxis->setRange(low, high);
        m_linearAxis->applyNiceNumbers();
        high = m_linearAxis->max();
    }
    const double base = baseline();
    if (base > 0) {
        // Log latency: the speedup is log-linear too, its ticks nice numbers of their own.
        if (m_log) {
            QList<std::pair<double, QString>> speedups;
            for (double s : niceLogTicks(base / high, base / low))
                speedups.append({std::log10(s), QLocale::c().toString(s, 'g', 3) + QStringLiteral("×")});
            relabel(m_speedupLogAxis, std::log10(base / high), std::log10(base / low), speedups);
        }
        // Linear latency: the speedups sit at base/s, labelled where there is room between them.
        static constexpr double s_speedups[] = {0.25, 0.5, 0.75, 1,  1.25, 1.5, 2,  3,   4,   5,   6,   8,   10,  12,
                                                15,   20,  25,   30, 40,   50,  75, 100, 150, 200, 300, 500, 1000};
        QList<std::pair<double, double>> marks; // (latency, speedup), latency descending
        for (double s : s_speedups) {
            const double y = base / s;
            if (y <= low || y > high)
                continue;
            if (!marks.isEmpty() && marks.last().first - y < (high - low) * 0.045)
                continue;
            marks.append({y, s});
        }
        std::reverse(marks.begin(), marks.end());
        QList<std::pair<double, QString>> labels;
        for (const auto &[y, s] : marks)
            labels.append({y, QLocale::c().toString(s, 'g', 3) + QStringLiteral("×")});
        relabel(m_speedupLinearAxis, low, high, labels);
    }
    m_xAxis->setRange(-0.5, lastIteration + 0.5);

    const QList<QAbstractAxis *> &left = m_log ? logAxes : linearAxes;
    const QList<QAbstractAxis *> &oldLeft = m_log ? linearAxes : logAxes;
    if (!m_chart->axes(Qt::Vertical).contains(left.first())) {
        for (QAbstractAxis *axis : oldLeft + QList<QAbstractAxis *>{oldRight})
            if (m_chart->axes(Qt::Vertical).contains(axis)) {
                m_chart->removeAxis(axis);
                axis->setParent(this);
            }
        for (QAbstractAxis *axis : left)
            m_chart->addAxis(axis, Qt::AlignLeft);
        m_chart->addAxis(right, Qt::AlignRight);
        for (QAbstractSeries *series : m_chart->series()) {
            if (series == m_failed)
                continue;
            if (series == m_speedupAnchor)
                series->attachAxis(right);
            else if (series == m_logAnchor)
                series->attachAxis(m_log ? static_cast<QAbstractAxis *>(m_logLabels) : m_linearAxis);
            else
                series->attachAxis(left.first());
        }
    }
    right->setVisible(base > 0);
    m_points->invalidate(); // the score axis may have been swapped
}

void LatencyChart::setLogScale(bool log)
{
    if (log == m_log)
        return;
    m_log = log;
    m_logToggle->setChecked(log);
    // Points keep their values; only the score axes change.
    updateAxes();
}

QPointF LatencyChart::failedMarkerPoint(double x) const
{
    // Where a cross (s_failedY up its own 0..1 axis) lies in score-axis values, for the selection ring.
    if (m_log) {
        const double low = std::log(m_logAxis->min());
        return QPointF(x, std::exp(low + s_failedY * (std::log(m_logAxis->max()) - low)));
    }
    return QPointF(x, m_linearAxis->min() + s_failedY * (m_linearAxis->max() - m_linearAxis->min()));
}

void LatencyChart::selectCandidate(qint64 candidateId)
{
    m_selected = candidateId;
    QList<QPointF> marker;
    const auto it = m_entryOfId.constFind(candidateId);
    if (candidateId != 0 && it != m_entryOfId.constEnd()) {
        const Entry &entry = m_entries.at(*it);
        if (entry.plot == Plot::Correct)
            marker.append(m_correctPoints.at(entry.pointIndex));
        else if (entry.plot == Plot::Failed)
            marker.append(failedMarkerPoint(m_failedPoints.at(entry.pointIndex).x()));
    }
    if (marker != m_selectedMarker->points())
        m_selectedMarker->replace(marker);
}

qint64 LatencyChart::candidateAt(const QXYSeries *series, const QPointF &point) const
{
    const QList<QPointF> &points = series == m_correct ? m_correctPoints : m_failedPoints;
    const QList<qint64> &ids = series == m_correct ? m_correctIds : m_failedIds;
    if (series != m_correct && series != m_failed)
        return 0;
    qsizetype nearest = -1;
    double distance = 0;
    for (qsizetype i = 0; i < points.size(); ++i) {
        const double dx = points.at(i).x() - point.x();
        const double dy = (points.at(i).y() - point.y()) / std::max(std::abs(point.y()), 1e-12);
        const double d = dx * dx + dy * dy;
        if (nearest < 0 || d < distance) {
            nearest = i;
            distance = d;
        }
    }
    return nearest >= 0 && distance < 1e-6 ? ids.at(nearest) : 0;
}

QString LatencyChart::describe(const Entry &entry) const
{
    QString text = tr("<b>Candidate %1</b> · iteration %2").arg(entry.id).arg(entry.iteration);
    if (entry.status == CandidateStatus::Correct && entry.score > 0) {
        text += QLatin1String("<br>") + ValueFormat::score(entry.score, m_metric, m_metricUnit);
        const double base = baseline();
        if (base > 0)
            text += tr(" · %1 over the root").arg(ValueFormat::speedup(base / entry.score));
    } else {
        text += QLatin1String("<br>") + entry.word.toHtmlEscaped();
    }
    text += QLatin1String("<br>") + (entry.menuItem.isEmpty() ? tr("(no menu item)") : entry.menuItem.toHtmlEscaped());
    return text;
}

void LatencyChart::onHovered(const QXYSeries *series, const QPointF &point, bool state)
{
    if (!state) {
        QToolTip::hideText();
        return;
    }
    const qint64 id = candidateAt(series, point);
    const auto it = m_entryOfId.constFind(id);
    if (id != 0 && it != m_entryOfId.constEnd())
        QToolTip::showText(QCursor::pos(), describe(m_entries.at(*it)), m_view);
}

void LatencyChart::onClicked(const QXYSeries *series, const QPointF &point)
{
    const qint64 id = candidateAt(series, point);
    if (id == 0)
        return;
    selectCandidate(id);
    Q_EMIT candidateSelected(id);
}

} // namespace autocomp

namespace autocomp {

bool LatencyChart::exportImage(const QString &path, QString *error)
{
    flushPendingUpdates();
    return ImageExport::save(m_view->scene(), m_view->sceneRect(), path, palette().color(QPalette::Base), error);
}

} // namespace autocomp
