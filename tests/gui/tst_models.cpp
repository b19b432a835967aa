// The item models under QAbstractItemModelTester, plus the behaviour the views rely on.
#include "models/candidate_tree_model.h"
#include "models/run_list_model.h"
#include "common/value_format.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace autocomp;

namespace {

Candidate candidate(qint64 id, qint64 parentId, CandidateStatus status, double score)
{
    Candidate c;
    c.id = id;
    c.runId = 1;
    c.parentId = parentId;
    c.iteration = parentId == 0 ? 0 : 1;
    c.origin = parentId == 0 ? CandidateOrigin::Root : CandidateOrigin::Llm;
    c.status = status;
    c.score = score;
    return c;
}

RunInfo runInfo(qint64 id, const QString &problem, double baseline, double best)
{
    RunInfo run;
    run.id = id;
    run.target = QStringLiteral("cpu");
    run.problem = problem;
    run.metric = QStringLiteral("latency_ms");
    run.baselineScore = baseline;
    run.bestScore = best;
    run.usd = 1.5;
    run.createdAt = QDateTime::currentDateTimeUtc();
    return run;
}

} // namespace

class TestModels : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void runListModel();
    void candidateTreeFromList();
    void candidateTreeLiveUpdates();
    void candidateTreeOrphanMovesUnderParent();
    void formatsScores_data();
    void formatsScores();
};

void TestModels::runListModel()
{
    RunListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setRuns({runInfo(1, QStringLiteral("gemm"), 10, 4), runInfo(2, QStringLiteral("conv"), 0, 0)});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.columnCount(), int(RunListModel::ColumnCount));
    QCOMPARE(model.index(0, RunListModel::SpeedupColumn).data().toString(), QStringLiteral("2.50×"));
    QCOMPARE(model.index(0, RunListModel::SpeedupColumn).data(RunListModel::SortRole).toDouble(), 2.5);
    QCOMPARE(model.index(1, RunListModel::SpeedupColumn).data().toString(), QStringLiteral("—"));
    QCOMPARE(model.index(1, RunListModel::DollarsColumn).data().toString(), QStringLiteral("$1.50"));
    QCOMPARE(model.index(1, RunListModel::IdColumn).data(RunListModel::RunIdRole).toLongLong(), 2);

    RunInfo labelled = runInfo(3, QStringLiteral("softmax"), 2, 1);
    labelled.label = QStringLiteral("recorded with scripted responses");
    model.upsertRun(labelled);
    QCOMPARE(model.rowCount(), 3);
    QVERIFY(model.index(2, RunListModel::ProblemColumn).data(Qt::ToolTipRole).toString().contains(labelled.label));
    QVERIFY(!model.index(2, RunListModel::IdColumn).data(Qt::DecorationRole).isNull());
    QVERIFY(model.index(0, RunListModel::IdColumn).data(Qt::DecorationRole).isNull());

    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    labelled.bestScore = 0.5;
    model.upsertRun(labelled);
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.index(2, RunListModel::SpeedupColumn).data().toString(), QStringLiteral("4.00×"));

    model.removeRun(1);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.rowOfRun(1), -1);
    QCOMPARE(model.rowOfRun(3), 1);
}

void TestModels::candidateTreeFromList()
{
    CandidateTreeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setMetric(QStringLiteral("latency_ms"));
    // Out of order on purpose: the tree must not depend on the order of the list.
    model.setCandidates({candidate(4, 2, CandidateStatus::CompileError, qQNaN()),
                         candidate(2, 1, CandidateStatus::Correct, 2.5), candidate(1, 0, CandidateStatus::Correct, 10),
                         candidate(3, 1, CandidateStatus::Incorrect, qQNaN())});
    QCOMPARE(model.rowCount(), 1);
    const QModelIndex root = model.index(0, 0);
    QCOMPARE(root.data(CandidateTreeModel::CandidateIdRole).toLongLong(), 1);
    QCOMPARE(model.rowCount(root), 2);
    QCOMPARE(model.index(0, 0, root).data(CandidateTreeModel::CandidateIdRole).toLongLong(), 2);
    QCOMPARE(model.index(1, 0, root).data(CandidateTreeModel::CandidateIdRole).toLongLong(), 3);
    const QModelIndex two = model.indexOfCandidate(2);
    QCOMPARE(model.rowCount(two), 1);
    QCOMPARE(model.indexOfCandidate(4).parent(), two);
    QCOMPARE(model.indexOfCandidate(2, CandidateTreeModel::SpeedupColumn).data().toString(), QStringLiteral("4.00×"));
    QCOMPARE(model.indexOfCandidate(2, CandidateTreeModel::ScoreColumn).data().toString(), QStringLiteral("2.500 ms"));
    QCOMPARE(model.indexOfCandidate(3, CandidateTreeModel::ScoreColumn).data().toString(), QStringLiteral("—"));
    QCOMPARE(model.indexOfCandidate(4, CandidateTreeModel::StatusColumn).data().toString(),
             QStringLiteral("compile error"));
    QCOMPARE(model.indexOfCandidate(4).data(CandidateTreeModel::StatusRole).toInt(),
             int(CandidateStatus::CompileError));
    QVERIFY(!model.indexOfCandidate(1).data(Qt::DecorationRole).isNull());
    QVERIFY(model.indexOfCandidate(3, CandidateTreeModel::ScoreColumn).data(CandidateTreeModel::SortRole).toDouble()
            > model.indexOfCandidate(1, CandidateTreeModel::ScoreColumn).data(CandidateTreeModel::SortRole).toDouble());
}

