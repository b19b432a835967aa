// StoreFollower against a real SQLite store written through another connection, as another process writes
// it: it reports new and changed runs with their drivers, only the candidates that changed, the candidates
// whose LLM calls or evaluation steps changed, deleted runs, and a driver that died.
#include "store/run_store.h"
#include "store/store_follower.h"

#include <QProcess>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;

// How long a test waits for the follower to report (it returns as soon as the report is there). Generous: on a
// loaded machine (a fresh machine building judges beside it) the first read of the store took over 5 s.
constexpr int s_waitMs = 30000;

class TestStoreFollower : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void firstLookReportsRunsAndDrivers();
    void sendsOnlyChangedCandidates();
    void callsAndStepsTouchTheirCandidates();
    void deletedRunsAndDeadDrivers();
    void requestsReportedWhenNewAndWhenSettled();

private:
    // Every change reported since the last clear, merged.
    QList<StoreChanges> m_changes;
    QList<Candidate> reportedCandidates() const;
    bool reportedRun(qint64 runId, RunSnapshot *out = nullptr) const;
    void startFollower();
    qint64 addRun(RunState state = RunState::Running);
    qint64 addCandidate(qint64 runId, qint64 parentId, CandidateStatus status);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<RunStore> m_writer;
    std::unique_ptr<StoreFollower> m_follower;
};

void TestStoreFollower::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    QString error;
    m_writer = RunStore::open(m_dir->filePath(QStringLiteral("runs.sqlite")), &error);
    QVERIFY2(m_writer, qPrintable(error));
    m_changes.clear();
}

void TestStoreFollower::cleanup()
{
    m_follower.reset();
    m_writer.reset();
    m_dir.reset();
}

void TestStoreFollower::startFollower()
{
    m_follower = std::make_unique<StoreFollower>(m_writer->path());
    connect(m_follower.get(), &StoreFollower::changed, this, [this](const StoreChanges &c) { m_changes << c; });
}

QList<Candidate> TestStoreFollower::reportedCandidates() const
{
    QList<Candidate> out;
    for (const StoreChanges &c : m_changes)
        out << c.candidates;
    return out;
}

bool TestStoreFollower::reportedRun(qint64 runId, RunSnapshot *out) const
{
    for (auto it = m_changes.crbegin(); it != m_changes.crend(); ++it)
        for (const RunSnapshot &s : it->runs)
            if (s.run.id == runId) {
                if (out)
                    *out = s;
                return true;
            }
    return false;
}

qint64 TestStoreFollower::addRun(RunState state)
{
    RunInfo run;
    run.target = QStringLiteral("fake");
    run.problem = QStringLiteral("kernel");
    run.state = state;
    run.metric = QStringLiteral("latency_ms");
    return m_writer->createRun(run);
}

qint64 TestStoreFollower::addCandidate(qint64 runId, qint64 parentId, CandidateStatus status)
{
    Candidate c;
    c.runId = runId;
    c.parentId = parentId;
    c.iteration = parentId ? 1 : 0;
    c.origin = parentId ? CandidateOrigin::Llm : CandidateOrigin::Root;
    c.status = status;
    c.code = QStringLiteral("void kernel() {}");
    return m_writer->addCandidate(c);
}

