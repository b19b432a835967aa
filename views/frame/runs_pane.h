#pragma once

#include <QList>
#include <QWidget>

#include <functional>

class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace autocomp {

class RunListModel;
class StoreSession;

// The runs of the store as a filterable, sortable table ("runFilter" above "runsView"): who drives each
// (the "Driven by" column shows while some run has a driver), which were interrupted. Several rows can be
// selected; the current row is the shown run (runActivated).
class RunsPane : public QWidget
{
    Q_OBJECT
public:
    // `drivenHere`: whether this process's engine drives a run; `driverText`: MainWindow::driverText.
    RunsPane(StoreSession *session, std::function<bool(qint64)> drivenHere, std::function<QString(qint64)> driverText,
             QWidget *parent = nullptr);

    RunListModel *model() const { return m_model; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    QTableView *view() const { return m_view; }

    // Reads every run from the store again, with the live state of those the follower reported.
    void reload();
    // The driver column and the interrupted state of run `runId` as the session last read it.
    void updateLiveState(qint64 runId);
    // Makes run `runId` the current row (clearing a filter that hid it); false when it is not listed.
    bool select(qint64 runId);
    // Makes the first row current.
    void selectFirst();
    // `shownRunId` (when not 0), then the other selected runs, top to bottom.
    QList<qint64> selectedRunIds(qint64 shownRunId) const;
    void clearFilter();
    void focusFilter();
    // The id of the run `offset` rows below the current one (negative: above); 0 when there is none.
    qint64 runBesideCurrent(int offset) const;
    // Every column sized to its contents; returns the height that shows every row without scrolling.
    int fitToRows();

Q_SIGNALS:
    void runActivated(qint64 runId);
    // The "Driven by" column appeared or went (some run has a driver now, or none has).
    void driverColumnChanged();

private:
    StoreSession *m_session;
    std::function<bool(qint64)> m_drivenHere;
    std::function<QString(qint64)> m_driverText;
    RunListModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QLineEdit *m_filter;
    QTableView *m_view;
};

} // namespace autocomp
