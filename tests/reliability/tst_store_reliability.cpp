// The store's side of reliability: a batch with a failed write is kept whole or not at all, the run lease,
// calls recorded before they are sent, answer reuse per run, and stores that must not be created.
#include "store/run_store.h"

#include <QProcess>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;
using namespace Qt::StringLiterals;

namespace {

RunInfo runningRun()
{
    RunInfo run;
    run.target = u"fake"_s;
    run.problem = u"kernel"_s;
    run.state = RunState::Running;
    return run;
}

Candidate rootOf(qint64 runId)
{
    Candidate c;
    c.runId = runId;
    c.origin = CandidateOrigin::Root;
    c.status = CandidateStatus::Correct;
    c.code = u"void kernel() {}"_s;
    return c;
}

LlmCall call(qint64 runId, const QString &hash, const QString &status)
{
    LlmCall c;
    c.runId = runId;
    c.phase = u"plan"_s;
    c.requestHash = hash;
    c.provider = u"vllm"_s;
    c.model = u"m1"_s;
    c.prompt = u"prompt"_s;
    c.status = status;
    c.usd = 0.25;
    return c;
}

// Writes a lease as another process would (raw SQL on a connection of its own).
bool writeLease(const QString &path, qint64 runId, qint64 pid, const QString &host,
                const QDateTime &heartbeat = QDateTime::currentDateTimeUtc())
{
    bool ok = false;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, u"other-process"_s);
        db.setDatabaseName(path);
        if (db.open()) {
            QSqlQuery q(db);
            q.prepare(u"UPDATE runs SET lease_pid=?, lease_host=?, lease_heartbeat=? WHERE id=?"_s);
            q.addBindValue(pid);
            q.addBindValue(host);
            q.addBindValue(heartbeat.toString(Qt::ISODateWithMs));
            q.addBindValue(runId);
            ok = q.exec() && q.numRowsAffected() == 1;
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(u"other-process"_s);
    return ok;
}

} // namespace

class TestStoreReliability : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