void TestStoreFollower::firstLookReportsRunsAndDrivers()
{
    const qint64 driven = addRun();
    QVERIFY(m_writer->acquireLease(driven, nullptr));
    const qint64 ended = addRun(RunState::Finished);
    startFollower();
    RunSnapshot snapshot;
    QTRY_VERIFY_WITH_TIMEOUT(reportedRun(driven, &snapshot), s_waitMs);
    QVERIFY(snapshot.lease.has_value());
    QVERIFY(snapshot.lease->alive);
    QVERIFY(snapshot.lease->isThisProcess());
    QVERIFY(!snapshot.interrupted());
    QVERIFY(reportedRun(ended, &snapshot));
    QVERIFY(!snapshot.lease.has_value());

    // A run created later is reported; the unchanged ones are not reported again.
    m_changes.clear();
    const qint64 later = addRun();
    QTRY_VERIFY_WITH_TIMEOUT(reportedRun(later), s_waitMs);
    QVERIFY(!reportedRun(driven));
    QVERIFY(!reportedRun(ended));

    // A run's new state is reported with its row.
    RunInfo run = *m_writer->run(later);
    run.state = RunState::Paused;
    run.iteration = 2;
    QVERIFY(m_writer->updateRun(run));
    QTRY_VERIFY_WITH_TIMEOUT(reportedRun(later, &snapshot) && snapshot.run.state == RunState::Paused, s_waitMs);
    QCOMPARE(snapshot.run.iteration, 2);
}

void TestStoreFollower::sendsOnlyChangedCandidates()
{
    const qint64 runId = addRun();
    const qint64 root = addCandidate(runId, 0, CandidateStatus::Correct);
    const qint64 first = addCandidate(runId, root, CandidateStatus::Coding);
    startFollower();
    // The view read the run's candidates now; rows written since then are the follower's to send (and those of
    // the two seconds before, which it sends again: the rows above are older).
    QTest::qWait(2100);
    m_follower->follow(runId, QDateTime::currentDateTimeUtc(), first);
    QTRY_VERIFY_WITH_TIMEOUT(!m_changes.isEmpty() && m_changes.last().followedRunId == runId, s_waitMs);
    m_changes.clear();

    const qint64 second = addCandidate(runId, root, CandidateStatus::Planning);
    QTRY_VERIFY_WITH_TIMEOUT(!reportedCandidates().isEmpty(), s_waitMs);
    QList<Candidate> got = reportedCandidates();
    QCOMPARE(got.size(), 1);
    QCOMPARE(got.first().id, second);
    QCOMPARE(toString(got.first().status), toString(CandidateStatus::Planning));

    // An update of one candidate sends that candidate only, at its new state.
    m_changes.clear();
    Candidate c = *m_writer->candidate(second);
    c.status = CandidateStatus::Correct;
    c.score = 42;
    QVERIFY(m_writer->updateCandidate(c));
    QTRY_VERIFY_WITH_TIMEOUT(!reportedCandidates().isEmpty(), s_waitMs);
    got = reportedCandidates();
    QCOMPARE(got.size(), 1);
    QCOMPARE(got.first().id, second);
    QCOMPARE(toString(got.first().status), toString(CandidateStatus::Correct));
    QCOMPARE(got.first().score, 42.0);

    // A new beam is a change of the candidates that enter and leave it.
    m_changes.clear();
    QVERIFY(m_writer->setBeam(runId, {second}));
    QTRY_VERIFY_WITH_TIMEOUT(!reportedCandidates().isEmpty(), s_waitMs);
    got = reportedCandidates();
    QCOMPARE(got.size(), 1);
    QCOMPARE(got.first().id, second);
    QVERIFY(got.first().inBeam);
    m_changes.clear();
    QVERIFY(m_writer->setBeam(runId, {root}));
    QTRY_VERIFY_WITH_TIMEOUT(reportedCandidates().size() >= 2, s_waitMs);
    QHash<qint64, bool> beam;
    for (const Candidate &candidate : reportedCandidates())
        beam.insert(candidate.id, candidate.inBeam);
    QCOMPARE(beam.value(root), true);
    QCOMPARE(beam.value(second), false);
    QVERIFY(!beam.contains(first));

    // A commit that touches no candidate sends none.
    m_changes.clear();
    QVERIFY(m_writer->requestState(runId, QStringLiteral("pause")));
    const qint64 other = addRun();
    QTRY_VERIFY_WITH_TIMEOUT(reportedRun(other), s_waitMs);
    QVERIFY(reportedCandidates().isEmpty());
}

