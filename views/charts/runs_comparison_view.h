#pragma once

#include "model/candidate.h"
#include "model/run_info.h"

#include <QHash>
#include <QList>
#include <QPointF>
#include <QWidget>

class QChart;
class QChartView;
class QListWidget;
class QTableWidget;

namespace autocomp {

class RunStore;

// Several runs side by side: their best-so-far curves on one chart, each normalized to its own baseline
// (speedup over the run's root candidate, by iteration), so runs of different problems or targets compare;
// and a table of their settings and results, one column per run.
class RunsComparisonView : public QWidget
{
    Q_OBJECT
public:
    explicit RunsComparisonView(QWidget *parent = nullptr);

    // The store whose runs are offered; reads it on the calling thread (a few runs' candidates).
    void setStore(RunStore *store);
    void reloadRuns();
    // Ticks exactly these runs.
    void setComparedRuns(const QList<qint64> &runIds);
    QList<qint64> comparedRuns() const;

    // Best-so-far speedup over the baseline after each iteration (x: iteration, y: baseline / best score
    // among correct candidates up to it); empty when the run has no scored root.
    static QList<QPointF> bestSoFarCurve(const QList<Candidate> &candidates, double baselineScore);

    QChart *chart() const { return m_chart; }
    QChartView *chartView() const { return m_chartView; }
    QTableWidget *table() const { return m_table; }
    QListWidget *runList() const { return m_runs; }

Q_SIGNALS:
    void updated();

protected:
    void changeEvent(QEvent *event) override;

private:
    void rebuild();

    RunStore *m_store = nullptr;
    QList<RunInfo> m_allRuns;
    bool m_filling = false;
    QListWidget *m_runs;
    QChart *m_chart;
    QChartView *m_chartView;
    QTableWidget *m_table;
};

} // namespace autocomp