private Q_SLOTS:
    void failedWriteDoomsTheWholeBatch()
    {
        QString error;
        auto store = RunStore::open(m_dir.filePath(u"batch.sqlite"_s), &error);
        QVERIFY2(store, qPrintable(error));
        const qint64 runId = store->createRun(runningRun());
        QVERIFY(runId);
        QVERIFY(store->beginBatch());
        QVERIFY(store->addCandidate(rootOf(runId)));
        Candidate orphan = rootOf(runId + 100); // no such run: the foreign key refuses it
        QCOMPARE(store->addCandidate(orphan), qint64(0));
        QVERIFY(store->lastError().contains(u"FOREIGN KEY"_s));
        // Later writes of the doomed batch are refused, and the batch ends rolled back.
        QCOMPARE(store->addCandidate(rootOf(runId)), qint64(0));
        QVERIFY(!store->endBatch(true));
        QVERIFY(!store->inBatch());
        QCOMPARE(store->candidates(runId).size(), 0);
        // The next batch starts clean.
        QVERIFY(store->beginBatch());
        QVERIFY(store->addCandidate(rootOf(runId)));
        QVERIFY(store->endBatch(true));
        QCOMPARE(store->candidates(runId).size(), 1);
    }

    void leaseIsHeldByOneLiveProcess()
    {
        QString error;
        const QString path = m_dir.filePath(u"lease.sqlite"_s);
        auto store = RunStore::open(path, &error);
        QVERIFY2(store, qPrintable(error));
        const qint64 runId = store->createRun(runningRun());
        QVERIFY(!store->lease(runId));
        QVERIFY(store->isInterrupted(*store->run(runId)));
        QCOMPARE(store->displayState(*store->run(runId)), u"interrupted"_s);

        // Another live process on this host holds it.
        QProcess other;
        other.start(u"sleep"_s, {u"60"_s});
        QVERIFY(other.waitForStarted());
        QVERIFY(writeLease(path, runId, other.processId(), QSysInfo::machineHostName()));
        auto lease = store->lease(runId);
        QVERIFY(lease && lease->alive);
        QCOMPARE(lease->pid, other.processId());
        QVERIFY(!store->isInterrupted(*store->run(runId)));
        QCOMPARE(store->displayState(*store->run(runId)), u"running"_s);
        RunLease holder;
        QVERIFY(!store->acquireLease(runId, &holder));
        QCOMPARE(holder.pid, other.processId());
        QVERIFY(store->lastError().contains(u"pid %1"_s.arg(other.processId())));
        QVERIFY(!store->heartbeat(runId));

        // A live pid whose heartbeat stopped long ago is not the owner (its pid was reused after a kill).
        QVERIFY(writeLease(path, runId, other.processId(), QSysInfo::machineHostName(),
                           QDateTime::currentDateTimeUtc().addSecs(-600)));
        QVERIFY(!store->lease(runId)->alive);
        // On another host only the heartbeat tells.
        QVERIFY(writeLease(path, runId, 1, u"elsewhere.example"_s));
        QVERIFY(store->lease(runId)->alive);
        QVERIFY(writeLease(path, runId, 1, u"elsewhere.example"_s, QDateTime::currentDateTimeUtc().addSecs(-600)));
        QVERIFY(!store->lease(runId)->alive);
        QVERIFY(writeLease(path, runId, other.processId(), QSysInfo::machineHostName()));

        // It dies: its lease is taken over.
        other.kill();
        QVERIFY(other.waitForFinished());
        lease = store->lease(runId);
        QVERIFY(lease && !lease->alive);
        QCOMPARE(store->displayState(*store->run(runId)), u"interrupted"_s);
        QVERIFY(store->acquireLease(runId, &holder));
        lease = store->lease(runId);
        QVERIFY(lease && lease->alive);
        QCOMPARE(lease->pid, QCoreApplication::applicationPid());
        QVERIFY(store->heartbeat(runId));
        QVERIFY(store->releaseLease(runId));
        QVERIFY(!store->lease(runId));
    }

    // Once another process took the run's lease over, no write of that run through this store goes in: each checks
    // the lease in its own transaction (or its batch's), and says who drives the run now.
    void writesOfALostRunAreRefused()
    {
        const QString path = m_dir.filePath(u"lost-lease.sqlite"_s);
        QString error;
        auto store = RunStore::open(path, &error);
        QVERIFY2(store, qPrintable(error));
        RunInfo run = runningRun();
        run.id = store->createRun(run);
        QVERIFY(run.id);
        const qint64 rootId = store->addCandidate(rootOf(run.id));
        const qint64 callId = store->addLlmCall(call(run.id, u"h1"_s, u"in_flight"_s));
        QVERIFY(rootId && callId);
        // A run nobody leased is written as before (an import, a state recorded while no process drives it).
        run.iteration = 1;
        QVERIFY(store->updateRun(run));
        QVERIFY(store->acquireLease(run.id, nullptr));
        QVERIFY(store->checkLease(run.id));
        QVERIFY(!store->lostLease(run.id));
        run.iteration = 2;
        QVERIFY(store->updateRun(run));

        // Another live process takes it over (this one was stopped past the lease's timeout).
        QProcess other;
        other.start(u"sleep"_s, {u"60"_s});
        QVERIFY(other.waitForStarted());
        auto cleanup = qScopeGuard([&] {
            other.kill();
            other.waitForFinished();
        });
        QVERIFY(writeLease(path, run.id, other.processId(), QSysInfo::machineHostName()));

        const QString holder = u"pid %1 on %2"_s.arg(other.processId()).arg(QSysInfo::machineHostName());
        run.state = RunState::Paused;
        QVERIFY(!store->updateRun(run));
        QVERIFY2(store->lastError().contains(u"no longer holds the run's lease: "_s + holder),
                 qPrintable(store->lastError()));
        QCOMPARE(store->lostLease(run.id)->pid, other.processId());
        Candidate late = rootOf(run.id);
        late.origin = CandidateOrigin::Human;
        late.parentId = rootId;
        QCOMPARE(store->addCandidate(late), qint64(0));
        QVERIFY(!store->updateCandidate(*store->candidate(rootId)));
        QVERIFY(!store->setBeam(run.id, {rootId}));
        LlmCall answered = call(run.id, u"h1"_s, u"ok"_s);
        answered.id = callId;
        QVERIFY(!store->completeLlmCall(answered));
        QCOMPARE(store->addLlmCall(call(run.id, u"h2"_s, u"ok"_s)), qint64(0));
        EvalResult result;
        result.status = u"ok"_s;
        StepResult step;
        step.name = u"compile"_s;
        step.exitCode = 0;
        result.steps << step;
        QVERIFY(!store->addEvaluation(rootId, result));
        QVERIFY(!store->settleInFlightCalls(run.id));
        QVERIFY(!store->requestState(run.id, {}));
        QVERIFY(!store->heartbeat(run.id));
        QVERIFY(!store->checkLease(run.id));
        // A batch with one of them is rolled back whole.
        QVERIFY(store->beginBatch());
        QCOMPARE(store->addCandidate(late), qint64(0));
        QVERIFY(!store->endBatch(true));
        // Releasing leaves the new holder's lease alone.
        QVERIFY(store->releaseLease(run.id));

        auto reader = RunStore::open(path, &error);
        QVERIFY2(reader, qPrintable(error));
        const RunInfo stored = *reader->run(run.id);
        QCOMPARE(toString(stored.state), u"running"_s);
        QCOMPARE(stored.iteration, 2);
        QCOMPARE(reader->candidates(run.id).size(), 1);
        QVERIFY(!reader->candidate(rootId)->inBeam);
        QCOMPARE(reader->llmCalls(run.id).size(), 1);
        QCOMPARE(reader->llmCalls(run.id).first().status, u"in_flight"_s);
        QVERIFY(reader->evaluationSteps(rootId).isEmpty());
        QCOMPARE(reader->lease(run.id)->pid, other.processId());
    }

    void callsRecordedBeforeSendingBecomeUnconfirmed()
    {
        QString error;
        auto store = RunStore::open(m_dir.filePath(u"calls.sqlite"_s), &error);
        QVERIFY2(store, qPrintable(error));
        const qint64 runId = store->createRun(runningRun());
        const qint64 answered = store->addLlmCall(call(runId, u"h1"_s, u"in_flight"_s));
        const qint64 killed = store->addLlmCall(call(runId, u"h2"_s, u"in_flight"_s));
        QVERIFY(answered && killed);
        QCOMPARE(store->unconfirmedCalls(runId).size(), 2);
        QVERIFY(store->usageByModel(runId).isEmpty()); // nothing confirmed yet

        LlmCall done = call(runId, u"h1"_s, u"ok"_s);
        done.id = answered;
        done.response = u"the plan"_s;
        QVERIFY(store->completeLlmCall(done));
        QVERIFY(store->settleInFlightCalls(runId));
        const QList<LlmCall> unconfirmed = store->unconfirmedCalls(runId);
        QCOMPARE(unconfirmed.size(), 1);
        QCOMPARE(unconfirmed.first().id, killed);
        QCOMPARE(unconfirmed.first().status, u"unconfirmed"_s);
        QCOMPARE(unconfirmed.first().usd, 0.25);
        QCOMPARE(store->usageByModel(runId).size(), 1);
        QCOMPARE(store->usageByModel(runId).first().calls, qint64(1));
        QCOMPARE(store->cachedResponse(u"h1"_s, runId)->response, u"the plan"_s);
        QVERIFY(!store->cachedResponse(u"h2"_s, runId));
    }

    void answersAreReusedPerRun()
    {
        QString error;
        auto store = RunStore::open(m_dir.filePath(u"reuse.sqlite"_s), &error);
        QVERIFY2(store, qPrintable(error));
        const qint64 a = store->createRun(runningRun());
        const qint64 b = store->createRun(runningRun());
        QVERIFY(store->addLlmCall(call(a, u"same-request"_s, u"ok"_s)));
        QVERIFY(store->cachedResponse(u"same-request"_s, a));
        QVERIFY(!store->cachedResponse(u"same-request"_s, b));
        QVERIFY(store->cachedResponse(u"same-request"_s, 0)); // across runs, when asked
    }

    void missingStoresAreNotCreated()
    {
        const QString path = m_dir.filePath(u"absent/folder/s.sqlite"_s);
        QString error;
        QVERIFY(!RunStore::open(path, {.create = false, .createFolders = false, .allowReadOnly = true}, &error));
        QVERIFY2(error.contains(u"does not exist"_s), qPrintable(error));
        QVERIFY(!RunStore::open(path, {.create = true, .createFolders = false, .allowReadOnly = false}, &error));
        QVERIFY2(error.contains(u"does not exist"_s), qPrintable(error));
        QVERIFY(!QFileInfo::exists(m_dir.filePath(u"absent"_s)));
        QVERIFY(RunStore::open(path, &error)); // `run` creates what it needs
    }
};

QTEST_GUILESS_MAIN(TestStoreReliability)
#include "tst_store_reliability.moc"
