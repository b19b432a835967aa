// RunLifecycle: the phases a run goes through and the only moves between them (what pause, resume, stop,
// a budget, a failing store and the end may do to a run).
#include "model/run_lease.h"
#include "search/run_lifecycle.h"

#include <QTest>

using autocomp::RunLease;
using autocomp::RunLifecycle;
using Phase = RunLifecycle::Phase;

class TestRunLifecycle : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void pauseThenResume()
    {
        RunLifecycle run;
        QCOMPARE(run.phase(), Phase::Running);
        QVERIFY(run.acting());
        QVERIFY(!run.deferring());
        QVERIFY(run.moveTo(Phase::Pausing));
        QVERIFY(run.deferring()); // new work waits; in-flight work is still acted on
        QVERIFY(run.acting());
        QVERIFY(run.moveTo(Phase::Paused));
        QVERIFY(run.deferring());
        QVERIFY(run.moveTo(Phase::Running));
        QVERIFY(!run.deferring());
        // Resumed before the in-flight work settled.
        QVERIFY(run.moveTo(Phase::Pausing));
        QVERIFY(run.moveTo(Phase::Running));
        QVERIFY(run.live());
    }

    void pausedOnlyAfterPausing()
    {
        // A run is announced paused only once it has been asked to pause and its in-flight work settled.
        QVERIFY(!RunLifecycle::allows(Phase::Running, Phase::Paused));
        QVERIFY(!RunLifecycle::allows(Phase::Paused, Phase::Pausing));
    }

    void endedRunMovesNowhere()
    {
        // A run that ended is neither paused, resumed, stopped nor halted again.
        const QList<Phase> all{Phase::Running,  Phase::Pausing, Phase::Paused, Phase::Draining,
                               Phase::Stopping, Phase::Halted,  Phase::Ended};
        for (Phase to : all)
            QVERIFY2(!RunLifecycle::allows(Phase::Ended, to), qPrintable(RunLifecycle::name(to)));
        for (Phase from : all)
            if (from != Phase::Ended)
                QVERIFY2(RunLifecycle::allows(from, Phase::Ended), qPrintable(RunLifecycle::name(from)));
        RunLifecycle run;
        QVERIFY(run.moveTo(Phase::Ended));
        QVERIFY(run.ended());
        QVERIFY(!run.live());
        QVERIFY(!run.acting());
    }

    void haltedRunOnlyEnds()
    {
        // After a store write failed nothing is acted on or written: no resume, no pause, only the end.
        RunLifecycle run;
        QVERIFY(run.moveTo(Phase::Pausing));
        QVERIFY(run.moveTo(Phase::Halted, QStringLiteral("disk full")));
        QCOMPARE(run.reason(), QStringLiteral("disk full"));
        QVERIFY(!run.acting());
        QVERIFY(!run.live());
        QVERIFY(!run.deferring());
        QVERIFY(!RunLifecycle::allows(Phase::Halted, Phase::Running));
        QVERIFY(!RunLifecycle::allows(Phase::Halted, Phase::Pausing));
        QVERIFY(!RunLifecycle::allows(Phase::Halted, Phase::Stopping));
        QVERIFY(run.moveTo(Phase::Ended));
        QVERIFY(run.reason().isEmpty());
    }

    void stoppingActsOnNothing()
    {
        // stop(): in-flight work is cancelled and its outcome not acted on, yet the end is still written.
        RunLifecycle run;
        QVERIFY(run.moveTo(Phase::Stopping));
        QVERIFY(!run.acting());
        QVERIFY(run.live());
        QVERIFY(!RunLifecycle::allows(Phase::Stopping, Phase::Running));
        QVERIFY(!RunLifecycle::allows(Phase::Stopping, Phase::Pausing));
    }

    void drainingCannotBePausedOrResumed()
    {
        // The budget ran out at the end of an iteration: the run ends with this beam selection.
        RunLifecycle run;
        QVERIFY(run.moveTo(Phase::Draining, QStringLiteral("budget: 3 LLM calls reached (max_llm_calls)")));
        QCOMPARE(run.reason(), QStringLiteral("budget: 3 LLM calls reached (max_llm_calls)"));
        QVERIFY(run.acting());
        QVERIFY(!RunLifecycle::allows(Phase::Draining, Phase::Pausing));
        QVERIFY(!RunLifecycle::allows(Phase::Draining, Phase::Running));
        QVERIFY(RunLifecycle::allows(Phase::Paused, Phase::Draining));
        QVERIFY(RunLifecycle::allows(Phase::Draining, Phase::Stopping));
    }

    void heartbeatEveryInterval()
    {
        // The lease is renewed once every heartbeat interval, counted in the control timer's ticks.
        RunLifecycle run;
        const int tickMs = 500;
        const int ticks = qMax(1, RunLease::heartbeatIntervalMs() / tickMs);
        int due = 0;
        for (int i = 1; i <= 3 * ticks; ++i)
            if (run.heartbeatDue(tickMs)) {
                ++due;
                QCOMPARE(i % ticks, 0);
            }
        QCOMPARE(due, 3);
    }
};

QTEST_GUILESS_MAIN(TestRunLifecycle)
#include "tst_run_lifecycle.moc"
