#pragma once

#include "study/study_report.h"

#include <QList>
#include <QString>
#include <QWidget>

#include <optional>

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QTableWidget;
class QTimer;

namespace autocomp {

class RunStore;

// A parameter study's runs from the store (found by their StudyLabel, so the study file is not needed):
//  - the grid's progress: one row per problem × point, one column per seed with the run's state, then the
//    point's aggregates (StudyReport::summarize) and whether it is on the Pareto front;
//  - best score per iteration, one curve per point (the mean over its seeds), for the chosen problem;
//  - quality against cost: every run a small marker (coloured by point), every point's mean a large one, and
//    the Pareto front of the means as a line. Cost is dollars, or tokens where every run cost $0.
// Double-clicking a seed's cell or clicking a marker asks for its run (runActivated); a point's mean opens
// its best run. Both charts export as PNG or SVG. The view follows the store while runs go on.
class StudyView : public QWidget
{
    Q_OBJECT
public:
    explicit StudyView(QWidget *parent = nullptr);

    // Reads on the calling thread (a study's runs and candidates).
    void setStore(RunStore *store);
    // Shows this study (empty: the first of the store's).
    void setStudy(const QString &name);
    QString study() const;
    QString problem() const;
    void setProblem(const QString &problem);
    void reload();

    QList<StudyRunResult> results() const { return m_results; }
    QList<StudyPointSummary> points() const { return m_points; }

    enum class Chart { Curves, Scatter };
    QChart *chart(Chart which) const;
    QChartView *chartView(Chart which) const;
    QTableWidget *grid() const { return m_grid; }
    // Saves a chart as PNG or SVG by the suffix of `path` (ImageExport).
    bool exportChart(Chart which, const QString &path, QString *error) const;
    // The run a scatter click at `value` (chart coordinates) opens: the nearest run marker or point mean; 0: none.
    qint64 runAt(const QPointF &value) const;

Q_SIGNALS:
    void runActivated(qint64 runId);
    void updated();

protected:
    void changeEvent(QEvent *event) override;

private:
    void fillStudies();
    void rebuild();
    void rebuildGrid();
    void rebuildCurves();
    void rebuildScatter();
    qint64 bestRunOf(const StudyPointSummary &point) const;
    bool costInTokens() const;
    double costOf(const StudyRunResult &run) const;
    double costOf(const StudyPointSummary &point) const;

    RunStore *m_store = nullptr;
    QComboBox *m_studies;
    QComboBox *m_problems;
    QLabel *m_summary;
    QTableWidget *m_grid;
    QChart *m_curves;
    QChartView *m_curvesView;
    QChart *m_scatter;
    QChartView *m_scatterView;
    QTimer *m_follow;
    std::optional<qint64> m_dataVersion;
    QList<StudyRunResult> m_results;
    QList<StudyPointSummary> m_points;
    bool m_filling = false;
};

} // namespace autocomp