void TestStoreFollower::callsAndStepsTouchTheirCandidates()
{
    const qint64 runId = addRun();
    const qint64 root = addCandidate(runId, 0, CandidateStatus::Correct);
    const qint64 child = addCandidate(runId, root, CandidateStatus::Coding);
    startFollower();
    m_follower->follow(runId, QDateTime::currentDateTimeUtc(), child);
    QTRY_VERIFY_WITH_TIMEOUT(!m_changes.isEmpty() && m_changes.last().followedRunId == runId, s_waitMs);
    QCOMPARE(m_changes.last().requestsInFlight, 0);
    m_changes.clear();

    LlmCall call;
    call.runId = runId;
    call.candidateId = child;
    call.phase = QStringLiteral("code");
    call.requestHash = QStringLiteral("h1");
    call.provider = QStringLiteral("vllm");
    call.model = QStringLiteral("m1");
    call.prompt = QStringLiteral("prompt");
    call.status = QStringLiteral("in_flight");
    call.id = m_writer->addLlmCall(call);
    QVERIFY(call.id > 0);
    QTRY_VERIFY_WITH_TIMEOUT(!m_changes.isEmpty() && m_changes.last().requestsInFlight == 1, s_waitMs);
    QVERIFY(m_changes.last().touchedCandidates.contains(child));
    QVERIFY(m_changes.last().touchedCalls.contains(call.id));
    // Looks without a commit (the drivers' liveness is checked every 2 s) report the same work in flight.
    QVERIFY(m_writer->acquireLease(runId, nullptr)); // a commit the follower sees, then none for a while
    QTest::qWait(StoreFollower::LeaseCheckIntervalMs + 700);
    for (const StoreChanges &c : std::as_const(m_changes))
        QCOMPARE(c.requestsInFlight, 1);

    m_changes.clear();
    call.status = QStringLiteral("ok");
    call.response = QStringLiteral("answer");
    QVERIFY(m_writer->completeLlmCall(call));
    QTRY_VERIFY_WITH_TIMEOUT(!m_changes.isEmpty() && m_changes.last().requestsInFlight == 0, s_waitMs);
    QVERIFY(m_changes.last().touchedCalls.contains(call.id));

    m_changes.clear();
    EvalResult result;
    StepResult step;
    step.name = QStringLiteral("compile");
    step.command = {QStringLiteral("g++")};
    result.steps << step;
    QVERIFY(m_writer->addEvaluation(child, result));
    QTRY_VERIFY_WITH_TIMEOUT(!m_changes.isEmpty() && m_changes.last().touchedCandidates.contains(child), s_waitMs);
    QVERIFY(!m_changes.last().touchedCandidates.contains(root));

    // Candidates being evaluated are counted as evaluations in flight.
    m_changes.clear();
    Candidate c = *m_writer->candidate(child);
    c.status = CandidateStatus::Compiling;
    QVERIFY(m_writer->updateCandidate(c));
    QTRY_VERIFY_WITH_TIMEOUT(!m_changes.isEmpty() && m_changes.last().evaluationsInFlight == 1, s_waitMs);
}

void TestStoreFollower::deletedRunsAndDeadDrivers()
{
    const qint64 doomed = addRun(RunState::Finished);
    const qint64 orphan = addRun(RunState::Running);
    // Its driver: a process that has ended since (a kill leaves the lease like this).
    QProcess gone;
    gone.start(QStringLiteral("true"), QStringList{});
    QVERIFY(gone.waitForStarted());
    const qint64 pid = gone.processId();
    QVERIFY(gone.waitForFinished());
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("other process"));
        db.setDatabaseName(m_writer->path());
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY(q.prepare(QStringLiteral("UPDATE runs SET lease_pid=?, lease_host=?, lease_heartbeat=? WHERE id=?")));
        q.addBindValue(pid);
        q.addBindValue(QSysInfo::machineHostName());
        q.addBindValue(QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs));
        q.addBindValue(orphan);
        QVERIFY(q.exec());
    }
    QSqlDatabase::removeDatabase(QStringLiteral("other process"));
    startFollower();
    RunSnapshot snapshot;
    QTRY_VERIFY_WITH_TIMEOUT(reportedRun(orphan, &snapshot), s_waitMs);
    QVERIFY(snapshot.lease.has_value());
    QCOMPARE(snapshot.lease->pid, pid);
    QVERIFY(!snapshot.lease->alive);
    QVERIFY(snapshot.interrupted());

    m_changes.clear();
    QVERIFY(m_writer->deleteRun(doomed));
    QTRY_VERIFY_WITH_TIMEOUT(!m_changes.isEmpty() && m_changes.last().removedRuns.contains(doomed), s_waitMs);
    QVERIFY(!m_changes.last().removedRuns.contains(orphan));
}

