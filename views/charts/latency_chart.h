#pragma once

#include "model/candidate.h"

#include <QHash>
#include <QList>
#include <QPointF>
#include <QWidget>

#include <map>

class QCategoryAxis;
class QChart;
class QChartView;
class QCheckBox;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QTimer;
class QValueAxis;
class QXYSeries;

namespace autocomp {

class ChartPointLayer;
class ShownRun;

// The run's scores over its iterations: each evaluated candidate a point (failures as crosses along the
// bottom), the best so far as a step line, the root's score and the vendor library's (when the evaluator
// measured one) as reference lines, and on the right the speedup over the root.
class LatencyChart : public QWidget
{
    Q_OBJECT
public:
    explicit LatencyChart(QWidget *parent = nullptr);
    ~LatencyChart() override;

    // `metric` names the score (its unit is shown); `baselineScore` 0: the root candidate's score.
    // `unit`: the run's stored unit (RunInfo::metricUnit); empty: the one the metric's name implies.
    void setCandidates(const QList<Candidate> &candidates, const QString &metric, double baselineScore = 0,
                       const QString &unit = {});
    // Follows `run`: its candidates when it is shown, each batch of changes, the selected candidate.
    void setShownRun(const ShownRun *run);
    void upsertCandidate(const Candidate &candidate);
    void upsertCandidates(const QList<Candidate> &candidates);
    void clear();

    // Highlights the candidate's point without emitting candidateSelected.
    void selectCandidate(qint64 candidateId);
    qint64 selectedCandidate() const { return m_selected; }

    // The chart as shown, as a PNG or SVG file (by the suffix).
    bool exportImage(const QString &path, QString *error);

    void setLogScale(bool log);
    bool logScale() const { return m_log; }

    // For tests and the benchmark: what is plotted, after any pending update.
    void flushPendingUpdates();
    int pointCount() const;
    // The series give the points their legend entries and axes; the points themselves are painted by a
    // ChartPointLayer, from these lists.
    QScatterSeries *correctSeries() const { return m_correct; }
    QScatterSeries *failedSeries() const { return m_failed; }
    const QList<QPointF> &correctPoints() const { return m_correctPoints; }
    const QList<QPointF> &failedPoints() const { return m_failedPoints; }
    QLineSeries *bestSeries() const { return m_best; }
    QLineSeries *baselineSeries() const { return m_baseline; }
    QLineSeries *vendorSeries() const { return m_vendor; }
    QChartView *chartView() const { return m_view; }
    // The candidate plotted at `point` of `series` (a point as the series reports it); 0 when none.
    qint64 candidateAt(const QXYSeries *series, const QPointF &point) const;
    double vendorScore() const { return m_vendorScore; }

    // A vendor library's score from a candidate: metrics "vendor_latency_ms", else a feedback line such as
    // "OpenBLAS sgemm: 3.1 ms at M=512,...". 0 and an empty name when there is none.
    static double vendorScoreOf(const Candidate &candidate, QString *name);

Q_SIGNALS:
    void candidateSelected(qint64 candidateId);

protected:
    void showEvent(QShowEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void applyPalette();
    enum class Plot { None, Correct, Failed };
    struct Entry
    {
        qint64 id = 0;
        int iteration = 0;
        CandidateStatus status = CandidateStatus::Planning;
        QString word; // statusWord
        double score = 0;
        QString menuItem;
        bool root = false;
        Plot plot = Plot::None; // where the entry is plotted; its point is pointIndex in that series
        qsizetype pointIndex = -1;
        bool queued = false; // in m_queued, waiting to be plotted
    };
    // What the axes were last set up for, so that an update that does not widen them leaves them alone.
    struct AxisState
    {
        double low = 0;
        double high = 0;
        int lastIteration = -1;
        double base = 0;
        bool log = false;
        bool operator==(const AxisState &) const = default;
    };

    void store(const Candidate &candidate);
    void scheduleUpdate();
    void applyQueued();
    void rebuild();
    void plot(Entry &entry);
    void extendRange(double score);
    void updateBestLine();
    void updateReferenceLines();
    void updateAxes();
    void updateCaption();
    void applyAxes(double low, double high, double lastIteration);
    // 1, 2, 5 times the powers of ten between `low` and `high` (more steps where that gives fewer than three).
    static QList<double> niceLogTicks(double low, double high);
    void onHovered(const QXYSeries *series, const QPointF &point, bool state);
    void onClicked(const QXYSeries *series, const QPointF &point);
    QString describe(const Entry &entry) const;
    double baseline() const { return m_explicitBaseline > 0 ? m_explicitBaseline : m_rootScore; }
    QPointF failedMarkerPoint(double x) const;

    QChartView *m_view;
    QChart *m_chart;
    QCheckBox *m_logToggle;
    QLabel *m_caption;
    QScatterSeries *m_correct;
    QScatterSeries *m_failed;
    QScatterSeries *m_selectedMarker;
    QLineSeries *m_best;
    QLineSeries *m_baseline;
    QLineSeries *m_vendor;
    QLineSeries *m_speedupAnchor; // invisible; gives the speedup axis a series, as Qt Charts wants
    QLineSeries *m_logAnchor; // the same for the log scale's labels
    QValueAxis *m_xAxis;
    QValueAxis *m_linearAxis;
    QLogValueAxis *m_logAxis;
    QValueAxis *m_failedAxis; // hidden, fixed 0..1: the crosses keep their place whatever the score axis does
    QCategoryAxis *m_speedupLinearAxis;
    // A log axis labels only the powers of ten: on a log scale the labels are category axes over log10 of the
    // values, with nice ticks (1, 2, 5, 10, 20, 50…) at their places, over the hidden QLogValueAxis.
    QCategoryAxis *m_logLabels;
    QCategoryAxis *m_speedupLogAxis;
    QTimer *m_updateTimer;
    ChartPointLayer *m_points = nullptr;

    QString m_metric;
    QString m_metricUnit; // the run's stored unit; empty: the one the metric's name implies
    double m_explicitBaseline = 0;
    double m_rootScore = 0;
    double m_vendorScore = 0;
    QString m_vendorName;
    bool m_log = false;
    bool m_userChoseScale = false;
    bool m_needsRebuild = false; // a plotted point changed: replot everything
    qint64 m_selected = 0;
    QList<Entry> m_entries;
    QHash<qint64, int> m_entryOfId;
    QList<int> m_queued; // entries that became final since the last update
    // Plotted points and their candidates, in series order; points are only ever appended between rebuilds.
    QList<qint64> m_correctIds;
    QList<qint64> m_failedIds;
    QList<QPointF> m_correctPoints;
    QList<QPointF> m_failedPoints;
    // Score range of the correct points and the reference lines, and each iteration's best score.
    double m_low = 0;
    double m_high = 0;
    int m_lastIteration = 0;
    std::map<int, double> m_iterationBest;
    double m_bestSoFar = 0;
    AxisState m_axes;
};

} // namespace autocomp
