#pragma once

#include "model/strategy_record.h"
#include "insights/menu_insights.h"

#include <QHash>
#include <QStringList>
#include <QWidget>

class QBarSeries;
class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QTableView;
class QTreeWidget;

namespace autocomp {

class MenuInsightsModel;

// "What did the run teach about its menu": MenuInsights for the shown run, or for every run of its target,
// as a sortable table and a bar chart of the table's top rows (in the table's order), with the candidates
// of the selected strategy below. Figures are computed on the thread pool through a connection of their own.
class MenuInsightsView : public QWidget
{
    Q_OBJECT
public:
    enum class Scope { Run, Target };
    enum class Measure { Counts, Gains };

    explicit MenuInsightsView(QWidget *parent = nullptr);
    ~MenuInsightsView() override;

    void setStorePath(const QString &path);
    // The run shown; `target` scopes "all runs of the target". Recomputes now when the view is visible, else
    // when it is next shown.
    void setRun(qint64 runId, const QString &target);
    void clear();
    void setScope(Scope scope);
    void setGrouping(MenuInsights::Grouping grouping);
    void setMeasure(Measure measure);
    // Recomputes now (after a run changed in the store).
    void refresh();
    // Selects the row of a strategy (and model when grouped by model); false when there is none.
    bool selectStrategy(const QString &strategy, const QString &model = QString());

    bool exportCsv(const QString &path, QString *error) const;

    MenuInsightsModel *model() const { return m_model; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    QTableView *table() const { return m_table; }
    QChart *chart() const { return m_chart; }
    QChartView *chartView() const { return m_chartView; }
    QTreeWidget *candidateList() const { return m_candidates; }
    // Runs the shown figures cover.
    QList<qint64> coveredRuns() const { return m_coveredRuns; }

Q_SIGNALS:
    // Figures for the current settings are in the table and the chart.
    void updated();
    // A candidate of the selected strategy was activated (double click, Enter).
    void candidateActivated(qint64 runId, qint64 candidateId);
    // A strategy's row was activated (double click, Enter): show its candidates in the run.
    void strategyActivated(const QString &strategy);

protected:
    void showEvent(QShowEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void applyRecords(quint64 generation, const QList<StrategyRecord> &records, const QList<qint64> &runs,
                      const QHash<qint64, QStringList> &candidateRows, const QString &error);
    void rebuildChart();
    void showCandidatesOfCurrent();
    void exportClicked();

    QString m_storePath;
    qint64 m_runId = 0;
    QString m_target;
    Scope m_scope = Scope::Run;
    MenuInsights::Grouping m_grouping = MenuInsights::Grouping::Strategy;
    Measure m_measure = Measure::Counts;
    quint64 m_generation = 0;
    bool m_stale = false;
    QList<qint64> m_coveredRuns;
    // Per candidate id: run, iteration, status, gain over its parent (as shown in the list).
    QHash<qint64, QStringList> m_candidateRows;

    QComboBox *m_scopeCombo;
    QComboBox *m_groupingCombo;
    QComboBox *m_measureCombo;
    QLabel *m_summary;
    MenuInsightsModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_table;
    QChart *m_chart;
    QChartView *m_chartView;
    QTreeWidget *m_candidates;
};

} // namespace autocomp