// Plans and edits handed to a driver: each is reported when it appears and once more when its driver took or
// refused it, not on every look in between; requests already pending when following starts are reported once settled.
void TestStoreFollower::requestsReportedWhenNewAndWhenSettled()
{
    const qint64 runId = addRun();
    QVERIFY(m_writer->acquireLease(runId, nullptr));
    QVERIFY(m_writer->lease(runId)->takesRequests);
    const qint64 root = addCandidate(runId, 0, CandidateStatus::Correct);
    RunRequest early;
    early.runId = runId;
    early.kind = RunRequest::Kind::Code;
    early.parentId = root;
    early.text = QStringLiteral("void kernel() { /* by hand */ }");
    const qint64 earlyId = m_writer->addRunRequest(early);
    QVERIFY(earlyId > 0);
    startFollower();
    QTRY_VERIFY_WITH_TIMEOUT(reportedRun(runId), s_waitMs);
    const auto reported = [this](qint64 id) {
        QList<RunRequest> out;
        for (const StoreChanges &c : std::as_const(m_changes))
            for (const RunRequest &r : c.requests)
                if (r.id == id)
                    out << r;
        return out;
    };
    QVERIFY(reported(earlyId).isEmpty());

    RunRequest plan;
    plan.runId = runId;
    plan.parentId = root;
    plan.text = QStringLiteral("Tile the loops.");
    const qint64 planId = m_writer->addRunRequest(plan);
    QTRY_COMPARE_WITH_TIMEOUT(reported(planId).size(), 1, s_waitMs);
    QVERIFY(reported(planId).first().isPending());
    QCOMPARE(reported(planId).first().text, plan.text);
    QCOMPARE(reported(planId).first().kind, RunRequest::Kind::Plan);

    const qint64 made = addCandidate(runId, root, CandidateStatus::Coding);
    QVERIFY(m_writer->settleRunRequest(planId, made, {}));
    QVERIFY(m_writer->settleRunRequest(earlyId, 0, QStringLiteral("the run has ended")));
    QTRY_COMPARE_WITH_TIMEOUT(reported(planId).size(), 2, s_waitMs);
    QTRY_COMPARE_WITH_TIMEOUT(reported(earlyId).size(), 1, s_waitMs);
    const RunRequest taken = reported(planId).last();
    QCOMPARE(taken.state, RunRequest::State::Taken);
    QCOMPARE(taken.candidateId, made);
    QCOMPARE(taken.driverPid, QCoreApplication::applicationPid());
    const RunRequest refused = reported(earlyId).first();
    QCOMPARE(refused.state, RunRequest::State::Refused);
    QCOMPARE(refused.reason, QStringLiteral("the run has ended"));

    // Nothing more to say about them.
    m_changes.clear();
    addCandidate(runId, root, CandidateStatus::Coding);
    m_follower->follow(runId, QDateTime::currentDateTimeUtc(), 0);
    QTRY_VERIFY_WITH_TIMEOUT(!reportedCandidates().isEmpty(), s_waitMs);
    QVERIFY(reported(planId).isEmpty() && reported(earlyId).isEmpty());
}

QTEST_GUILESS_MAIN(TestStoreFollower)
#include "tst_store_follower.moc"