void TestModels::candidateTreeLiveUpdates()
{
    CandidateTreeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setMetric(QStringLiteral("latency_ms"));
    model.upsertCandidate(candidate(1, 0, CandidateStatus::Benchmarking, qQNaN()));
    model.upsertCandidates(
        {candidate(2, 1, CandidateStatus::Correct, 5), candidate(3, 1, CandidateStatus::Planning, qQNaN())});
    QCOMPARE(model.rowCount(model.index(0, 0)), 2);
    QCOMPARE(model.indexOfCandidate(2, CandidateTreeModel::SpeedupColumn).data().toString(), QStringLiteral("—"));

    // The root's score arrives last: the speedups of everyone else follow.
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.upsertCandidate(candidate(1, 0, CandidateStatus::Correct, 10));
    QVERIFY(changed.count() >= 2);
    QCOMPARE(model.indexOfCandidate(2, CandidateTreeModel::SpeedupColumn).data().toString(), QStringLiteral("2.00×"));
    QCOMPARE(model.candidateCount(), 3);

    Candidate inBeam = candidate(2, 1, CandidateStatus::Correct, 5);
    inBeam.inBeam = true;
    model.upsertCandidate(inBeam);
    QVERIFY(model.indexOfCandidate(2).data(Qt::FontRole).value<QFont>().bold());
    QVERIFY(!model.indexOfCandidate(3).data(Qt::FontRole).value<QFont>().bold());
}

void TestModels::candidateTreeOrphanMovesUnderParent()
{
    CandidateTreeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.upsertCandidate(candidate(1, 0, CandidateStatus::Correct, 10));
    model.upsertCandidate(candidate(5, 4, CandidateStatus::Pending, qQNaN()));
    QCOMPARE(model.rowCount(), 2); // the parent is not known yet
    model.upsertCandidate(candidate(4, 1, CandidateStatus::Correct, 8));
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.indexOfCandidate(5).parent(), model.indexOfCandidate(4));
    QCOMPARE(model.indexOfCandidate(4).parent(), model.indexOfCandidate(1));
}

void TestModels::formatsScores_data()
{
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("metric");
    QTest::addColumn<QString>("expected");
    QTest::newRow("milliseconds") << 1.23456 << QStringLiteral("latency_ms") << QStringLiteral("1.235 ms");
    QTest::newRow("microseconds") << 12.5 << QStringLiteral("time_us") << QStringLiteral("12.50 µs");
    QTest::newRow("cycles") << 123456.0 << QStringLiteral("cycles") << QStringLiteral("123456 cycles");
    QTest::newRow("throughput") << 88.1 << QStringLiteral("gflops") << QStringLiteral("88.10 GFLOP/s");
    QTest::newRow("no unit") << 0.5 << QStringLiteral("score") << QStringLiteral("0.5000");
    QTest::newRow("missing") << qQNaN() << QStringLiteral("latency_ms") << QStringLiteral("—");
}

void TestModels::formatsScores()
{
    QFETCH(double, value);
    QFETCH(QString, metric);
    QFETCH(QString, expected);
    QCOMPARE(ValueFormat::score(value, metric), expected);
}

QTEST_MAIN(TestModels)
#include "tst_models.moc"
