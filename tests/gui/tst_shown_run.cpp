// ShownRun: the one route from a run to the views. A run read from the store, a batch from this process's
// engine and a new beam reach a subscribed view (the tree model) alike; a batch of another run is dropped;
// work in flight in an ended run reads cancelled; the selection is handed out again when its candidate changes.
#include "exchange/run_archive.h"
#include "live/shown_run.h"
#include "live/store_session.h"
#include "models/candidate_tree_model.h"
#include "store/run_store.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;

class TestShownRun : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init();
    void cleanup();
    void showsStoredRunToSubscribers();
    void engineBatchOfShownRunOnly();
    void endedRunCancelsWorkInFlight();
    void beamMovesBetweenCandidates();
    void selectionFollowsItsCandidate();

private:
    // A candidate of the shown run that is not in it yet, derived from its root.
    Candidate newChild(CandidateStatus status) const;

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<StoreSession> m_session;
    std::unique_ptr<ShownRun> m_shown;
    std::unique_ptr<CandidateTreeModel> m_model;
    qint64 m_runId = 0;
};

void TestShownRun::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    QString error;
    std::unique_ptr<RunStore> store = RunStore::open(m_dir->filePath(QStringLiteral("runs.sqlite")), &error);
    QVERIFY2(store, qPrintable(error));
    m_runId = importRunJsonl(
        *store, qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/gui/data/sample_run.jsonl"), &error);
    QVERIFY2(m_runId != 0, qPrintable(error));
    m_session = std::make_unique<StoreSession>(std::move(store));
    m_shown = std::make_unique<ShownRun>(m_session.get());
    m_model = std::make_unique<CandidateTreeModel>();
    m_model->setShownRun(m_shown.get());
    QVERIFY(m_shown->show(m_runId));
}

void TestShownRun::cleanup()
{
    m_model.reset();
    m_shown.reset();
    m_session.reset();
    m_dir.reset();
}

Candidate TestShownRun::newChild(CandidateStatus status) const
{
    Candidate c = *m_shown->find(m_shown->rootCandidateId());
    c.id = 10000;
    c.parentId = m_shown->rootCandidateId();
    c.origin = CandidateOrigin::Llm;
    c.status = status;
    c.inBeam = false;
    return c;
}

void TestShownRun::showsStoredRunToSubscribers()
{
    const QList<Candidate> stored = m_session->store()->candidates(m_runId);
    QVERIFY(!stored.isEmpty());
    QCOMPARE(m_shown->id(), m_runId);
    QCOMPARE(m_shown->candidateCount(), int(stored.size()));
    QCOMPARE(m_model->candidateCount(), int(stored.size()));
    QCOMPARE(m_model->metric(), m_shown->run().metric);
    QCOMPARE(m_model->rootCandidateId(), m_shown->rootCandidateId());

    QSignalSpy shown(m_shown.get(), &ShownRun::shown);
    QVERIFY(!m_shown->show(m_runId + 1000)); // not in the store: nothing changes
    QCOMPARE(shown.count(), 0);
    QCOMPARE(m_shown->id(), m_runId);
    m_shown->clear();
    QCOMPARE(shown.count(), 1);
    QCOMPARE(m_shown->id(), 0);
    QCOMPARE(m_model->candidateCount(), 0);
}

void TestShownRun::engineBatchOfShownRunOnly()
{
    QSignalSpy changed(m_shown.get(), &ShownRun::candidatesChanged);
    const int before = m_model->candidateCount();
    m_shown->applyEngineCandidates(m_runId + 1, {newChild(CandidateStatus::Correct)});
    QCOMPARE(changed.count(), 0);
    QCOMPARE(m_model->candidateCount(), before);

    m_shown->applyEngineCandidates(m_runId, {newChild(CandidateStatus::Correct)});
    QCOMPARE(changed.count(), 1);
    QVERIFY(changed.first().at(1).toBool()); // a candidate not shown before
    QCOMPARE(m_model->candidateCount(), before + 1);
    QVERIFY(m_model->indexOfCandidate(10000).isValid());

    m_shown->applyEngineCandidates(m_runId, {newChild(CandidateStatus::Incorrect)});
    QCOMPARE(changed.count(), 2);
    QVERIFY(!changed.last().at(1).toBool()); // a change of a shown one
    QCOMPARE(m_model->candidateCount(), before + 1);
    QCOMPARE(toString(m_shown->find(10000)->status), toString(CandidateStatus::Incorrect));
}

void TestShownRun::endedRunCancelsWorkInFlight()
{
    QCOMPARE(toString(m_shown->run().state), toString(RunState::Finished));
    m_shown->applyEngineCandidates(m_runId, {newChild(CandidateStatus::Compiling)});
    QCOMPARE(toString(m_shown->find(10000)->status), toString(CandidateStatus::Cancelled));
    const Candidate *inModel = m_model->candidate(m_model->indexOfCandidate(10000));
    QVERIFY(inModel);
    QCOMPARE(toString(inModel->status), toString(CandidateStatus::Cancelled));

    // Live again (resumed), work in flight is what it is; ended once more, it is settled.
    RunInfo run = m_shown->run();
    run.state = RunState::Running;
    m_shown->updateRun(run);
    m_shown->applyEngineCandidates(m_runId, {newChild(CandidateStatus::Testing)});
    QCOMPARE(toString(m_shown->find(10000)->status), toString(CandidateStatus::Testing));
    run.state = RunState::Stopped;
    m_shown->updateRun(run);
    QCOMPARE(toString(m_shown->find(10000)->status), toString(CandidateStatus::Cancelled));
    QCOMPARE(toString(m_model->candidate(m_model->indexOfCandidate(10000))->status),
             toString(CandidateStatus::Cancelled));
}

void TestShownRun::beamMovesBetweenCandidates()
{
    const qint64 root = m_shown->rootCandidateId();
    m_shown->applyEngineBeam(m_runId, {root});
    for (const Candidate &c : m_session->store()->candidates(m_runId)) {
        QCOMPARE(m_shown->find(c.id)->inBeam, c.id == root);
        QCOMPARE(m_model->candidate(m_model->indexOfCandidate(c.id))->inBeam, c.id == root);
    }
    QCOMPARE(m_model->beamIds(), QList<qint64>{root});
}

void TestShownRun::selectionFollowsItsCandidate()
{
    QSignalSpy selected(m_shown.get(), &ShownRun::candidateSelected);
    QSignalSpy cleared(m_shown.get(), &ShownRun::selectionCleared);
    m_shown->applyEngineCandidates(m_runId, {newChild(CandidateStatus::Correct)});
    m_shown->select(10000);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(toString(selected.last().at(0).value<Candidate>().status), toString(CandidateStatus::Correct));

    m_shown->applyEngineCandidates(m_runId, {newChild(CandidateStatus::Incorrect)});
    QCOMPARE(selected.count(), 2);
    QCOMPARE(toString(selected.last().at(0).value<Candidate>().status), toString(CandidateStatus::Incorrect));
    m_shown->applyEngineCandidates(m_runId, {*m_shown->find(m_shown->rootCandidateId())});
    QCOMPARE(selected.count(), 2); // another candidate changed

    m_shown->select(987654);
    QCOMPARE(cleared.count(), 1);
    QCOMPARE(selected.count(), 2);
}

QTEST_MAIN(TestShownRun)
#include "tst_shown_run.moc"
